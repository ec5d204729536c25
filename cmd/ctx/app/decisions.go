package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func newDecisionCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "decision",
		Usage: "architecture decision records (ADRs)",
		Subcommands: []*cli.Command{
			newDecisionAddCmd(e),
			newDecisionListCmd(e),
			newDecisionGetCmd(e),
			newDecisionSetStatusCmd(e),
			newScopeCmd(e, "decision"),
			newDecisionSupersedeCmd(e),
		},
	}, "Numbered decision records under decisions/ of the context branch (NNNN-title.md): a title, a status\n"+
		"(proposed, accepted, deprecated, superseded, rejected) and the context, decision and consequences.",
		[]string{
			"ctx decision add 'Use PostgreSQL' --context 'Need ACID' --decision 'PostgreSQL 16' --status accepted",
			"ctx decision list",
			"ctx decision supersede 1 4",
		},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

// decisionAddOptions are the arguments of ctx decision add.
type decisionAddOptions struct {
	Decision store.NewDecision // Body is the -f FILE's content, read by runDecisionAdd
	File     string
	JSON     bool
}

func newDecisionAddCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "add",
		Usage:     "record a decision: --context/--decision/--consequences, or -f FILE for the whole ADR body",
		ArgsUsage: "TITLE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "context", Usage: "what forces the decision"},
			&cli.StringFlag{Name: "decision", Usage: "what was decided"},
			&cli.StringFlag{Name: "consequences", Usage: "what follows"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the ADR body (markdown) from `FILE`"},
			&cli.StringFlag{Name: "status", Usage: "proposed (default), accepted, deprecated, superseded or rejected"},
			&cli.StringFlag{Name: "scope", Usage: "public (default), private or ephemeral"},
			jsonFlag,
		},
		Action: action(e, func(c *cli.Context) (decisionAddOptions, error) {
			if c.NArg() != 1 {
				return decisionAddOptions{}, usagef("usage: ctx decision add TITLE [--context ... --decision ... --consequences ... | -f FILE] [--status S]")
			}
			o := decisionAddOptions{File: c.String("file"), JSON: c.Bool("json"),
				Decision: store.NewDecision{Title: c.Args().Get(0), Context: c.String("context"), Decision: c.String("decision"), Consequences: c.String("consequences")}}
			if o.File != "" && (c.IsSet("context") || c.IsSet("decision") || c.IsSet("consequences")) {
				return decisionAddOptions{}, usagef("-f FILE replaces --context/--decision/--consequences: give one or the other")
			}
			var err error
			if o.Decision.Status, err = store.NormalizeStatus(c.String("status")); err != nil {
				return decisionAddOptions{}, usagef("%v", err)
			}
			if o.Decision.Scope, err = store.ParseScope(c.String("scope")); err != nil {
				return decisionAddOptions{}, usagef("%v", err)
			}
			return o, nil
		}, runDecisionAdd),
	}, "Records a decision with the next free number, in one commit. The body is made of --context,\n"+
		"--decision and --consequences, or is the markdown of -f FILE as it is.",
		[]string{
			"ctx decision add 'Use PostgreSQL' --context 'Need ACID' --decision 'PostgreSQL 16' --consequences 'Ops' --status accepted",
			"ctx decision add 'Adopt gRPC' -f adr.md",
			"ctx decision add 'Try Redis' --json",
		},
		[]exit{{ExitUsage, "usage error, or an invalid title, status or scope, or a field holding a line read as a heading of the body"}, {ExitNoStore, ""}})
}

func runDecisionAdd(ctx context.Context, e *env, o decisionAddOptions) error {
	in := o.Decision
	if o.File != "" {
		b, err := readInputFile(ctx, o.File)
		if err != nil {
			return err
		}
		body := string(b)
		in.Body = &body
	}
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	d, _, err := s.AddDecision(ctx, in)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, d)
	}
	fmt.Fprintf(e.stdout, "decision %d: %s (%s) -> %s\n", d.ID, d.Title, d.Status, d.Path)
	return nil
}

// decisionListOptions are the flags of ctx decision list.
type decisionListOptions struct{ JSON bool }

func newDecisionListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "list",
		Usage: "list decisions by id",
		Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (decisionListOptions, error) {
			return decisionListOptions{JSON: c.Bool("json")}, nil
		}, runDecisionList),
	}, "Lists every decision: id, status, scope and title (--json: id, title, status, scope).",
		[]string{"ctx decision list", "ctx decision list --json"},
		exits(ExitNoStore))
}

func runDecisionList(ctx context.Context, e *env, o decisionListOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	list, err := v.ListDecisions(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		type row struct {
			ID     int         `json:"id"`
			Title  string      `json:"title"`
			Status string      `json:"status"`
			Scope  store.Scope `json:"scope"`
		}
		rows := []row{}
		for _, d := range list {
			rows = append(rows, row{d.ID, d.Title, d.Status, d.Scope})
		}
		return printJSON(e.stdout, rows)
	}
	for _, d := range list {
		fmt.Fprintf(e.stdout, "%4d  %-10s %-9s %s\n", d.ID, oneCell(d.Status), d.Scope, oneCell(d.Title))
	}
	return nil
}

// decisionGetOptions are the arguments of ctx decision get.
type decisionGetOptions struct {
	Ref  string // an id or an exact title
	JSON bool
}

func newDecisionGetCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "get",
		Usage:     "show a decision by id or exact title",
		ArgsUsage: "ID|TITLE",
		Flags:     []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (decisionGetOptions, error) {
			if c.NArg() != 1 {
				return decisionGetOptions{}, usagef("usage: ctx decision get ID|TITLE")
			}
			return decisionGetOptions{Ref: c.Args().Get(0), JSON: c.Bool("json")}, nil
		}, runDecisionGet),
	}, "Prints a decision: title, status, date, author, scope and body; --json prints the whole record.",
		[]string{"ctx decision get 1", "ctx decision get 'Use PostgreSQL' --json"},
		[]exit{{ExitUsage, "usage error, or a title that names several decisions"}, {ExitNotFound, ""}, {ExitNoStore, ""}})
}

func runDecisionGet(ctx context.Context, e *env, o decisionGetOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	d, err := v.FindDecision(ctx, o.Ref)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, d)
	}
	title, body := fmt.Sprintf("# %d. %s", d.ID, d.Title), d.Body
	// An imported ADR's body starts with its own title heading: print that one, once.
	if first, rest, _ := strings.Cut(strings.TrimLeft(body, "\n"), "\n"); strings.HasPrefix(first, "# ") {
		title, body = strings.TrimRight(first, "\r"), strings.TrimLeft(rest, "\r\n")
	}
	fmt.Fprintf(e.stdout, "%s\n\nStatus: %s\n", oneCell(title), oneCell(d.Status))
	if d.SupersededBy > 0 {
		fmt.Fprintf(e.stdout, "Superseded by: %d\n", d.SupersededBy)
	}
	if len(d.Supersedes) > 0 {
		ids := make([]string, len(d.Supersedes))
		for i, n := range d.Supersedes {
			ids[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(e.stdout, "Supersedes: %s\n", strings.Join(ids, ", "))
	}
	fmt.Fprintf(e.stdout, "Date: %s\nAuthor: %s\nScope: %s\n\n%s", oneCell(d.Date), oneCell(d.Author), d.Scope, body)
	return nil
}

// decisionSetStatusOptions are the arguments of ctx decision set-status.
type decisionSetStatusOptions struct {
	Ref          string
	Status       string
	SupersededBy int
}

func newDecisionSetStatusCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "set-status",
		Usage:     "change a decision's status",
		ArgsUsage: "ID|TITLE STATUS",
		Flags:     []cli.Flag{&cli.IntFlag{Name: "superseded-by", Usage: "`ID` of the decision that replaces it"}},
		Action: action(e, func(c *cli.Context) (decisionSetStatusOptions, error) {
			if c.NArg() != 2 {
				return decisionSetStatusOptions{}, usagef("usage: ctx decision set-status ID|TITLE STATUS")
			}
			// An invalid status is a usage error even when the decision does not exist.
			if strings.TrimSpace(c.Args().Get(1)) == "" {
				return decisionSetStatusOptions{}, usagef("invalid status \"\": use one of %s", strings.Join(store.DecisionStatuses, ", "))
			}
			if _, err := store.NormalizeStatus(c.Args().Get(1)); err != nil {
				return decisionSetStatusOptions{}, usagef("%v", err)
			}
			return decisionSetStatusOptions{Ref: c.Args().Get(0), Status: c.Args().Get(1), SupersededBy: c.Int("superseded-by")}, nil
		}, runDecisionSetStatus),
	}, "Sets the status of a decision: proposed, accepted, deprecated, superseded or rejected\n"+
		"(--superseded-by names the decision that replaces it; ctx decision supersede links both).",
		[]string{"ctx decision set-status 1 accepted", "ctx decision set-status 'Use MySQL' deprecated"},
		[]exit{{ExitUsage, "usage error, or an invalid status"}, {ExitNotFound, ""}, {ExitNoStore, ""}})
}

func runDecisionSetStatus(ctx context.Context, e *env, o decisionSetStatusOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	d, _, err := s.SetDecisionStatus(ctx, o.Ref, o.Status, o.SupersededBy)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "decision %d: %s\n", d.ID, d.Status)
	return nil
}

// decisionSupersedeOptions are the arguments of ctx decision supersede.
type decisionSupersedeOptions struct{ Old, New string }

func newDecisionSupersedeCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "supersede",
		Usage:     "mark OLD superseded by NEW (OLD gets superseded_by NEW, NEW gets OLD in supersedes)",
		ArgsUsage: "OLD NEW",
		Action: action(e, func(c *cli.Context) (decisionSupersedeOptions, error) {
			if c.NArg() != 2 {
				return decisionSupersedeOptions{}, usagef("usage: ctx decision supersede OLD NEW")
			}
			return decisionSupersedeOptions{Old: c.Args().Get(0), New: c.Args().Get(1)}, nil
		}, runDecisionSupersede),
	}, "Marks the decision OLD superseded by NEW, both given by id or exact title, in one commit.",
		[]string{"ctx decision supersede 1 4", "ctx decision supersede 'Use MySQL' 'Use PostgreSQL'"},
		[]exit{{ExitUsage, "usage error, or a decision superseding itself"}, {ExitNotFound, ""}, {ExitNoStore, ""}})
}

func runDecisionSupersede(ctx context.Context, e *env, o decisionSupersedeOptions) error {
	s, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	od, err := v.FindDecision(ctx, o.Old)
	if err != nil {
		return err
	}
	nd, err := v.FindDecision(ctx, o.New)
	if err != nil {
		return err
	}
	if od.ID == nd.ID {
		return usagef("decision %d cannot supersede itself: give the id of the decision that replaces it", od.ID)
	}
	d, _, err := s.SetDecisionStatus(ctx, strconv.Itoa(od.ID), "superseded", nd.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "decision %d superseded by %s\n", d.ID, strconv.Itoa(nd.ID))
	return nil
}
