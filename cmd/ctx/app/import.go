package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "import ADR folders, SKILL.md folders, agent instruction files and contributing guides (one commit; a PATH that does not exist is a usage error, exit 2)",
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
			for _, p := range c.Args().Slice() {
				if _, err := os.Stat(p); err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return usagef("cannot import %s: no such file or directory", p)
					}
					return fmt.Errorf("cannot import %s: %w", p, unwrapPath(err))
				}
			}
			plan, err := importer.Scan(c.Context, c.Args().Slice()...)
			if err != nil {
				return scanError{err}
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
				tw := table(w)
				for _, it := range plan.Items {
					fmt.Fprintf(tw, "%s\t%s\t<- %s\n", it.Kind, planName(it), it.Source)
				}
				tw.Flush()
				fmt.Fprintf(w, "dry run: %s, nothing written\n", plural(len(plan.Items), "item", "items"))
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
			if res == nil || !res.Changed() {
				fmt.Fprintln(w, "nothing new to import: every item is already in the store")
				return nil
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
			fmt.Fprintf(w, "imported %s, %s, %s, %s\n",
				plural(counts[importer.KindDecision], "decision", "decisions"), plural(counts[importer.KindSkill], "skill", "skills"),
				plural(counts[importer.KindKnowledge], "knowledge entry", "knowledge entries"),
				plural(counts[importer.KindConvention], "convention", "conventions"))
			commitLine(w, "import", res)
			return nil
		},
	}
}

// scanError is an error of importer.Scan without its "importer: scan " prefix (the command says what it
// was doing); errors.Is and errors.As still see the error it wraps.
type scanError struct{ err error }

func (e scanError) Error() string {
	msg := e.err.Error()
	if rest, ok := strings.CutPrefix(msg, "importer: scan: "); ok {
		return "import: " + rest
	}
	if rest, ok := strings.CutPrefix(msg, "importer: scan "); ok {
		return "cannot import " + rest
	}
	return msg
}

func (e scanError) Unwrap() error { return e.err }

// unwrapPath drops the "stat PATH: " of an *fs.PathError, whose path the message gives already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
