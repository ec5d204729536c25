package app

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func newStateCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "state",
		Usage: "the active state: current task, blockers, progress",
		Subcommands: []*cli.Command{
			newStateShowCmd(e),
			newStateSetCmd(e),
			newStateClearCmd(e),
		},
	}, "The active state (state.json): what the agents are doing now,\n"+
		"what blocks them and how far they got, with who updated it last.",
		[]string{"ctx state set current_task 'migrate the auth service'", "ctx state set blockers 'waiting for review'", "ctx state show"},
		exits(ExitUsage, ExitNoStore))
}

// stateShowOptions are the flags of ctx state show.
type stateShowOptions struct{ JSON bool }

func newStateShowCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "show", Usage: "show the state", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (stateShowOptions, error) {
			return stateShowOptions{JSON: c.Bool("json")}, nil
		}, runStateShow),
	}, "Prints the fields of the state that are set, one a line, and who updated it last.",
		[]string{"ctx state show", "ctx state show --json"},
		exits(ExitNoStore))
}

func runStateShow(ctx context.Context, e *env, o stateShowOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	st, err := v.GetState(ctx)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, st, func() { printState(e.stdout, st) })
}

// stateSetOptions are the arguments of ctx state set: Field is current_task (or task), blockers or
// progress, Patch the change.
type stateSetOptions struct {
	Field string
	Patch store.StatePatch
}

func newStateSetCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "set",
		Usage:     "set one field: current_task TEXT | blockers [B...] | progress KEY=VALUE...",
		ArgsUsage: "FIELD VALUE...",
		Action: action(e, func(c *cli.Context) (stateSetOptions, error) {
			if c.NArg() < 1 {
				return stateSetOptions{}, usagef("usage: ctx state set current_task TEXT | blockers [B...] | progress KEY=VALUE...")
			}
			args := c.Args().Slice()
			o := stateSetOptions{Field: args[0]}
			switch args[0] {
			case "current_task", "task":
				t := strings.Join(args[1:], " ")
				o.Patch.CurrentTask = &t
			case "blockers":
				b := append([]string{}, args[1:]...)
				o.Patch.Blockers = &b
			case "progress":
				m := map[string]string{}
				for _, kv := range args[1:] {
					k, val, ok := strings.Cut(kv, "=")
					if !ok {
						return stateSetOptions{}, usagef("progress takes KEY=VALUE pairs, got %q", kv)
					}
					m[k] = val
				}
				o.Patch.Progress = &m
			default:
				return stateSetOptions{}, usagef("unknown state field %q: use current_task, blockers or progress", args[0])
			}
			return o, nil
		}, runStateSet),
	}, "Sets one field of the state: the current task (the words joined), the blockers (one an argument; none\n"+
		"clears them) or the progress (KEY=VALUE pairs, replacing the whole map).",
		[]string{"ctx state set current_task 'migrate the auth service'", "ctx state set blockers 'CI is red' 'waiting for review'",
			"ctx state set progress tests=green docs=todo", "ctx state set blockers   # no blockers"},
		exits(ExitUsage, ExitNoStore))
}

func runStateSet(ctx context.Context, e *env, o stateSetOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	_, res, err := s.UpdateState(ctx, o.Patch)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "state "+o.Field, res)
	return nil
}

// stateClearOptions are the (no) arguments of ctx state clear.
type stateClearOptions struct{}

func newStateClearCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "clear", Usage: "reset the state and empty the ephemeral scope",
		Action: action(e, func(*cli.Context) (stateClearOptions, error) {
			return stateClearOptions{}, nil
		}, runStateClear),
	}, "Resets the state and removes every entry of the ephemeral scope, in one commit.",
		[]string{"ctx state clear"},
		exits(ExitNoStore))
}

func runStateClear(ctx context.Context, e *env, _ stateClearOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	res, err := s.ClearState(ctx)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "state cleared", res)
	return nil
}

// printState prints the fields of the state that are set, one a line; "no state yet" when none is.
func printState(w io.Writer, st store.ActiveState) {
	n := 0
	line := func(label, format string, a ...any) {
		fmt.Fprintf(w, "%-14s"+format+"\n", append([]any{label + ":"}, a...)...)
		n++
	}
	if st.CurrentTask != "" {
		line("current task", "%s", st.CurrentTask)
	}
	if len(st.Blockers) > 0 {
		line("blockers", "%s", strings.Join(st.Blockers, "; "))
	}
	keys := make([]string, 0, len(st.Progress))
	for k := range st.Progress {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line("progress", "%s = %s", k, st.Progress[k])
	}
	if st.LastAgent != "" || st.LastMachine != "" || st.UpdatedAt != "" {
		last := st.LastAgent
		if last == "" {
			last = "unknown agent"
		}
		if st.LastMachine != "" {
			last += " on " + st.LastMachine
		}
		if st.UpdatedAt != "" {
			last += " at " + st.UpdatedAt
		}
		line("last update", "%s", last)
	}
	if n == 0 {
		fmt.Fprintln(w, "no state yet: set it with ctx state set current_task TEXT")
	}
}
