package app

import (
	"fmt"
	"sort"
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
	byCode := map[int]exit{}
	for _, x := range append(exits(ExitOK, ExitFailure, exitInterrupted), list...) {
		if _, ok := byCode[x.code]; !ok || x.when != "" {
			byCode[x.code] = x
		}
	}
	codes := make([]int, 0, len(byCode))
	for c := range byCode {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var b strings.Builder
	b.WriteString("\nEXIT STATUS:\n")
	for _, c := range codes {
		when := byCode[c].when
		if when == "" {
			when = exitMeaning[c]
		}
		fmt.Fprintf(&b, "   %-3d  %s\n", c, when)
	}
	return b.String()
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
	if len(examples) > 0 {
		b.WriteString("\nEXAMPLES:\n")
		for _, ex := range examples {
			fmt.Fprintf(&b, "   %s\n", ex)
		}
	}
	b.WriteString(exitSection(codes))
	// The sections are literal text in the template: braces cannot start an action.
	c.CustomHelpTemplate = base + strings.ReplaceAll(b.String(), "{{", `{{"{{"}}`)
	return c
}
