// Package app is the ctx command line, in one shape (docs/layout.md maps every command to its code):
//
//   - one file per command family (init.go, entries.go, decisions.go, sync.go, ...);
//   - each leaf command is a constructor, newXCmd(e *env), whose Action maps flags and arguments to an
//     options struct (usage errors are returned from there, typed) and calls runX(ctx, e, opts), which
//     holds the logic;
//   - env carries what a command runs with: the IO streams, the global flags, the lazily opened store
//     and the progress terminal, in place of package globals;
//   - commands lists every top-level command; ExitCode maps errors to exit codes in one place.
//
// It is the only importer of urfave/cli.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

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

// Main runs ctx with the process's arguments and standard streams, stopping at SIGINT or SIGTERM, and
// returns the exit code (the body of the ctx executable, and of the in-process ctx of the test scripts).
func Main() int {
	deferGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels ctx, which every wait, git process and scan of ctx checks; a second one
	// ends the process at once (the default action restored), should a system call not return (a read of
	// a network file system that hangs).
	go func() {
		<-ctx.Done()
		stop()
	}()
	return Run(ctx, os.Args, IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

// Run runs ctx with args (args[0] is the program name) and returns the exit code (see ExitCode). Errors
// are printed to io.Err as "ctx: <message>", warnings of a write that committed as "ctx: warning: ...".
// One Run at a time per process: urfave/cli writes into the flag definitions (its own help flag
// included) as it parses.
func Run(ctx context.Context, args []string, io IO) int {
	e := newEnv(io)
	e.args = args
	defer e.flush()
	defer e.close()
	a := newApp(e)
	defer forgetHelp(a.Commands)
	// A write that committed succeeds; what failed after its commit is a warning on stderr (docs/locks.md).
	ctx, warnings := store.WithWarnings(ctx)
	err := a.RunContext(ctx, normalizeArgs(a, args))
	if err == nil {
		err = e.unknown
	}
	// Output that could not be written (a full disk, a closed file) is a failure, whatever the command
	// returned: `ctx log > file` on a full disk must not exit 0 with a cut file.
	e.flush()
	if err == nil {
		if werr := e.flushers[0].failed(); werr != nil {
			err = werr // "write /dev/stdout: no space left on device"
		}
	}
	if err == nil && ctx.Err() != nil && !e.signalStops {
		// A signal came while the command finished: what it committed stands (the warnings say what was
		// left undone, e.g. a refresh the next command completes), but the run was interrupted: exit 130,
		// as a shell expects of a command stopped by Ctrl-C.
		err = fmt.Errorf("what was committed before it stands, see the warnings: %w", context.Canceled)
	}
	if errors.Is(err, store.ErrSecret) {
		err = fmt.Errorf("%w with --allow-secret", err)
	}
	for _, w := range warnings.List() {
		fmt.Fprintf(e.stderr, "ctx: warning: %s\n", w)
	}
	switch {
	case err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// SIGINT or SIGTERM: say so in words (the error itself reads "context canceled").
		if msg := err.Error(); msg != context.Canceled.Error() {
			fmt.Fprintf(e.stderr, "ctx: interrupted (%s)\n", strings.TrimSuffix(msg, ": "+context.Canceled.Error()))
		} else {
			fmt.Fprintln(e.stderr, "ctx: interrupted")
		}
	case err != nil:
		fmt.Fprintf(e.stderr, "ctx: %v\n", err)
	}
	return ExitCode(err)
}

// commands are ctx's top-level commands, in the order of ctx --help.
func commands(e *env) []*cli.Command {
	return []*cli.Command{
		newInitCmd(e),
		newEntryCmd(e, store.KnowledgeKind, "knowledge", "team knowledge: what an agent must know about this project"),
		newEntryCmd(e, store.ConventionKind, "convention", "team conventions: how this team works"),
		newDecisionCmd(e),
		newStatusCmd(e),
		newCommitCmd(e),
		newRestoreCmd(e),
		newLogCmd(e),
		newPullCmd(e),
		newPushCmd(e),
		newSyncCmd(e),
		newRemoteCmd(e),
		newMachinesCmd(e),
		newImportCmd(e),
		newMCPCmd(e),
		newConfigCmd(e),
		newStateCmd(e),
		newSessionCmd(e),
		newSkillCmd(e),
		newActivityCmd(e),
		newTeamCmd(e),
		newConflictsCmd(e),
		newResolveCmd(e),
		newHooksCmd(e),
		newDoctorCmd(e),
		newMigrateCmd(e),
		newExportCmd(e),
		newIntegrationsCmd(e),
		newDocsCmd(e),
		newAdaptersCmd(e),
		newHistoryCmd(e),
		historyAlias(newHistorySourcesCmd(e), "sources"),
		historyAlias(newHistorySearchCmd(e), "search"),
		historyAlias(newHistoryShowCmd(e), "show"),
		historyAlias(newHistoryListCmd(e), "list"),
		newBlameCmd(e),
	}
}

// historyAlias is a ctx history subcommand also at the top level, under the names of the agent-history
// CLI contract (ctx sources, ctx search, ctx show, ctx list; docs/history.md "CLI").
func historyAlias(c *cli.Command, name string) *cli.Command {
	c.Usage += " (= ctx history " + c.Name + ")"
	c.Name = name
	return c
}

// globals are the flags every command takes (read into env before any command runs).
var globals = []cli.Flag{
	&cli.StringFlag{Name: "C", Usage: "run as if ctx was started in `DIR`"},
	&cli.StringFlag{Name: "agent", EnvVars: []string{"CTX_AGENT"}, Usage: "agent `NAME` recorded in commits (Ctx-Agent); \"cli\" for a person"},
	&cli.StringFlag{Name: "session", EnvVars: []string{"CTX_SESSION"}, Usage: "session `ID` recorded in commits (Ctx-Session)"},
	&cli.BoolFlag{Name: "allow-secret", Usage: "write public entries even when they hold text that looks like a secret (a key, a token, a password); see docs/security.md"},
}

func newApp(e *env) *cli.App {
	usageError := func(c *cli.Context, err error, _ bool) error {
		return usagef("%v (see %s --help)", err, helpName(c))
	}
	a := &cli.App{
		Name:            "ctx",
		Usage:           "a git-native context store for coding agents",
		Version:         Version,
		Reader:          e.stdin,
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		Flags:           globals,
		HideHelpCommand: true,
		Before: func(c *cli.Context) error {
			e.dir = c.String("C")
			e.actor = store.Actor{Agent: c.String("agent"), Session: c.String("session")}
			// Agent and session names follow the key rules (docs/format.md "Keys and names"): they become
			// trailers of every commit, which a space or a line break would garble.
			for _, f := range []struct{ flag, v string }{{"agent", e.actor.Agent}, {"session", e.actor.Session}} {
				if f.v == "" {
					continue
				}
				if err := store.ValidKey(f.v); err != nil {
					return usagef("--%s (or CTX_%s): %v", f.flag, strings.ToUpper(f.flag), err)
				}
			}
			e.allowSecret = c.Bool("allow-secret")
			return nil
		},
		EnableBashCompletion: false,
		// urfave/cli v2 calls os.Exit on exit-coded errors unless this is set; Run maps errors instead.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageError,
		// An unknown command is a usage error pointing at the help of the command it was given to: `ctx
		// bogus` says to see ctx --help, `ctx decision bogus` ctx decision --help.
		CommandNotFound: func(c *cli.Context, name string) {
			what := "command"
			if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
				what = "subcommand"
			}
			e.unknown = usagef("unknown %s %q: see %s --help", what, name, helpName(c))
		},
		CustomAppHelpTemplate: cli.AppHelpTemplate + exitSection(appExits),
		Commands:              commands(e),
	}
	setUsageErrors(a.Commands, usageError)
	return a
}

// setUsageErrors gives every command the application's usage-error handler: a bad flag is a usage error
// (exit 2) naming the command's help, not a help page on standard output.
func setUsageErrors(cmds []*cli.Command, f cli.OnUsageErrorFunc) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = f
		}
		setUsageErrors(c.Subcommands, f)
	}
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

// action is the Action of a leaf command: parse maps the command line to the options (returning usage
// errors), run does the work with the store and streams of e. When e.capture is set (tests), the options
// are handed to it instead of running.
func action[O any](e *env, parse func(c *cli.Context) (O, error), run func(ctx context.Context, e *env, opts O) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		opts, err := parse(c)
		if err != nil {
			return err
		}
		if e.capture != nil {
			e.capture(opts)
			return nil
		}
		return run(e.context(c.Context), e, opts)
	}
}
