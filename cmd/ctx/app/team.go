package app

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
)

func newTeamCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "team",
		Usage: "the team members listed in the manifest",
		Subcommands: []*cli.Command{
			newTeamAddCmd(e),
			newTeamListCmd(e),
			newTeamTokenCmd(e),
		},
	}, "The members of the team, listed in the manifest (manifest.json) of the context branch.",
		[]string{"ctx team add ada laptop", "ctx team list"},
		exits(ExitUsage, ExitNoStore))
}

// teamAddOptions are the arguments of ctx team add.
type teamAddOptions struct{ Name, Machine string }

func newTeamAddCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "add", Usage: "add a member", ArgsUsage: "NAME [MACHINE]",
		Action: action(e, func(c *cli.Context) (teamAddOptions, error) {
			if c.NArg() < 1 || c.NArg() > 2 {
				return teamAddOptions{}, usagef("usage: ctx team add NAME [MACHINE]")
			}
			return teamAddOptions{Name: c.Args().Get(0), Machine: c.Args().Get(1)}, nil
		}, runTeamAdd),
	}, "Adds the member NAME to the manifest, with the MACHINE they work on when given.",
		[]string{"ctx team add ada", "ctx team add ada laptop"},
		exits(ExitUsage, ExitNoStore))
}

func runTeamAdd(ctx context.Context, e *env, o teamAddOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	_, res, err := s.AddMember(ctx, o.Name, o.Machine)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "member "+o.Name, res)
	return nil
}

// teamListOptions are the flags of ctx team list.
type teamListOptions struct{ JSON bool }

func newTeamListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "list", Usage: "list members", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (teamListOptions, error) {
			return teamListOptions{JSON: c.Bool("json")}, nil
		}, runTeamList),
	}, "Lists the members: name, machine and when they were added.",
		[]string{"ctx team list", "ctx team list --json"},
		exits(ExitNoStore))
}

func runTeamList(ctx context.Context, e *env, o teamListOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	list, err := v.ListMembers(ctx)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, list, func() {
		tw := table(e.stdout)
		for _, m := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", oneCell(m.Name), oneCell(m.Machine), oneCell(m.Added))
		}
		tw.Flush()
	})
}
