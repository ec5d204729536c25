package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// Conflicts of the merge layer (design §4: "the losing version kept in a conflict record listed by `ctx
// conflicts` and MCP; `ctx resolve` picks or edits"; docs/format.md "Conflicts").

func init() {
	registry = append(registry, conflictsCommand, resolveCommand)
}

// strategyFlag is pull's and sync's --strategy: decide every conflict of this pull at once.
var strategyFlag = &cli.StringFlag{Name: "strategy",
	Usage: "decide every conflict of this pull at once with `SIDE` (ours or theirs) in the merge commit, writing no conflict record",
	Action: func(_ *cli.Context, v string) error {
		if _, err := store.ParseStrategy(v); err != nil || v == "" {
			return usagef("invalid --strategy %q: use ours or theirs", v)
		}
		return nil
	}}

// pullOptions reads --strategy (validated by store.PullWith).
func pullOptions(c *cli.Context) store.PullOptions {
	return store.PullOptions{Strategy: store.Strategy(c.String("strategy"))}
}

// printDecided lists the conflicts a --strategy decided.
func printDecided(w io.Writer, r *store.PullResult) {
	for _, cf := range r.Decided {
		fmt.Fprintf(w, "  decided %s: %s %s (--strategy %s, no record)\n", cf.ID, cf.Path, cf.Field, r.Strategy)
	}
}

func conflictsCommand() *cli.Command {
	return &cli.Command{
		Name:  "conflicts",
		Usage: "list the open merge conflicts (conflicts/<id>.json) with base, ours, theirs and a diff ours → theirs",
		Flags: []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "full", Usage: "print base, ours and theirs in full"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("usage: ctx conflicts [--json] [--full]")
			}
			s, v, err := viewOf(c)
			if err != nil {
				return err
			}
			recs, err := s.ListConflicts(c.Context, v)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if recs == nil {
					recs = []store.ConflictRecord{}
				}
				return printJSON(c.App.Writer, recs)
			}
			w := c.App.Writer
			if len(recs) == 0 {
				fmt.Fprintln(w, "no open conflicts")
				return nil
			}
			for _, r := range recs {
				printConflict(w, r, c.Bool("full"))
			}
			fmt.Fprintf(w, "%s: settle one with ctx resolve PATH|ID --ours|--theirs|--file F\n", plural(len(recs), "open conflict", "open conflicts"))
			return nil
		},
	}
}

func printConflict(w io.Writer, r store.ConflictRecord, full bool) {
	field := r.Field
	if field == "" {
		field = "whole file"
	}
	fmt.Fprintf(w, "conflict %s: %s (%s)\n  rule: %s; ours is the %s version\n", r.ID, r.Path, field, r.Rule, r.OursIs)
	if full {
		base := r.Base
		if r.BaseAbsent {
			base = "(absent)\n"
		}
		for _, part := range [][2]string{{"base", base}, {"ours", r.Ours}, {"theirs", r.Theirs}} {
			fmt.Fprintf(w, "  ==== %s\n%s", part[0], indent(part[1]))
		}
	}
	fmt.Fprintf(w, "  --- ours\n  +++ theirs\n%s", indent(store.UnifiedDiff(r.Ours, r.Theirs, 3)))
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	s = "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ")
	return s + "\n"
}

func resolveCommand() *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "settle an open conflict: write ours, theirs (or kept, lost, or a file) to the path and delete its record, in one commit",
		ArgsUsage: "PATH|ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "ours", Usage: "keep our version (see ctx conflicts)"},
			&cli.BoolFlag{Name: "theirs", Usage: "take their version"},
			&cli.BoolFlag{Name: "kept", Usage: "keep the version the merge kept in the file"},
			&cli.BoolFlag{Name: "lost", Usage: "take the version the merge recorded as lost"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "write the content of `FILE` (- for standard input), e.g. a hand merge"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("usage: ctx resolve PATH|ID --ours|--theirs|--kept|--lost|--file F")
			}
			var choices []string
			for _, f := range []string{"ours", "theirs", "kept", "lost"} {
				if c.Bool(f) {
					choices = append(choices, f)
				}
			}
			if c.IsSet("file") {
				choices = append(choices, "file")
			}
			if len(choices) != 1 {
				return usagef("ctx resolve: pass exactly one of --ours, --theirs, --kept, --lost, --file F")
			}
			var content []byte
			if choices[0] == "file" {
				var err error
				if f := c.String("file"); f == "-" {
					content, err = io.ReadAll(c.App.Reader)
				} else {
					content, err = os.ReadFile(f)
				}
				if err != nil {
					return fmt.Errorf("resolve: read the content: %w", err)
				}
				if content == nil {
					content = []byte{}
				}
			}
			s, err := openInit(c)
			if err != nil {
				return err
			}
			rec, res, err := s.ResolveConflict(c.Context, c.Args().First(), choices[0], content)
			if err != nil {
				return err
			}
			commitLine(c.App.Writer, fmt.Sprintf("resolve %s (%s) with %s", rec.Path, rec.ID, choices[0]), res)
			return nil
		},
	}
}
