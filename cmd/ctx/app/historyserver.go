package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/internal/lean"
	"github.com/urfave/cli/v2"
)

// historyServerOptions are the arguments of ctx history server start|stop|status|run|enable|disable.
type historyServerOptions struct {
	Verb  string
	Idle  time.Duration
	Index string
}

// newHistoryServerCmd is `ctx history server`: the warm search server of the history index
// (docs/architecture.md "The search server"), which the program ctx-search beside ctx runs.
func newHistoryServerCmd(e *env) *cli.Command {
	verb := func(name, usage string, idle bool, description string, examples []string) *cli.Command {
		flags := []cli.Flag{historyIndexFlag()}
		if idle {
			flags = append(flags, &cli.DurationFlag{Name: "idle", Value: 30 * time.Minute, Usage: "exit after `DURATION` without a search (0: never)"})
		}
		return withHelp(&cli.Command{
			Name:  name,
			Usage: usage,
			Flags: flags,
			Action: action(e, func(c *cli.Context) (historyServerOptions, error) {
				if c.NArg() > 0 {
					return historyServerOptions{}, usagef("usage: ctx history server %s [flags] (no arguments)", name)
				}
				o := historyServerOptions{Verb: name, Index: c.String("index")}
				if idle {
					if o.Idle = c.Duration("idle"); o.Idle < 0 {
						return o, usagef("--idle: a duration of zero or more")
					}
				}
				return o, nil
			}, runHistoryServer),
		}, description, examples, historyServerExits)
	}
	return withHelp(&cli.Command{
		Name:  "server",
		Usage: "start, stop, show or start automatically the warm search server that answers ctx search from memory",
		Subcommands: []*cli.Command{
			verb("start", "start the search server of this repository's index in the background", true,
				"Starts ctx-search --server run for this repository's index in its own session and returns once it\n"+
					"listens on search.sock in the index folder. Nothing is started when one already runs.",
				[]string{"ctx history server start", "ctx history server start --idle 2h"}),
			verb("stop", "stop the search server", false,
				"Renames the server's socket aside (search.stopped), which makes it exit (its log says who stopped it),\n"+
					"and waits until it has.",
				[]string{"ctx history server stop"}),
			verb("status", "say whether a search server runs, with its pid, socket and log, and whether it starts automatically", false,
				"Says whether a search server runs for this repository's index, with its pid, socket and log, and\n"+
					"whether the automatic start is on (ctx history server enable).",
				[]string{"ctx history server status"}),
			verb("enable", "start the search server now and on any search that finds none running", false,
				"Turns the automatic start on for this repository's index, as git's core.fsmonitor starts its daemon:\n"+
					"writes search.auto in the index folder and starts the server (as start does). From then on a\n"+
					"search that finds no server running starts one in the background and answers by itself; the\n"+
					"server still exits after 30 minutes without a search. CTX_SEARCH_SERVER_AUTO=0 in the environment\n"+
					"of ctx search turns it off for that process.",
				[]string{"ctx history server enable"}),
			verb("disable", "stop the search server and its automatic start", false,
				"Turns the automatic start off for this repository's index (removes search.auto) and stops the\n"+
					"server (as stop does).",
				[]string{"ctx history server disable"}),
			verb("run", "run the search server in the foreground", true,
				"Runs the search server in this process until it is idle for --idle, its socket is removed, ctx is\n"+
					"reinstalled or it gets SIGINT or SIGTERM; it says on standard error when it started and why it stopped.",
				[]string{"ctx history server run --idle 0"}),
		},
	}, "ctx search starts two programs and opens the index at every call. A search server keeps the index and\n"+
		"the context store's search copy open and answers ctx search over a Unix socket in the index folder\n"+
		"(search.sock, this user's only), as git's fsmonitor daemon answers git status. It is opt-in: started\n"+
		"by ctx history server start, or by a search once ctx history server enable turned the automatic start\n"+
		"on, it exits after --idle without a search (30 minutes), when its socket is removed, when ctx is\n"+
		"reinstalled and on SIGTERM; ctx search falls back to running the search itself whenever no server of\n"+
		"the same build answers. Its log is search.log beside the socket.",
		[]string{"ctx history server start", "ctx history server start --idle 2h", "ctx history server status", "ctx history server stop",
			"ctx history server enable", "ctx history server disable"},
		nil)
}

// historyServerExits are the exit codes of ctx history server's commands.
var historyServerExits = []exit{
	{code: ExitUsage, when: "usage error: an argument, a bad --idle"},
	{code: ExitNoStore, when: "not a git repository (and no --index)"},
}

// runHistoryServer runs `ctx-search --server VERB INDEXDIR [--idle D]` (the program beside ctx-full) with
// this command's standard output; its error message becomes this command's.
func runHistoryServer(ctx context.Context, e *env, o historyServerOptions) error {
	dir, err := e.historyDir(ctx, o.Index)
	if err != nil {
		return err
	}
	path, err := lean.Beside("ctx-search")
	if err != nil {
		return fmt.Errorf("the search server is the program ctx-search, installed beside ctx by make install: %w", err)
	}
	args := []string{"--server", o.Verb, dir}
	if o.Verb == "start" || o.Verb == "run" {
		args = append(args, "--idle", o.Idle.String())
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var errb bytes.Buffer
	cmd.Stdout = e.stdout
	cmd.Stderr = &errb
	if o.Verb == "run" {
		cmd.Stderr = e.stderr // the server's log
	}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if msg := strings.TrimSpace(strings.TrimPrefix(errb.String(), "ctx: ")); msg != "" && errors.As(err, &ee) {
			return errors.New(msg)
		}
		return fmt.Errorf("search server: %w", err)
	}
	return nil
}
