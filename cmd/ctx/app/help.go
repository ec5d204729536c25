package app

import (
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// exitMeaning is what each exit code means in an EXIT STATUS section, unless a command says more.
var exitMeaning = map[int]string{
	ExitOK:          "success",
	ExitFailure:     "failure (git, the file system, a lock held by another process...)",
	ExitUsage:       "usage error: a bad flag, argument or value",
	ExitNotFound:    "the entry does not exist",
	ExitNoStore:     "no context store here: not a git repository, or ctx init not run",
	ExitTransfer:    "the transfer with the remote failed or was refused",
	exitInterrupted: "interrupted (SIGINT, SIGTERM)",
}

// exit is one line of an EXIT STATUS section: a code and, when it says more than exitMeaning, when.
type exit struct {
	code int
	when string
}

// exits are the lines for codes with their usual meaning.
func exits(codes ...int) []exit {
	out := make([]exit, 0, len(codes))
	for _, c := range codes {
		out = append(out, exit{code: c})
	}
	return out
}

// appExits are the exit codes of ctx as a whole (ctx --help).
var appExits = exits(ExitOK, ExitFailure, ExitUsage, ExitNotFound, ExitNoStore, ExitTransfer, exitInterrupted)

// exitSection is the EXIT STATUS section of a help page: the codes given, and 0, 1 and 130 that every
// command may return, in numeric order.
func exitSection(list []exit) string {
	var b strings.Builder
	writeExitSection(&b, list)
	return b.String()
}

// writeExitSection writes exitSection(list) to b. It runs for every command of every ctx process (the
// help pages are built with the command tree), so it avoids maps, sorting packages and fmt: a list has a
// handful of codes.
func writeExitSection(b *strings.Builder, list []exit) {
	all := make([]exit, 0, 3+len(list))
	for _, x := range append(exits(ExitOK, ExitFailure, exitInterrupted), list...) {
		i := slices.IndexFunc(all, func(y exit) bool { return y.code == x.code })
		switch {
		case i < 0:
			all = append(all, x)
		case x.when != "":
			all[i] = x
		}
	}
	slices.SortFunc(all, func(x, y exit) int { return x.code - y.code })
	b.WriteString("\nEXIT STATUS:\n")
	for _, x := range all {
		when := x.when
		if when == "" {
			when = exitMeaning[x.code]
		}
		if strings.Contains(when, "{{") {
			when = strings.ReplaceAll(when, "{{", `{{"{{"}}`)
		}
		code := strconv.Itoa(x.code)
		b.WriteString("   ")
		b.WriteString(code)
		b.WriteString("     "[:max(2, 5-len(code))])
		b.WriteString(when)
		b.WriteByte('\n')
	}
}

// withHelp completes c's help page: the description, the examples (command lines, one a line, "#"
// comments allowed) and the EXIT STATUS section with the codes the command returns.
func withHelp(c *cli.Command, description string, examples []string, codes []exit) *cli.Command {
	c.Description = description
	base := cli.CommandHelpTemplate
	if len(c.Subcommands) > 0 {
		base = cli.SubcommandHelpTemplate
	}
	var b strings.Builder
	b.Grow(len(base) + 512)
	b.WriteString(base)
	if len(examples) > 0 {
		b.WriteString("\nEXAMPLES:\n")
		for _, ex := range examples {
			b.WriteString("   ")
			// The sections are literal text in the template: braces cannot start an action.
			if strings.Contains(ex, "{{") {
				ex = strings.ReplaceAll(ex, "{{", `{{"{{"}}`)
			}
			b.WriteString(ex)
			b.WriteByte('\n')
		}
	}
	writeExitSection(&b, codes)
	c.CustomHelpTemplate = b.String()
	return c
}
