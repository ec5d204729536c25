package app

import (
	"context"
	"fmt"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// ctx machines list and forget: the machine refs of a remote (docs/sync.md "One ref per machine").

func newMachinesCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:        "machines",
		Usage:       "the machines that push to the remote's refs/ctx/machines/",
		Subcommands: []*cli.Command{newMachinesListCmd(e), newMachinesForgetCmd(e)},
	}, "Every machine pushes its context branch to a ref of its own on the remote,\n"+
		"refs/ctx/machines/<id>, and every pull merges them all. list shows them as the last pull saw them;\n"+
		"forget removes the ref of a machine that is gone.",
		[]string{"ctx machines list", "ctx machines forget old-laptop-3f9a2c1b"},
		exits(ExitUsage, ExitNoStore))
}

// machinesListOptions are the flags of ctx machines list.
type machinesListOptions struct {
	Remote string
	JSON   bool
}

func newMachinesListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "list", Usage: "list the machine refs of the remote as the last pull saw them",
		Flags: []cli.Flag{remoteFlag, jsonFlag},
		Action: action(e, func(c *cli.Context) (machinesListOptions, error) {
			return machinesListOptions{Remote: c.String("remote"), JSON: c.Bool("json")}, nil
		}, runMachinesList),
	}, "Prints one machine a line: its id, its tip and the tip's date, \"merged\" when the context branch\n"+
		"holds the tip, and \"this machine\" for this one. It reads local refs only: ctx pull updates them.",
		[]string{"ctx machines list", "ctx machines list --remote upstream --json"},
		exits(ExitNoStore))
}

func runMachinesList(ctx context.Context, e *env, o machinesListOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	ms, err := s.Machines(ctx, o.Remote)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, ms, func() {
		w := table(e.stdout)
		for _, m := range ms {
			tip, date, state := "-", "-", ""
			if m.Tip != "" {
				tip, date = m.Tip[:12], m.Date.UTC().Format("2006-01-02 15:04")
				if m.Merged {
					state = "merged"
				} else {
					state = "not merged yet"
				}
			}
			if m.Self {
				state += " (this machine)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.ID, tip, date, state)
		}
		w.Flush()
	})
}

// machinesForgetOptions are the arguments of ctx machines forget.
type machinesForgetOptions struct {
	Remote string
	ID     string
}

func newMachinesForgetCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "forget", Usage: "delete a gone machine's ref on the remote", ArgsUsage: "ID",
		Flags: []cli.Flag{remoteFlag},
		Action: action(e, func(c *cli.Context) (machinesForgetOptions, error) {
			if c.NArg() != 1 {
				return machinesForgetOptions{}, usagef("usage: ctx machines forget ID (ctx machines list shows the ids)")
			}
			return machinesForgetOptions{Remote: c.String("remote"), ID: c.Args().First()}, nil
		}, runMachinesForget),
	}, "Deletes refs/ctx/machines/ID on the remote and its local copy, once the context branch holds its\n"+
		"tip (ctx pull first), and only while the remote's ref still names that tip: a machine that pushed\n"+
		"since keeps its ref (exit 5, saying what the ref names now: ctx pull, then decide again). A ref already\n"+
		"gone from the remote (another clone forgot it) is not an error: its local copy is deleted. This\n"+
		"machine's own id is refused (its next push would make it again).",
		[]string{"ctx machines forget old-laptop-3f9a2c1b", "ctx machines forget ci-runner-0a1b2c3d --remote upstream"},
		[]exit{{ExitFailure, "the context branch does not hold the machine's tip yet (ctx pull first)"},
			{ExitUsage, "usage error, an invalid id, or this machine's own"}, {ExitNotFound, "no such machine as of the last pull"},
			{ExitNoStore, ""}, {ExitTransfer, "the remote could not be reached, or its ref moved since the last pull"}})
}

func runMachinesForget(ctx context.Context, e *env, o machinesForgetOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	gone, err := s.ForgetMachine(ctx, o.Remote, o.ID, store.RemoteFromUser)
	if err != nil {
		return err
	}
	if gone {
		fmt.Fprintf(e.stdout, "forgot machine %s: %s%s was already gone from the remote; deleted the local copy\n", o.ID, store.MachineRefPrefix, o.ID)
		return nil
	}
	fmt.Fprintf(e.stdout, "forgot machine %s: deleted %s%s on the remote\n", o.ID, store.MachineRefPrefix, o.ID)
	return nil
}
