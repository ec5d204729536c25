package app

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

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
// comments allowed) and the EXIT STATUS section with the codes the command returns. The page's template
// is built only when it is printed (printHelp): building it for each of the ~100 commands of the tree
// was ~3 % of the CPU of every ctx-full process, which prints at most one page (bench/README.md
// "Start-up at the floor").
func withHelp(c *cli.Command, description string, examples []string, codes []exit) *cli.Command {
	c.Description = description
	helpPages.Lock()
	if helpPages.m == nil {
		helpPages.m = make(map[*cli.Command]helpPage, 128) // ~100 commands: no growth
	}
	helpPages.m[c] = helpPage{sub: len(c.Subcommands) > 0, examples: examples, codes: codes}
	helpPages.Unlock()
	c.CustomHelpTemplate = deferredHelp
	return c
}

// deferredHelp is the CustomHelpTemplate of a command whose page withHelp recorded: printHelp replaces
// it with the page's template (alone it renders nothing).
const deferredHelp = "{{/* ctx: the help page is built when printed */}}"

// helpPage is what withHelp was given for a command's page; sub is whether the command has subcommands.
type helpPage struct {
	sub      bool
	examples []string
	codes    []exit
}

// helpPages holds the recorded pages of the command trees of the Runs in progress (forgetHelp drops a
// tree's at the end of its Run).
var helpPages struct {
	sync.Mutex
	m map[*cli.Command]helpPage
}

// forgetHelp drops the recorded pages of cmds and their subcommands. The tree may hold cycles: urfave/cli
// appends its help command, whose subcommands include itself, to a command whose help it prints.
func forgetHelp(cmds []*cli.Command) {
	helpPages.Lock()
	defer helpPages.Unlock()
	seen := map[*cli.Command]bool{}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			if seen[c] {
				continue
			}
			seen[c] = true
			delete(helpPages.m, c)
			walk(c.Subcommands)
		}
	}
	walk(cmds)
}

// helpTemplate is the template of a recorded page: urfave/cli's own, the examples and the EXIT STATUS
// section.
func helpTemplate(p helpPage) string {
	base := cli.CommandHelpTemplate
	if p.sub {
		base = cli.SubcommandHelpTemplate
	}
	var b strings.Builder
	b.Grow(len(base) + 512)
	b.WriteString(base)
	if len(p.examples) > 0 {
		b.WriteString("\nEXAMPLES:\n")
		for _, ex := range p.examples {
			b.WriteString("   ")
			// The sections are literal text in the template: braces cannot start an action.
			if strings.Contains(ex, "{{") {
				ex = strings.ReplaceAll(ex, "{{", `{{"{{"}}`)
			}
			b.WriteString(ex)
			b.WriteByte('\n')
		}
	}
	writeExitSection(&b, p.codes)
	return b.String()
}

// printHelp is cli.HelpPrinter: a command's page recorded by withHelp is printed with its template.
func printHelp(next func(w io.Writer, templ string, data any)) func(w io.Writer, templ string, data any) {
	return func(w io.Writer, templ string, data any) {
		if c, ok := data.(*cli.Command); ok && templ == deferredHelp {
			helpPages.Lock()
			p, ok := helpPages.m[c]
			helpPages.Unlock()
			if ok {
				templ = helpTemplate(p)
			}
		}
		next(w, templ, data)
	}
}

func init() { cli.HelpPrinter = printHelp(cli.HelpPrinter) }
