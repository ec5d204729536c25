package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func decisionCommand() *cli.Command {
	return &cli.Command{
		Name:  "decision",
		Usage: "architecture decision records (ADRs)",
		Subcommands: []*cli.Command{
			{
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
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx decision add TITLE [--context ... --decision ... --consequences ... | -f FILE] [--status S]")
					}
					in := store.NewDecision{Title: c.Args().Get(0), Context: c.String("context"), Decision: c.String("decision"), Consequences: c.String("consequences")}
					if f := c.String("file"); f != "" {
						if c.IsSet("context") || c.IsSet("decision") || c.IsSet("consequences") {
							return usagef("-f FILE replaces --context/--decision/--consequences: give one or the other")
						}
						b, err := os.ReadFile(f)
						if err != nil {
							return fmt.Errorf("read %s: %w", f, err)
						}
						body := string(b)
						in.Body = &body
					}
					var err error
					if in.Status, err = store.NormalizeStatus(c.String("status")); err != nil {
						return usagef("%v", err)
					}
					if in.Scope, err = store.ParseScope(c.String("scope")); err != nil {
						return usagef("%v", err)
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					d, _, err := s.AddDecision(c.Context, in)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, d)
					}
					fmt.Fprintf(c.App.Writer, "decision %d: %s (%s) -> %s\n", d.ID, d.Title, d.Status, d.Path)
					return nil
				},
			},
			{
				Name:  "list",
				Usage: "list decisions by id",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					_, v, err := viewOf(c)
					if err != nil {
						return err
					}
					list, err := v.ListDecisions(c.Context)
					if err != nil {
						return err
					}
					if c.Bool("json") {
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
						return printJSON(c.App.Writer, rows)
					}
					for _, d := range list {
						fmt.Fprintf(c.App.Writer, "%4d  %-10s %-9s %s\n", d.ID, d.Status, d.Scope, d.Title)
					}
					return nil
				},
			},
			{
				Name:      "get",
				Usage:     "show a decision by id or exact title",
				ArgsUsage: "ID|TITLE",
				Flags:     []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx decision get ID|TITLE")
					}
					_, v, err := viewOf(c)
					if err != nil {
						return err
					}
					d, err := v.FindDecision(c.Context, c.Args().Get(0))
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, d)
					}
					fmt.Fprintf(c.App.Writer, "# %d. %s\n\nStatus: %s\nDate: %s\nAuthor: %s\nScope: %s\n\n%s", d.ID, d.Title, d.Status, d.Date, d.Author, d.Scope, d.Body)
					return nil
				},
			},
			{
				Name:      "set-status",
				Usage:     "change a decision's status",
				ArgsUsage: "ID|TITLE STATUS",
				Flags:     []cli.Flag{&cli.IntFlag{Name: "superseded-by", Usage: "`ID` of the decision that replaces it"}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return usagef("usage: ctx decision set-status ID|TITLE STATUS")
					}
					// An invalid status is a usage error (store.ErrInvalid) even when the decision does not exist.
					if strings.TrimSpace(c.Args().Get(1)) == "" {
						return usagef("invalid status \"\": use one of %s", strings.Join(store.DecisionStatuses, ", "))
					}
					if _, err := store.NormalizeStatus(c.Args().Get(1)); err != nil {
						return usagef("%v", err)
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					d, _, err := s.SetDecisionStatus(c.Context, c.Args().Get(0), c.Args().Get(1), c.Int("superseded-by"))
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "decision %d: %s\n", d.ID, d.Status)
					return nil
				},
			},
			scopeCommand("decision"),
			{
				Name:      "supersede",
				Usage:     "mark OLD superseded by NEW (OLD gets superseded_by NEW, NEW gets OLD in supersedes)",
				ArgsUsage: "OLD NEW",
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return usagef("usage: ctx decision supersede OLD NEW")
					}
					s, v, err := viewOf(c)
					if err != nil {
						return err
					}
					od, err := v.FindDecision(c.Context, c.Args().Get(0))
					if err != nil {
						return err
					}
					nd, err := v.FindDecision(c.Context, c.Args().Get(1))
					if err != nil {
						return err
					}
					if od.ID == nd.ID {
						return usagef("decision %d cannot supersede itself: give the id of the decision that replaces it", od.ID)
					}
					d, _, err := s.SetDecisionStatus(c.Context, strconv.Itoa(od.ID), "superseded", nd.ID)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "decision %d superseded by %s\n", d.ID, strconv.Itoa(nd.ID))
					return nil
				},
			},
		},
	}
}
