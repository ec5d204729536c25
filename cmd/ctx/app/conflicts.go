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

// pullOptions reads --remote and --strategy (validated by store.Pull).
func pullOptions(c *cli.Context) store.PullOptions {
	return store.PullOptions{Remote: c.String("remote"), Strategy: store.Strategy(c.String("strategy"))}
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
	fmt.Fprintf(w, "conflict %s: %s (%s)\n  rule: %s; the file holds %s\n", r.ID, r.Path, field, r.Rule, keptSide(r))
	fmt.Fprintf(w, "  ours:   %s\n  theirs: %s\n", describeSide(r.OursBy, r.OursDeleted, r.OursIs == "kept", oursBasis(r)), describeSide(r.TheirsBy, r.TheirsDeleted, r.OursIs != "kept", ""))
	ours, theirs := r.Ours, r.Theirs
	if r.OursDeleted {
		ours = ""
	}
	if r.TheirsDeleted {
		theirs = ""
	}
	if full {
		base := r.Base
		if r.BaseAbsent {
			base = "(absent)\n"
		}
		o, th := ours, theirs
		if r.OursDeleted {
			o = "(deleted)\n"
		}
		if r.TheirsDeleted {
			th = "(deleted)\n"
		}
		for _, part := range [][2]string{{"base", base}, {"ours", o}, {"theirs", th}} {
			fmt.Fprintf(w, "  ==== %s\n%s", part[0], indent(part[1]))
		}
	}
	fmt.Fprintf(w, "  --- ours\n  +++ theirs\n%s", indent(store.UnifiedDiff(ours, theirs, 3)))
}

// keptSide says whose version the file holds now: "ours" or "theirs".
func keptSide(r store.ConflictRecord) string {
	if r.OursIs == "kept" {
		return "ours"
	}
	return "theirs"
}

// oursBasis explains how ours was told apart (ConflictRecord.OursFrom).
func oursBasis(r store.ConflictRecord) string {
	switch r.OursFrom {
	case "author":
		return "written by you"
	case "machine":
		return "written on this machine"
	case "merge":
		return "this machine's side of the merge"
	}
	return "writer unknown: the kept version"
}

// describeSide is one line about a version: who wrote it, whether it is a delete, whether the file holds
// it, and (for ours) why it is ours.
func describeSide(by *store.ConflictSide, deleted, inFile bool, why string) string {
	var parts []string
	if deleted {
		parts = append(parts, "deleted the file")
	}
	if by != nil {
		who := by.Author
		if by.Machine != "" {
			who += " on " + by.Machine
		}
		if by.Agent != "" {
			who += " (agent " + by.Agent + ")"
		}
		if by.Commit != "" {
			who += ", commit " + by.Commit[:min(12, len(by.Commit))]
		}
		parts = append(parts, who)
	}
	if inFile {
		parts = append(parts, "in the file now")
	}
	if why != "" {
		parts = append(parts, why)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
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
			&cli.BoolFlag{Name: "ours", Usage: "take your version: the one written by you (git's identity) or on this machine, whoever made the merge (see ctx conflicts)"},
			&cli.BoolFlag{Name: "theirs", Usage: "take the other writer's version"},
			&cli.BoolFlag{Name: "kept", Usage: "keep the version the merge kept in the file"},
			&cli.BoolFlag{Name: "lost", Usage: "take the version the merge recorded as lost"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "write the content of `FILE` (- for standard input), e.g. a hand merge; an entry keeps its front matter (a body alone is enough) with you as its author"},
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
