// Package app is the ctx command line: one file per noun, an options struct filled from flags and a run
// function that takes its IO streams, so tests run every command in-process. It is the only importer of
// urfave/cli; exit codes are mapped in one place (ExitCode).
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// Version is ctx's version, set at build time with -ldflags "-X github.com/ctx-dev/ctx/cmd/ctx/app.Version=...".
var Version = "dev"

// IO holds the streams a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Exit codes of ctx (one place): 0 success, 1 failure, 2 usage error (a bad flag or argument, an unknown
// command, a value the store refuses as invalid: a key, a status, a rating, a scope...), 3 entry not found,
// 4 no context store (run ctx init), 5 a transfer with the remote failed or was refused.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitNotFound    = 3
	ExitNoStore     = 4
	ExitTransfer    = 5
	exitInterrupted = 130
)

// usageError marks a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// ExitCode maps an error to ctx's exit code.
func ExitCode(err error) int {
	var ue *usageError
	var nf *store.NotFoundError
	var te *store.TransferError
	var amb *store.AmbiguousError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue), errors.As(err, &amb), errors.Is(err, store.ErrInvalidKey), errors.Is(err, store.ErrInvalid),
		errors.Is(err, store.ErrUnsafeRemote):
		return ExitUsage
	case errors.As(err, &nf):
		return ExitNotFound
	case errors.Is(err, store.ErrNotInitialized), errors.Is(err, store.ErrNotRepository):
		return ExitNoStore
	case errors.As(err, &te):
		return ExitTransfer
	}
	msg := err.Error()
	if strings.Contains(msg, "flag provided but not defined") || strings.Contains(msg, "Required flag") ||
		strings.HasPrefix(msg, "invalid value") {
		return ExitUsage
	}
	return ExitFailure
}

// Run runs ctx with args (args[0] is the program name) and returns the exit code. Errors are printed to
// io.Err as "ctx: <message>".
func Run(ctx context.Context, args []string, io IO) int {
	// What ctx prints comes from the store, and so from teammates, remotes and agents: it goes through a
	// sanitizer so that it cannot drive the terminal (see sanitizer). ctx mcp serve writes JSON-RPC to
	// the raw output.
	out, errOut := newSanitizer(io.Out), newSanitizer(io.Err)
	defer out.flush()
	defer errOut.flush()
	raw := io.Out
	io.Out, io.Err = out, errOut
	a := newApp(io)
	a.Metadata = map[string]any{rawOutKey: raw}
	// A write that committed succeeds; what failed after its commit is a warning on stderr (docs/locks.md).
	ctx, warnings := store.WithWarnings(ctx)
	err := a.RunContext(ctx, normalizeArgs(a, args))
	err = unknownCommand(a, args, err)
	if errors.Is(err, store.ErrSecret) {
		err = fmt.Errorf("%w with --allow-secret", err)
	}
	for _, w := range warnings.List() {
		fmt.Fprintf(io.Err, "ctx: warning: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(io.Err, "ctx: %v\n", err)
	}
	return ExitCode(err)
}

// rawOutKey is the App.Metadata key of the standard output without the sanitizer (for protocols).
const rawOutKey = "raw-out"

// rawOut is the standard output without the sanitizer.
func rawOut(c *cli.Context) io.Writer {
	if w, ok := c.App.Metadata[rawOutKey].(io.Writer); ok {
		return w
	}
	return c.App.Writer
}

// unknownCommand turns urfave/cli's "No help topic for 'x'" (an unknown command, exit 3 by urfave) into a
// usage error that points at the help of the command it was given to: `ctx bogus` says to see ctx --help,
// `ctx decision bogus` ctx decision --help.
func unknownCommand(a *cli.App, args []string, err error) error {
	if err == nil {
		return nil
	}
	name, ok := strings.CutPrefix(err.Error(), "No help topic for '")
	if !ok {
		return err
	}
	name = strings.TrimSuffix(name, "'")
	_, path, _ := walkCommands(a, args)
	what := "command"
	if len(path) > 1 {
		what = "subcommand"
	}
	return usagef("unknown %s %q: see %s --help", what, name, strings.Join(path, " "))
}

// helpName is the command line whose --help explains a usage error of c: "ctx" for the application
// itself, "ctx decision add" for a subcommand (urfave/cli names the root command "ctx" too, so the name is
// not simply prefixed).
func helpName(c *cli.Context) string {
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	return strings.Join(append([]string{c.App.Name}, names...), " ")
}

// globals are the flags every command takes.
var globals = []cli.Flag{
	&cli.StringFlag{Name: "C", Usage: "run as if ctx was started in `DIR`"},
	&cli.StringFlag{Name: "agent", EnvVars: []string{"CTX_AGENT"}, Usage: "agent `NAME` recorded in commits (Ctx-Agent); \"cli\" for a person"},
	&cli.StringFlag{Name: "session", EnvVars: []string{"CTX_SESSION"}, Usage: "session `ID` recorded in commits (Ctx-Session)"},
	&cli.BoolFlag{Name: "allow-secret", Usage: "write public entries even when they hold text that looks like a secret (a key, a token, a password); see docs/security.md"},
}

func newApp(io IO) *cli.App {
	a := &cli.App{
		Name:            "ctx",
		Usage:           "a git-native context store for coding agents",
		Version:         Version,
		Reader:          io.In,
		Writer:          io.Out,
		ErrWriter:       io.Err,
		Flags:           globals,
		HideHelpCommand: true,
		Before: func(c *cli.Context) error {
			if c.Bool("allow-secret") {
				c.Context = store.AllowSecrets(c.Context)
			}
			return nil
		},
		EnableBashCompletion: false,
		// urfave/cli v2 calls os.Exit on exit-coded errors unless this is set; Run maps errors instead.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usagef("%v (see %s --help)", err, helpName(c))
		},
		Commands: []*cli.Command{
			initCommand(),
			entryCommand(store.KnowledgeKind, "knowledge", "team knowledge: what an agent must know about this project"),
			entryCommand(store.ConventionKind, "convention", "team conventions: how this team works"),
			decisionCommand(),
			statusCommand(),
			commitCommand(),
			logCommand(),
			pullCommand(),
			pushCommand(),
			syncCommand(),
			remoteCommand(),
			importCommand(),

			mcpCommand(),
			configCommand(),
		},
	}
	a.Commands = append(a.Commands, extraCommands()...)
	setUsageErrors(a.Commands, a.OnUsageError)
	return a
}

// setUsageErrors gives every command without its own handler the application's usage-error handler: a
// bad flag is a usage error (exit 2) naming the command's help, not a help page on standard output.
func setUsageErrors(cmds []*cli.Command, f cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = f
		}
		setUsageErrors(c.Subcommands, f)
	}
}

// extraCommands are commands registered by other files of this package (hooks, integrations, model kinds).
func extraCommands() []*cli.Command {
	var out []*cli.Command
	for _, f := range registry {
		out = append(out, f())
	}
	return out
}

var registry []func() *cli.Command

// open opens the store of the directory given by -C (or the current one) with the actor of the flags.
func open(c *cli.Context) (*store.Store, error) {
	dir := c.String("C")
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	return store.Open(c.Context, dir, store.Actor{Agent: c.String("agent"), Session: c.String("session")})
}

// openInit opens the store and requires the context branch.
func openInit(c *cli.Context) (*store.Store, error) {
	s, err := open(c)
	if err != nil {
		return nil, err
	}
	ok, err := s.Initialized(c.Context)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, store.ErrNotInitialized
	}
	return s, nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON"}

// table returns a tabwriter for a list: cells separated by tabs, each column as wide as its longest cell
// plus two spaces. Call Flush when done.
func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// plural is "1 knowledge entry", "2 knowledge entries": n and the singular or the plural form.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// commitLine prints what a write did: the commit, or that nothing changed.
func commitLine(w io.Writer, what string, c *store.Committed) {
	if c == nil || !c.Changed() {
		fmt.Fprintf(w, "%s: unchanged, no commit\n", what)
		return
	}
	for _, sc := range store.Scopes {
		if h, ok := c.Commits[sc]; ok {
			fmt.Fprintf(w, "%s: committed %s (%s)\n", what, h.String()[:12], sc)
		}
	}
}
