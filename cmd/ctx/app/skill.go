package app

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func newSkillCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "skill",
		Usage: "agent skills (SKILL.md), their usage, feedback and improvement proposals",
		Subcommands: []*cli.Command{
			newSkillAddCmd(e),
			newSkillGetCmd(e),
			newSkillListCmd(e),
			newSkillRmCmd(e),
			newSkillUsageCmd(e),
			newSkillRateCmd(e),
			newSkillStatsCmd(e),
			newSkillFeedbackCmd(e),
			newSkillProposeCmd(e),
			newSkillProposalsCmd(e),
			newSkillResolveCmd(e, "accept"), newSkillResolveCmd(e, "reject"), newSkillResolveCmd(e, "upstream"),
			newScopeCmd(e, "skill"),
		},
	}, "Agent skills as SKILL.md folders under skills/ of the context branch (name, description, instructions),\n"+
		"with their usage counts, ratings and feedback, and proposals to improve them that a person accepts,\n"+
		"rejects or sends upstream.",
		[]string{"ctx skill add review -d 'Review a pull request' -f review.md", "ctx skill rate review 4 'clear steps'", "ctx skill stats"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

// skillAddOptions are the arguments of ctx skill add.
type skillAddOptions struct {
	Name, Description string
	Instructions      content
	Scope             store.Scope
}

func newSkillAddCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "add", Usage: "add or replace a skill: --description and the instructions (TEXT, -f FILE or stdin)", ArgsUsage: "NAME [INSTRUCTIONS]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "description", Aliases: []string{"d"}, Usage: "what the skill does and when to use it (required)"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "instructions (markdown) from `FILE`"},
			&cli.StringFlag{Name: "scope", Usage: "public (default), private or ephemeral"},
		},
		Action: action(e, func(c *cli.Context) (skillAddOptions, error) {
			if err := requireFlags(c, "description"); err != nil {
				return skillAddOptions{}, err
			}
			if c.NArg() < 1 || c.NArg() > 2 {
				return skillAddOptions{}, usagef("usage: ctx skill add NAME --description D [INSTRUCTIONS | -f FILE]")
			}
			in, err := contentOf(c, 1)
			if err != nil {
				return skillAddOptions{}, err
			}
			sc, err := store.ParseScope(c.String("scope"))
			if err != nil {
				return skillAddOptions{}, usagef("%v", err)
			}
			return skillAddOptions{Name: c.Args().Get(0), Description: c.String("description"), Instructions: in, Scope: sc}, nil
		}, runSkillAdd),
	}, "Writes skills/NAME/SKILL.md with the description and the instructions (the INSTRUCTIONS argument,\n"+
		"-f FILE, or standard input), in one commit.",
		[]string{"ctx skill add review -d 'Review a pull request' -f review.md", "ctx skill add deploy -d 'Deploy to staging' 'Run make deploy.'"},
		[]exit{{ExitUsage, "usage error, a missing --description, or an invalid name or scope"}, {ExitNoStore, ""}})
}

func runSkillAdd(ctx context.Context, e *env, o skillAddOptions) error {
	body, err := o.Instructions.read(ctx, e.stdin)
	if err != nil {
		return err
	}
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	_, res, err := s.AddSkill(ctx, o.Name, o.Description, body, o.Scope)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "skill "+o.Name, res)
	return nil
}

// skillNameOptions are the arguments of the skill commands that take a NAME and --json.
type skillNameOptions struct {
	Name string
	JSON bool
}

func newSkillGetCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "get", Usage: "print a skill's SKILL.md", ArgsUsage: "NAME", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (skillNameOptions, error) {
			return skillNameOptions{Name: c.Args().Get(0), JSON: c.Bool("json")}, nil
		}, runSkillGet),
	}, "Prints the SKILL.md of the skill NAME; --json adds its name, description and scope.",
		[]string{"ctx skill get review", "ctx skill get review --json"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSkillGet(ctx context.Context, e *env, o skillNameOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	sk, err := v.GetSkill(ctx, o.Name)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, sk, func() { fmt.Fprint(e.stdout, sk.Content) })
}

// skillListOptions are the flags of ctx skill list.
type skillListOptions struct{ JSON bool }

func newSkillListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "list", Usage: "list skills", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (skillListOptions, error) {
			return skillListOptions{JSON: c.Bool("json")}, nil
		}, runSkillList),
	}, "Lists the skills of every scope: name, scope and description.",
		[]string{"ctx skill list", "ctx skill list --json"},
		exits(ExitNoStore))
}

func runSkillList(ctx context.Context, e *env, o skillListOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	list, err := v.ListSkills(ctx)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, list, func() {
		tw := table(e.stdout)
		for _, sk := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", sk.Name, sk.Scope, firstLine(sk.Description))
		}
		tw.Flush()
	})
}

func newSkillRmCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "rm", Usage: "remove a skill", ArgsUsage: "NAME",
		Action: action(e, func(c *cli.Context) (skillNameOptions, error) {
			return skillNameOptions{Name: c.Args().Get(0)}, nil
		}, runSkillRm),
	}, "Removes the skill NAME (its folder) in one commit; its usage and feedback are kept.",
		[]string{"ctx skill rm review"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSkillRm(ctx context.Context, e *env, o skillNameOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	res, err := s.RemoveSkill(ctx, o.Name)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "removed skill "+o.Name, res)
	return nil
}

// skillUsageOptions are the arguments of ctx skill usage.
type skillUsageOptions struct {
	Name    string
	Session string // --session (CTX_SESSION)
}

func newSkillUsageCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "usage", Usage: "record that a skill was used", ArgsUsage: "NAME",
		Action: action(e, func(c *cli.Context) (skillUsageOptions, error) {
			return skillUsageOptions{Name: c.Args().Get(0), Session: c.String("session")}, nil
		}, runSkillUsage),
	}, "Records one use of the skill NAME, with the session of --session or CTX_SESSION.",
		[]string{"ctx skill usage review", "ctx --session s-42 skill usage review"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSkillUsage(ctx context.Context, e *env, o skillUsageOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	_, res, err := s.ReportSkillUsage(ctx, o.Name, o.Session)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "usage of "+o.Name, res)
	return nil
}

// skillRateOptions are the arguments of ctx skill rate.
type skillRateOptions struct {
	Name    string
	Rating  int // 1-5, checked by the store
	Comment string
}

func newSkillRateCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "rate", Usage: "rate a skill 1-5", ArgsUsage: "NAME RATING [COMMENT]",
		Action: action(e, func(c *cli.Context) (skillRateOptions, error) {
			if c.NArg() < 2 {
				return skillRateOptions{}, usagef("usage: ctx skill rate NAME RATING [COMMENT]")
			}
			r, err := strconv.Atoi(c.Args().Get(1))
			if err != nil {
				return skillRateOptions{}, usagef("rating must be an integer 1-5, got %q", c.Args().Get(1))
			}
			return skillRateOptions{Name: c.Args().Get(0), Rating: r, Comment: strings.Join(c.Args().Slice()[2:], " ")}, nil
		}, runSkillRate),
	}, "Records a rating from 1 (useless) to 5 (excellent) of the skill NAME, with an optional comment (the\n"+
		"remaining words). ctx skill stats flags skills rated below 3.0 on average.",
		[]string{"ctx skill rate review 4 'clear steps'", "ctx skill rate deploy 2 misses the rollback"},
		[]exit{{ExitUsage, "usage error, or a rating out of range"}, {ExitNotFound, ""}, {ExitNoStore, ""}})
}

func runSkillRate(ctx context.Context, e *env, o skillRateOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	_, res, err := s.RateSkill(ctx, o.Name, o.Rating, o.Comment)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "rated "+o.Name, res)
	return nil
}

// skillStatsOptions are the flags of ctx skill stats.
type skillStatsOptions struct{ JSON bool }

func newSkillStatsCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "stats", Usage: "usage and rating statistics (needs_attention: 2+ ratings averaging below 3.0)", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (skillStatsOptions, error) {
			return skillStatsOptions{JSON: c.Bool("json")}, nil
		}, runSkillStats),
	}, "Prints each skill's usage count, average rating and number of ratings; a skill with two ratings or\n"+
		"more averaging below 3.0 needs attention.",
		[]string{"ctx skill stats", "ctx skill stats --json"},
		exits(ExitNoStore))
}

func runSkillStats(ctx context.Context, e *env, o skillStatsOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	st, err := v.SkillStats(ctx)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, st, func() {
		tw := table(e.stdout)
		for _, x := range st {
			flag := ""
			if x.NeedsAttention {
				flag = "needs attention"
			}
			fmt.Fprintf(tw, "%s\tused %3d\trating %.2f (%d)\t%s\n", oneCell(x.SkillName), x.UsageCount, x.AvgRating, x.RatingCount, flag)
		}
		tw.Flush()
	})
}

func newSkillFeedbackCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "feedback", Usage: "list a skill's feedback", ArgsUsage: "NAME", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (skillNameOptions, error) {
			return skillNameOptions{Name: c.Args().Get(0), JSON: c.Bool("json")}, nil
		}, runSkillFeedback),
	}, "Lists the ratings and comments of the skill NAME: time, agent, rating and comment.",
		[]string{"ctx skill feedback review", "ctx skill feedback review --json"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSkillFeedback(ctx context.Context, e *env, o skillNameOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	fb, err := v.SkillFeedback(ctx, o.Name)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, fb, func() {
		for _, f := range fb {
			fmt.Fprintf(e.stdout, "%s %-12s %v  %s\n", f.Timestamp, f.Agent, f.Rating, f.Comment)
		}
	})
}

// skillProposeOptions are the arguments of ctx skill propose.
type skillProposeOptions struct {
	Name      string
	Content   content // -f FILE or standard input: the whole proposed SKILL.md
	Rationale string
	JSON      bool
}

func newSkillProposeCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "propose", Usage: "propose a new SKILL.md (-f FILE or stdin)", ArgsUsage: "NAME",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the whole proposed SKILL.md (without front matter: the new body under the skill's front matter)"},
			&cli.StringFlag{Name: "rationale", Usage: "why"},
			jsonFlag,
		},
		Action: action(e, func(c *cli.Context) (skillProposeOptions, error) {
			if c.NArg() != 1 {
				return skillProposeOptions{}, usagef("usage: ctx skill propose NAME -f FILE [--rationale R]")
			}
			return skillProposeOptions{Name: c.Args().Get(0), Content: content{File: c.String("file")}, Rationale: c.String("rationale"), JSON: c.Bool("json")}, nil
		}, runSkillPropose),
	}, "Records a proposal to replace the SKILL.md of the skill NAME (-f FILE or standard input), with a\n"+
		"rationale; the skill is unchanged until ctx skill accept. Prints the proposal's id and a diff summary.",
		[]string{"ctx skill propose review -f better-review.md --rationale 'adds the security checklist'"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSkillPropose(ctx context.Context, e *env, o skillProposeOptions) error {
	text, err := o.Content.read(ctx, e.stdin)
	if err != nil {
		return err
	}
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	p, _, err := s.ProposeSkill(ctx, o.Name, text, o.Rationale)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, p, func() { fmt.Fprintf(e.stdout, "proposal %s for %s\n%s", p.ID, p.SkillName, p.DiffSummary) })
}

// skillProposalsOptions are the arguments of ctx skill proposals.
type skillProposalsOptions struct {
	Name   string // "": every skill
	Status string // "": every status
	JSON   bool
}

func newSkillProposalsCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "proposals", Usage: "list the proposals of one skill, or of every skill without NAME", ArgsUsage: "[NAME]",
		Flags: []cli.Flag{&cli.StringFlag{Name: "status", Usage: "only proposals with `STATUS`: " + strings.Join(store.ProposalStatuses, ", ")}, jsonFlag},
		Action: action(e, func(c *cli.Context) (skillProposalsOptions, error) {
			if c.NArg() > 1 {
				return skillProposalsOptions{}, usagef("usage: ctx skill proposals [NAME] [--status S]")
			}
			if st := c.String("status"); st != "" && !slices.Contains(store.ProposalStatuses, st) {
				return skillProposalsOptions{}, usagef("invalid proposal status %q: use one of %s", st, strings.Join(store.ProposalStatuses, ", "))
			}
			return skillProposalsOptions{Name: c.Args().Get(0), Status: c.String("status"), JSON: c.Bool("json")}, nil
		}, runSkillProposals),
	}, "Lists proposals: id, skill, status, agent and rationale.",
		[]string{"ctx skill proposals", "ctx skill proposals review --status pending"},
		exits(ExitUsage, ExitNoStore))
}

func runSkillProposals(ctx context.Context, e *env, o skillProposalsOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	list, err := v.ListProposals(ctx, o.Name, o.Status)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, list, func() {
		tw := table(e.stdout)
		for _, p := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", oneCell(p.ID), oneCell(p.SkillName), oneCell(p.Status), oneCell(p.Agent), firstLine(p.Rationale))
		}
		tw.Flush()
	})
}

// resolveUsage is the help line of ctx skill accept|reject|upstream.
var resolveUsage = map[string]string{
	"accept":   "accept a pending proposal: its SKILL.md replaces the skill's in the same commit",
	"reject":   "reject a pending proposal: the skill stays as it is",
	"upstream": "mark a pending proposal as sent upstream (to the skill's source): the skill stays as it is here",
}

// skillResolveOptions are the arguments of ctx skill accept|reject|upstream.
type skillResolveOptions struct {
	Decision string // accept, reject, upstream
	Name, ID string
}

func newSkillResolveCmd(e *env, decision string) *cli.Command {
	return withHelp(&cli.Command{
		Name: decision, Usage: resolveUsage[decision], ArgsUsage: "NAME ID",
		Action: action(e, func(c *cli.Context) (skillResolveOptions, error) {
			if c.NArg() != 2 {
				return skillResolveOptions{}, usagef("usage: ctx skill %s NAME ID", decision)
			}
			return skillResolveOptions{Decision: decision, Name: c.Args().Get(0), ID: c.Args().Get(1)}, nil
		}, runSkillResolve),
	}, "Settles the pending proposal ID of the skill NAME (ctx skill proposals lists them; ID is the proposal's UUID or a unique prefix of it, 4 hex digits or more): "+resolveUsage[decision]+".",
		[]string{"ctx skill " + decision + " review f8c02026-d672-4da7-86d2-ee48916e2cc9", "ctx skill " + decision + " review f8c02026"},
		[]exit{{ExitUsage, "usage error, a proposal that is not pending, or one whose changes overlap a later edit of the skill"}, {ExitNotFound, ""}, {ExitNoStore, ""}})
}

func runSkillResolve(ctx context.Context, e *env, o skillResolveOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	_, res, err := s.ResolveProposal(ctx, o.Name, o.ID, o.Decision)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "proposal "+o.ID+" "+o.Decision, res)
	return nil
}
