package app

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// exitSection lists 0, 1 and 130 with the codes given, in numeric order, a command's own words replacing
// the usual meaning, aligned as `%-3d  %s` would.
func TestExitSectionFormat(t *testing.T) {
	got := exitSection([]exit{{code: ExitNotFound, when: "no such {{entry}}"}, {code: ExitUsage}, {code: ExitFailure}})
	want := "\nEXIT STATUS:\n" +
		"   0    success\n" +
		"   1    " + exitMeaning[ExitFailure] + "\n" +
		"   2    " + exitMeaning[ExitUsage] + "\n" +
		"   3    no such {{\"{{\"}}entry}}\n" +
		"   130  " + exitMeaning[exitInterrupted] + "\n"
	if got != want {
		t.Errorf("exitSection:\n%q\nwant\n%q", got, want)
	}
}

// A command's help page is built when printed (withHelp records its parts, printHelp builds the
// template): the page has the examples and the EXIT STATUS section, literal braces of an example stay
// literal, and Run forgets the pages of its command tree when it returns (no growth across Runs).
func TestHelpPageBuiltWhenPrinted(t *testing.T) {
	// "knowledge get help": urfave/cli's help command, which it appends to the tree, is a cycle.
	for _, args := range [][]string{{"ctx", "knowledge", "set", "--help"}, {"ctx", "hooks", "--help"}, {"ctx", "knowledge", "get", "help"}} {
		// Other tests of the package build apps without Run (newApp): their pages stay recorded; this
		// Run must leave the record as it found it.
		helpPages.Lock()
		before := len(helpPages.m)
		helpPages.Unlock()
		var out, errb bytes.Buffer
		if code := Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		help := out.String()
		for _, want := range []string{"EXAMPLES:\n   ctx ", "EXIT STATUS:\n   0    success\n", "   130  "} {
			if !strings.Contains(help, want) {
				t.Errorf("%v lacks %q:\n%s", args, want, help)
			}
		}
		if strings.Contains(help, "ctx: the help page is built") {
			t.Errorf("%v printed the placeholder template:\n%s", args, help)
		}
		helpPages.Lock()
		n := len(helpPages.m)
		helpPages.Unlock()
		if n != before {
			t.Errorf("after Run(%v), %d help pages are recorded, %d before it", args, n, before)
		}
	}
	c := withHelp(&cli.Command{Name: "probe"}, "d", []string{"ctx probe {{x}}"}, exits(ExitUsage))
	defer forgetHelp([]*cli.Command{c})
	var b bytes.Buffer
	printHelp(func(w io.Writer, templ string, _ any) { _, _ = io.WriteString(w, templ) })(&b, c.CustomHelpTemplate, c)
	if got := b.String(); !strings.Contains(got, `ctx probe {{"{{"}}x}}`) || !strings.Contains(got, "\n   2    ") ||
		!strings.HasPrefix(got, cli.CommandHelpTemplate) {
		t.Errorf("template of a recorded page:\n%s", got)
	}
}
