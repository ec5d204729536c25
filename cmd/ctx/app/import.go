package app

import (
	"fmt"
	"strings"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "import ADR folders, SKILL.md folders, agent instruction files and contributing guides (one commit)",
		ArgsUsage: "PATH...",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "show the plan, write nothing"},
			&cli.StringFlag{Name: "scope", Usage: "scope of the imported entries: public (default), private or ephemeral"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("usage: ctx import PATH... [--dry-run]")
			}
			sc, err := store.ParseScope(c.String("scope"))
			if err != nil {
				return usagef("%v", err)
			}
			plan, err := importer.Scan(c.Context, c.Args().Slice()...)
			if err != nil {
				return err
			}
			w := c.App.Writer
			for _, it := range plan.Items {
				for _, warn := range it.Warnings {
					fmt.Fprintf(c.App.ErrWriter, "ctx: warning: %s: %s\n", it.Source, warn)
				}
			}
			for _, warn := range plan.Warnings {
				fmt.Fprintf(c.App.ErrWriter, "ctx: warning: %s\n", warn)
			}
			if c.Bool("dry-run") {
				if c.Bool("json") {
					return printJSON(w, plan.Items)
				}
				for _, it := range plan.Items {
					fmt.Fprintf(w, "%-10s %-40s <- %s\n", it.Kind, planName(it), it.Source)
				}
				fmt.Fprintf(w, "dry run: %d item(s), nothing written\n", len(plan.Items))
				return nil
			}
			s, err := openInit(c)
			if err != nil {
				return err
			}
			batch := importer.Batch(plan, sc, s.Repo.WorkTree())
			op := store.Op{Name: "import", Key: strings.Join(c.Args().Slice(), ","),
				Summary: fmt.Sprintf("import %d item(s) from %s", len(plan.Items), strings.Join(c.Args().Slice(), ", "))}
			res, decisions, err := s.Apply(c.Context, op, batch)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(w, map[string]any{"items": len(plan.Items), "decisions": decisions, "changed": res.Changed()})
			}
			for _, d := range decisions {
				for _, it := range plan.Items {
					if it.Kind == importer.KindDecision && it.Number > 0 && it.Number != d.ID && it.Title == d.Title {
						fmt.Fprintf(c.App.ErrWriter, "ctx: warning: %s: number %d was taken, recorded as decision %d\n", it.Source, it.Number, d.ID)
					}
				}
			}
			counts := map[importer.Kind]int{}
			for _, it := range plan.Items {
				counts[it.Kind]++
			}
			fmt.Fprintf(w, "imported %d decision(s), %d skill(s), %d knowledge entr(ies), %d convention(s)\n",
				counts[importer.KindDecision], counts[importer.KindSkill], counts[importer.KindKnowledge], counts[importer.KindConvention])
			commitLine(w, "import", res)
			return nil
		},
	}
}

func planName(it importer.Item) string {
	if it.Kind == importer.KindDecision {
		if it.Number > 0 {
			return fmt.Sprintf("%d. %s", it.Number, it.Title)
		}
		return it.Title
	}
	return it.Key
}
