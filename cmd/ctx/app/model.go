package app

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func init() {
	registry = append(registry, stateCommand, sessionCommand, skillCommand, activityCommand, teamCommand)
	hookActivity = func(ctx context.Context, workTree, branch string) error {
		s, err := store.Open(ctx, workTree, store.Actor{})
		if err != nil {
			return err
		}
		if ok, _ := s.Initialized(ctx); !ok {
			return nil
		}
		_, err = s.UpdateBranch(ctx, branch)
		return err
	}
}

// viewOf opens the store and a view of its refs.
func viewOf(c *cli.Context) (*store.Store, *store.View, error) {
	s, err := openInit(c)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.RefView(c.Context)
	return s, v, err
}

// printOut prints v as JSON with --json, else the text.
func printOut(c *cli.Context, v any, text func()) error {
	if c.Bool("json") {
		return printJSON(c.App.Writer, v)
	}
	text()
	return nil
}

func stateCommand() *cli.Command {
	return &cli.Command{
		Name:  "state",
		Usage: "the active state: current task, blockers, progress",
		Subcommands: []*cli.Command{
			{
				Name: "show", Usage: "show the state", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					st, err := s.GetState(c.Context, v)
					if err != nil {
						return err
					}
					return printOut(c, st, func() { printState(c.App.Writer, st) })
				},
			},
			{
				Name:      "set",
				Usage:     "set one field: current_task TEXT | blockers [B...] | progress KEY=VALUE...",
				ArgsUsage: "FIELD VALUE...",
				Action: func(c *cli.Context) error {
					if c.NArg() < 1 {
						return usagef("usage: ctx state set current_task TEXT | blockers [B...] | progress KEY=VALUE...")
					}
					args := c.Args().Slice()
					var p store.StatePatch
					switch args[0] {
					case "current_task", "task":
						t := strings.Join(args[1:], " ")
						p.CurrentTask = &t
					case "blockers":
						b := append([]string{}, args[1:]...)
						p.Blockers = &b
					case "progress":
						m := map[string]string{}
						for _, kv := range args[1:] {
							k, val, ok := strings.Cut(kv, "=")
							if !ok {
								return usagef("progress takes KEY=VALUE pairs, got %q", kv)
							}
							m[k] = val
						}
						p.Progress = &m
					default:
						return usagef("unknown state field %q: use current_task, blockers or progress", args[0])
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					_, res, err := s.UpdateState(c.Context, p)
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "state "+args[0], res)
					return nil
				},
			},
			{
				Name: "clear", Usage: "reset the state and empty the ephemeral scope",
				Action: func(c *cli.Context) error {
					s, err := openInit(c)
					if err != nil {
						return err
					}
					res, err := s.ClearState(c.Context)
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "state cleared", res)
					return nil
				},
			},
		},
	}
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

func sessionCommand() *cli.Command {
	listFlags := []cli.Flag{
		&cli.StringSliceFlag{Name: "knowledge", Usage: "knowledge `KEY` added in the session (repeatable)"},
		&cli.StringSliceFlag{Name: "decision", Usage: "decision `ID` added in the session (repeatable)"},
		&cli.StringSliceFlag{Name: "skill", Usage: "skill `NAME` used in the session (repeatable)"},
		&cli.StringFlag{Name: "summary", Aliases: []string{"m"}, Usage: "what happened"},
		jsonFlag,
	}
	return &cli.Command{
		Name:  "session",
		Usage: "session history: one record per agent session",
		Subcommands: []*cli.Command{
			{
				Name: "start", Usage: "start a session (prints its id; export it as CTX_SESSION)", ArgsUsage: "[ID]", Flags: listFlags,
				Action: func(c *cli.Context) error {
					s, err := openInit(c)
					if err != nil {
						return err
					}
					ss, _, err := s.StartSession(c.Context, store.SessionUpdate{ID: c.Args().Get(0), Agent: s.Actor.Agent, Summary: c.String("summary"),
						KnowledgeAdded: c.StringSlice("knowledge"), DecisionsAdded: c.StringSlice("decision"), SkillsUsed: c.StringSlice("skill")})
					if err != nil {
						return err
					}
					return printOut(c, ss, func() { fmt.Fprintln(c.App.Writer, ss.ID) })
				},
			},
			{
				Name: "update", Usage: "update a started session: set the summary and add to the lists (ctx session start creates one)", ArgsUsage: "ID",
				Flags: append([]cli.Flag{&cli.BoolFlag{Name: "start", Usage: "start the session when ID is unknown, as the MCP tool context_append_session does"}}, listFlags...),
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx session update ID [--summary S] [--knowledge K] ...")
					}
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					// AppendSession would start a session it does not know: an unknown ID is a typo here,
					// unless --start says otherwise.
					if !c.Bool("start") {
						if _, err := s.GetSession(c.Context, v, c.Args().Get(0)); err != nil {
							return err
						}
					}
					ss, res, err := s.AppendSession(c.Context, store.SessionUpdate{ID: c.Args().Get(0), Agent: s.Actor.Agent, Summary: c.String("summary"),
						KnowledgeAdded: c.StringSlice("knowledge"), DecisionsAdded: c.StringSlice("decision"), SkillsUsed: c.StringSlice("skill")})
					if err != nil {
						return err
					}
					return printOut(c, ss, func() { commitLine(c.App.Writer, "session "+ss.ID, res) })
				},
			},
			{
				Name: "end", Usage: "end a session", ArgsUsage: "ID", Flags: []cli.Flag{&cli.StringFlag{Name: "summary", Aliases: []string{"m"}}},
				Action: func(c *cli.Context) error {
					id := c.Args().Get(0)
					if id == "" {
						id = c.String("session")
					}
					if id == "" {
						return usagef("usage: ctx session end ID [--summary S]")
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					_, res, err := s.EndSession(c.Context, id, c.String("summary"))
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "session "+id+" ended", res)
					return nil
				},
			},
			{
				Name: "list", Usage: "list sessions by start time", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					list, err := s.ListSessions(c.Context, v)
					if err != nil {
						return err
					}
					return printOut(c, list, func() {
						tw := table(c.App.Writer)
						for _, ss := range list {
							ended := "open"
							if ss.Ended != nil {
								ended = *ss.Ended
							}
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ss.ID, ss.Started, ss.Agent, ended, firstLine(ss.Summary))
						}
						tw.Flush()
					})
				},
			},
			{
				Name: "show", Usage: "show a session", ArgsUsage: "ID", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx session show ID")
					}
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					ss, err := s.GetSession(c.Context, v, c.Args().Get(0))
					if err != nil {
						return err
					}
					return printJSON(c.App.Writer, ss)
				},
			},
		},
	}
}

func skillCommand() *cli.Command {
	return &cli.Command{
		Name:  "skill",
		Usage: "agent skills (SKILL.md), their usage, feedback and improvement proposals",
		Subcommands: []*cli.Command{
			{
				Name: "add", Usage: "add or replace a skill: --description and the instructions (TEXT, -f FILE or stdin)", ArgsUsage: "NAME [INSTRUCTIONS]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "description", Aliases: []string{"d"}, Usage: "what the skill does and when to use it", Required: true},
					&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "instructions (markdown) from `FILE`"},
					&cli.StringFlag{Name: "scope", Usage: "public (default), private or ephemeral"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() < 1 || c.NArg() > 2 {
						return usagef("usage: ctx skill add NAME --description D [INSTRUCTIONS | -f FILE]")
					}
					body, err := readContent(c, c.Args().Get(1), c.NArg() == 2)
					if err != nil {
						return err
					}
					sc, err := store.ParseScope(c.String("scope"))
					if err != nil {
						return usagef("%v", err)
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					_, res, err := s.AddSkill(c.Context, c.Args().Get(0), c.String("description"), body, sc)
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "skill "+c.Args().Get(0), res)
					return nil
				},
			},
			{
				Name: "get", Usage: "print a skill's SKILL.md", ArgsUsage: "NAME", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					sk, err := s.GetSkill(c.Context, v, c.Args().Get(0))
					if err != nil {
						return err
					}
					return printOut(c, sk, func() { fmt.Fprint(c.App.Writer, sk.Content) })
				},
			},
			{
				Name: "list", Usage: "list skills", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					list, err := s.ListSkills(c.Context, v)
					if err != nil {
						return err
					}
					return printOut(c, list, func() {
						tw := table(c.App.Writer)
						for _, sk := range list {
							fmt.Fprintf(tw, "%s\t%s\t%s\n", sk.Name, sk.Scope, firstLine(sk.Description))
						}
						tw.Flush()
					})
				},
			},
			{
				Name: "rm", Usage: "remove a skill", ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					s, err := openInit(c)
					if err != nil {
						return err
					}
					res, err := s.RemoveSkill(c.Context, c.Args().Get(0))
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "removed skill "+c.Args().Get(0), res)
					return nil
				},
			},
			{
				Name: "usage", Usage: "record that a skill was used", ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					s, err := openInit(c)
					if err != nil {
						return err
					}
					_, res, err := s.ReportSkillUsage(c.Context, c.Args().Get(0), c.String("session"))
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "usage of "+c.Args().Get(0), res)
					return nil
				},
			},
			{
				Name: "rate", Usage: "rate a skill 1-5", ArgsUsage: "NAME RATING [COMMENT]",
				Action: func(c *cli.Context) error {
					if c.NArg() < 2 {
						return usagef("usage: ctx skill rate NAME RATING [COMMENT]")
					}
					r, err := strconv.Atoi(c.Args().Get(1))
					if err != nil {
						return usagef("rating must be an integer 1-5, got %q", c.Args().Get(1))
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					_, res, err := s.RateSkill(c.Context, c.Args().Get(0), r, strings.Join(c.Args().Slice()[2:], " "))
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "rated "+c.Args().Get(0), res)
					return nil
				},
			},
			{
				Name: "stats", Usage: "usage and rating statistics (needs_attention: 2+ ratings averaging below 3.0)", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					st, err := s.SkillStats(c.Context, v)
					if err != nil {
						return err
					}
					return printOut(c, st, func() {
						tw := table(c.App.Writer)
						for _, x := range st {
							flag := ""
							if x.NeedsAttention {
								flag = "needs attention"
							}
							fmt.Fprintf(tw, "%s\tused %3d\trating %.2f (%d)\t%s\n", x.SkillName, x.UsageCount, x.AvgRating, x.RatingCount, flag)
						}
						tw.Flush()
					})
				},
			},
			{
				Name: "feedback", Usage: "list a skill's feedback", ArgsUsage: "NAME", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					fb, err := s.SkillFeedback(c.Context, v, c.Args().Get(0))
					if err != nil {
						return err
					}
					return printOut(c, fb, func() {
						for _, f := range fb {
							fmt.Fprintf(c.App.Writer, "%s %-12s %v  %s\n", f.Timestamp, f.Agent, f.Rating, f.Comment)
						}
					})
				},
			},
			{
				Name: "propose", Usage: "propose a new SKILL.md (-f FILE or stdin)", ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the whole proposed SKILL.md"},
					&cli.StringFlag{Name: "rationale", Usage: "why"},
					jsonFlag,
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx skill propose NAME -f FILE [--rationale R]")
					}
					content, err := readContent(c, "", false)
					if err != nil {
						return err
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					p, _, err := s.ProposeSkill(c.Context, c.Args().Get(0), content, c.String("rationale"))
					if err != nil {
						return err
					}
					return printOut(c, p, func() { fmt.Fprintf(c.App.Writer, "proposal %s for %s\n%s", p.ID, p.SkillName, p.DiffSummary) })
				},
			},
			{
				Name: "proposals", Usage: "list the proposals of one skill, or of every skill without NAME", ArgsUsage: "[NAME]",
				Flags: []cli.Flag{&cli.StringFlag{Name: "status", Usage: "only proposals with `STATUS`: " + strings.Join(store.ProposalStatuses, ", ")}, jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() > 1 {
						return usagef("usage: ctx skill proposals [NAME] [--status S]")
					}
					if st := c.String("status"); st != "" && !slices.Contains(store.ProposalStatuses, st) {
						return usagef("invalid proposal status %q: use one of %s", st, strings.Join(store.ProposalStatuses, ", "))
					}
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					list, err := s.ListProposals(c.Context, v, c.Args().Get(0), c.String("status"))
					if err != nil {
						return err
					}
					return printOut(c, list, func() {
						tw := table(c.App.Writer)
						for _, p := range list {
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.ID, p.SkillName, p.Status, p.Agent, firstLine(p.Rationale))
						}
						tw.Flush()
					})
				},
			},
			resolveProposal("accept"), resolveProposal("reject"), resolveProposal("upstream"),
			scopeCommand("skill"),
		},
	}
}

// resolveUsage is the help line of ctx skill accept|reject|upstream.
var resolveUsage = map[string]string{
	"accept":   "accept a pending proposal: its SKILL.md replaces the skill's in the same commit",
	"reject":   "reject a pending proposal: the skill stays as it is",
	"upstream": "mark a pending proposal as sent upstream (to the skill's source): the skill stays as it is here",
}

func resolveProposal(decision string) *cli.Command {
	return &cli.Command{
		Name: decision, Usage: resolveUsage[decision], ArgsUsage: "NAME ID",
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("usage: ctx skill %s NAME ID", decision)
			}
			s, err := openInit(c)
			if err != nil {
				return err
			}
			_, res, err := s.ResolveProposal(c.Context, c.Args().Get(0), c.Args().Get(1), decision)
			if err != nil {
				return err
			}
			commitLine(c.App.Writer, "proposal "+c.Args().Get(1)+" "+decision, res)
			return nil
		},
	}
}

// scopeCommand is `ctx <kind> scope KEY SCOPE`: move an entry between the public, private and ephemeral
// refs in one step.
func scopeCommand(kind string) *cli.Command {
	return &cli.Command{
		Name: "scope", Usage: "move an entry to another scope (public, private, ephemeral)", ArgsUsage: "KEY SCOPE",
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("usage: ctx %s scope KEY SCOPE", kind)
			}
			sc, err := store.ParseScope(c.Args().Get(1))
			if err != nil {
				return usagef("%v", err)
			}
			s, err := openInit(c)
			if err != nil {
				return err
			}
			res, err := s.SetScope(c.Context, kind, c.Args().Get(0), sc)
			if err != nil {
				return err
			}
			commitLine(c.App.Writer, fmt.Sprintf("%s %s -> %s", kind, c.Args().Get(0), sc), res)
			if _, fromPublic := res.Commits[store.Public]; fromPublic && sc != store.Public {
				fmt.Fprintf(c.App.ErrWriter, "ctx: warning: earlier versions of %s %s stay in the history of %s (and on the remote if it was pushed)\n",
					kind, c.Args().Get(0), s.BranchRef())
			}
			return nil
		},
	}
}

func activityCommand() *cli.Command {
	return &cli.Command{
		Name:  "activity",
		Usage: "the team pulse: who is doing what, with which agent, on which machine",
		Subcommands: []*cli.Command{
			{
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
				Action: func(c *cli.Context) error {
					s, err := openInit(c)
					if err != nil {
						return err
					}
					in := store.CheckIn{Member: c.String("member"), Task: strings.Join(c.Args().Slice(), " "), IssueRef: c.String("issue"),
						Availability: c.String("availability"), Doing: c.String("doing"), Files: c.StringSlice("file")}
					if c.IsSet("task-id") {
						v := c.String("task-id")
						in.TaskID = &v
					}
					branch := c.String("branch")
					if !c.IsSet("branch") {
						branch = s.Repo.CurrentBranch()
					}
					in.Branch = &branch
					e, _, err := s.CheckIn(c.Context, in)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "checked in: %s/%s on %s: %s\n", e.Member, e.Agent, e.Machine, e.Task)
					return nil
				},
			},
			{
				Name: "intent", Usage: "announce what you are about to change (kind, paths, areas, expiry) so teammates avoid the same files", ArgsUsage: "KIND",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "path", Usage: "a path you will touch (repeatable, ≤20)"},
					&cli.StringSliceFlag{Name: "area", Usage: "an area, e.g. auth (repeatable, ≤10)"},
					&cli.StringFlag{Name: "expires", Usage: "when the intent lapses, RFC 3339 (e.g. 2026-12-01T18:00:00Z)", Required: true},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx activity intent KIND --path P --area A --expires TIME (KIND: %s)", strings.Join(store.IntentKinds, ", "))
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					paths, areas := c.StringSlice("path"), c.StringSlice("area")
					if paths == nil {
						paths = []string{}
					}
					if areas == nil {
						areas = []string{}
					}
					e, res, err := s.SetIntent(c.Context, store.Intent{Kind: c.Args().Get(0), Paths: paths, Areas: areas, ExpiresAt: c.String("expires")})
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, fmt.Sprintf("intent of %s/%s", e.Member, e.Agent), res)
					return nil
				},
			},
			{
				Name: "check-out", Usage: "say you stopped",
				Action: func(c *cli.Context) error {
					s, err := openInit(c)
					if err != nil {
						return err
					}
					e, _, err := s.CheckOut(c.Context)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "checked out: %s/%s on %s\n", e.Member, e.Agent, e.Machine)
					return nil
				},
			},
			{
				Name: "list", Usage: "list activity (stale: not updated for 48 hours)", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					list, err := s.ListActivity(c.Context, v)
					if err != nil {
						return err
					}
					return printOut(c, list, func() {
						tw := table(c.App.Writer)
						for _, a := range list {
							stale := ""
							if a.Stale {
								stale = " (stale)"
							}
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%s\n", a.Member, a.Agent, a.Machine, a.Status, a.Availability, a.Task, stale)
						}
						tw.Flush()
					})
				},
			},
		},
	}
}

func teamCommand() *cli.Command {
	return &cli.Command{
		Name:  "team",
		Usage: "the team members listed in the manifest",
		Subcommands: []*cli.Command{
			{
				Name: "add", Usage: "add a member", ArgsUsage: "NAME [MACHINE]",
				Action: func(c *cli.Context) error {
					if c.NArg() < 1 || c.NArg() > 2 {
						return usagef("usage: ctx team add NAME [MACHINE]")
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					_, res, err := s.AddMember(c.Context, c.Args().Get(0), c.Args().Get(1))
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "member "+c.Args().Get(0), res)
					return nil
				},
			},
			{
				Name: "list", Usage: "list members", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					list, err := s.ListMembers(c.Context, v)
					if err != nil {
						return err
					}
					return printOut(c, list, func() {
						tw := table(c.App.Writer)
						for _, m := range list {
							fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, m.Machine, m.Added)
						}
						tw.Flush()
					})
				},
			},
			teamTokenCommand(),
		},
	}
}
