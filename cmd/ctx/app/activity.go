package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func newActivityCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "activity",
		Usage: "the team pulse: who is doing what, with which agent, on which machine",
		Subcommands: []*cli.Command{
			newActivityCheckInCmd(e),
			newActivityIntentCmd(e),
			newActivityCheckOutCmd(e),
			newActivityListCmd(e),
		},
	}, "One activity entry per member, agent and machine (activity/): the task, the branch, the files being\n"+
		"worked on and announced intents, pushed so that teammates see who is doing what.",
		[]string{"ctx activity check-in 'migrate auth' --issue '#42'", "ctx activity list", "ctx activity check-out"},
		exits(ExitUsage, ExitNoStore))
}

// activityCheckInOptions are the arguments of ctx activity check-in.
type activityCheckInOptions struct {
	CheckIn   store.CheckIn // Branch is set by the run function when BranchSet is false
	BranchSet bool
}

func newActivityCheckInCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "check-in", Usage: "say what you (or your agent) are working on", ArgsUsage: "TASK",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "issue", Usage: "issue reference, e.g. #42"},
			&cli.StringFlag{Name: "availability", Usage: "online, working, idle, asleep, away or offline"},
			&cli.StringFlag{Name: "doing", Usage: "what exactly (≤200 characters)"},
			&cli.StringFlag{Name: "task-id", Usage: "task id ([A-Za-z0-9_-], ≤64)"},
			&cli.StringFlag{Name: "branch", Usage: "git branch (default: the current one)"},
			&cli.StringSliceFlag{Name: "file", Usage: "a file being worked on (repeatable, ≤50)"},
			&cli.StringFlag{Name: "member", Usage: "member name (default: from your git identity)"},
		},
		Action: action(e, func(c *cli.Context) (activityCheckInOptions, error) {
			o := activityCheckInOptions{CheckIn: store.CheckIn{Member: c.String("member"), Task: strings.Join(c.Args().Slice(), " "), IssueRef: c.String("issue"),
				Availability: c.String("availability"), Doing: c.String("doing"), Files: c.StringSlice("file")}}
			if c.IsSet("task-id") {
				v := c.String("task-id")
				o.CheckIn.TaskID = &v
			}
			if c.IsSet("branch") {
				b := c.String("branch")
				o.CheckIn.Branch, o.BranchSet = &b, true
			}
			return o, nil
		}, runActivityCheckIn),
	}, "Records in your activity entry what you (or your agent: --agent) work on now: the task (the words\n"+
		"joined), the issue, the branch (the current one by default), the files and your availability.",
		[]string{"ctx activity check-in 'migrate auth' --issue '#42' --file auth/login.go", "ctx --agent claude-code activity check-in 'write tests' --availability working"},
		[]exit{{ExitUsage, "usage error, or an invalid value (availability, task id, too many files...)"}, {ExitNoStore, ""}})
}

func runActivityCheckIn(ctx context.Context, e *env, o activityCheckInOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	in := o.CheckIn
	if !o.BranchSet {
		branch := s.CurrentBranch()
		in.Branch = &branch
	}
	en, _, err := s.CheckIn(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "checked in: %s/%s on %s: %s\n", en.Member, en.Agent, en.Machine, en.Task)
	return nil
}

// activityIntentOptions are the arguments of ctx activity intent.
type activityIntentOptions struct{ Intent store.Intent }

func newActivityIntentCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "intent", Usage: "announce what you are about to change (kind, paths, areas, expiry) so teammates avoid the same files", ArgsUsage: "KIND",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "path", Usage: "a path you will touch (repeatable, ≤20)"},
			&cli.StringSliceFlag{Name: "area", Usage: "an area, e.g. auth (repeatable, ≤10)"},
			&cli.StringFlag{Name: "expires", Usage: "when the intent lapses, RFC 3339 (e.g. 2026-12-01T18:00:00Z) (required)"},
		},
		Action: action(e, func(c *cli.Context) (activityIntentOptions, error) {
			if err := requireFlags(c, "expires"); err != nil {
				return activityIntentOptions{}, err
			}
			if c.NArg() != 1 {
				return activityIntentOptions{}, usagef("usage: ctx activity intent KIND --path P --area A --expires TIME (KIND: %s)", strings.Join(store.IntentKinds, ", "))
			}
			paths, areas := c.StringSlice("path"), c.StringSlice("area")
			if paths == nil {
				paths = []string{}
			}
			if areas == nil {
				areas = []string{}
			}
			return activityIntentOptions{Intent: store.Intent{Kind: c.Args().Get(0), Paths: paths, Areas: areas, ExpiresAt: c.String("expires")}}, nil
		}, runActivityIntent),
	}, "Announces in your activity entry the kind of change you are about to make ("+strings.Join(store.IntentKinds, ", ")+"),\n"+
		"the paths and areas it touches, and when the announcement lapses.",
		[]string{"ctx activity intent change --path auth/ --area auth --expires 2026-12-01T18:00:00Z"},
		[]exit{{ExitUsage, "usage error, a missing --expires, or an invalid kind, path or time"}, {ExitNoStore, ""}})
}

func runActivityIntent(ctx context.Context, e *env, o activityIntentOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	en, res, err := s.SetIntent(ctx, o.Intent)
	if err != nil {
		return err
	}
	commitLine(e.stdout, fmt.Sprintf("intent of %s/%s", en.Member, en.Agent), res)
	return nil
}

// activityCheckOutOptions are the (no) arguments of ctx activity check-out.
type activityCheckOutOptions struct{}

func newActivityCheckOutCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "check-out", Usage: "say you stopped",
		Action: action(e, func(*cli.Context) (activityCheckOutOptions, error) {
			return activityCheckOutOptions{}, nil
		}, runActivityCheckOut),
	}, "Marks your activity entry (for this agent and machine) as stopped.",
		[]string{"ctx activity check-out"},
		exits(ExitNoStore))
}

func runActivityCheckOut(ctx context.Context, e *env, _ activityCheckOutOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	en, _, err := s.CheckOut(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "checked out: %s/%s on %s\n", en.Member, en.Agent, en.Machine)
	return nil
}

// activityListOptions are the flags of ctx activity list.
type activityListOptions struct{ JSON bool }

func newActivityListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "list", Usage: "list activity (stale: not updated for 48 hours)", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (activityListOptions, error) {
			return activityListOptions{JSON: c.Bool("json")}, nil
		}, runActivityList),
	}, "Lists every activity entry: member, agent, machine, status, availability and task; an entry not\n"+
		"updated for 48 hours is marked stale.",
		[]string{"ctx activity list", "ctx activity list --json"},
		exits(ExitNoStore))
}

func runActivityList(ctx context.Context, e *env, o activityListOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	list, err := v.ListActivity(ctx)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, list, func() {
		tw := table(e.stdout)
		for _, a := range list {
			stale := ""
			if a.Stale {
				stale = " (stale)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%s\n", oneCell(a.Member), oneCell(a.Agent), oneCell(a.Machine), oneCell(a.Status), oneCell(a.Availability), oneCell(a.Task), stale)
		}
		tw.Flush()
	})
}
