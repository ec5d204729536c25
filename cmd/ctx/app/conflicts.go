package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// Conflicts of the merge layer: the losing version of a field both sides changed is kept in a conflict
// record (conflicts/<id>.json, docs/format.md "Conflicts") listed by ctx conflicts and settled by ctx
// resolve.

// printDecided lists the conflicts a --strategy decided.
func printDecided(w io.Writer, r *store.PullResult) {
	for _, cf := range r.Decided {
		fmt.Fprintf(w, "  decided %s: %s %s (--strategy %s, no record)\n", cf.ID, cf.Path, cf.Field, r.Strategy)
	}
}

// conflictsOptions are the flags of ctx conflicts.
type conflictsOptions struct{ JSON, Full bool }

func newConflictsCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "conflicts",
		Usage: "list the open merge conflicts (conflicts/<id>.json) with base, ours, theirs and a diff ours → theirs",
		Flags: []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "full", Usage: "print base, ours and theirs in full"}},
		Action: action(e, func(c *cli.Context) (conflictsOptions, error) {
			if c.NArg() > 0 {
				return conflictsOptions{}, usagef("usage: ctx conflicts [--json] [--full]")
			}
			return conflictsOptions{JSON: c.Bool("json"), Full: c.Bool("full")}, nil
		}, runConflicts),
	}, "Lists the conflicts a merge recorded: the path and field, the rule that decided, whose version the\n"+
		"file holds (ours: written by you or on this machine), who wrote each side, and a diff ours → theirs.",
		[]string{"ctx conflicts", "ctx conflicts --full", "ctx conflicts --json"},
		exits(ExitUsage, ExitNoStore))
}

func runConflicts(ctx context.Context, e *env, o conflictsOptions) error {
	s, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	recs, err := s.ListConflicts(ctx, v)
	if err != nil {
		return err
	}
	if o.JSON {
		if recs == nil {
			recs = []store.ConflictRecord{}
		}
		return printJSON(e.stdout, recs)
	}
	w := e.stdout
	if len(recs) == 0 {
		fmt.Fprintln(w, "no open conflicts")
		return nil
	}
	for _, r := range recs {
		printConflict(w, r, o.Full)
	}
	fmt.Fprintf(w, "%s: settle one with ctx resolve PATH|ID --ours|--theirs|--file F\n", plural(len(recs), "open conflict", "open conflicts"))
	return nil
}

func printConflict(w io.Writer, r store.ConflictRecord, full bool) {
	field := r.Field
	if field == "" {
		field = "whole file"
	}
	holds := keptSide(r)
	if r.Changed {
		holds = "neither: it changed since (a later write); settle with --file F or --current"
	}
	fmt.Fprintf(w, "conflict %s: %s (%s)\n  rule: %s; the file holds %s\n", r.ID, r.Path, field, r.Rule, holds)
	fmt.Fprintf(w, "  ours:   %s\n  theirs: %s\n", describeSide(r.OursBy, r.OursDeleted, !r.Changed && r.OursIs == "kept", oursBasis(r)), describeSide(r.TheirsBy, r.TheirsDeleted, !r.Changed && r.OursIs != "kept", ""))
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
		// Rule 3 of docs/format.md "Ours and theirs": neither version names this user or machine, so ours
		// is only the first parent's side of the merge that recorded it, made here or by a teammate.
		return "neither version is yours: the side of whoever made the merge that recorded it"
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

// resolveOptions are the arguments of ctx resolve.
type resolveOptions struct {
	Target string // the conflict's path or id
	Choice string // ours, theirs, kept, lost or file
	File   string // with Choice "file": the content's file, "-" for standard input
}

func newResolveCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "resolve",
		Usage:     "settle an open conflict: write ours, theirs (or kept, lost, or a file) to the path and delete its record, in one commit",
		ArgsUsage: "PATH|ID (or a unique prefix of the ID, 4 hex digits or more)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "ours", Usage: "take your version: the one written by you (git's identity) or on this machine, whoever made the merge (see ctx conflicts)"},
			&cli.BoolFlag{Name: "theirs", Usage: "take the other writer's version"},
			&cli.BoolFlag{Name: "kept", Usage: "keep the version the merge kept in the file"},
			&cli.BoolFlag{Name: "lost", Usage: "take the version the merge recorded as lost"},
			&cli.BoolFlag{Name: "current", Usage: "keep the file as it is now and close the record (for a conflict whose file was written since: ctx conflicts says \"changed since\")"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "write the content of `FILE` (- for standard input), e.g. a hand merge; an entry keeps its front matter (a body alone is enough) with you as its author"},
		},
		Action: action(e, func(c *cli.Context) (resolveOptions, error) {
			if c.NArg() != 1 {
				return resolveOptions{}, usagef("usage: ctx resolve PATH|ID --ours|--theirs|--kept|--lost|--current|--file F")
			}
			var choices []string
			for _, f := range []string{"ours", "theirs", "kept", "lost", "current"} {
				if c.Bool(f) {
					choices = append(choices, f)
				}
			}
			if c.IsSet("file") {
				choices = append(choices, "file")
			}
			if len(choices) != 1 {
				return resolveOptions{}, usagef("ctx resolve: pass exactly one of --ours, --theirs, --kept, --lost, --current, --file F")
			}
			return resolveOptions{Target: c.Args().First(), Choice: choices[0], File: c.String("file")}, nil
		}, runResolve),
	}, "Settles the conflict named by its path or id: the chosen version is written to the path and the\n"+
		"conflict record deleted, in one commit. ctx conflicts shows the versions to choose from.",
		[]string{"ctx resolve knowledge/testing.md --theirs", "ctx resolve 3f2a --ours", "ctx resolve knowledge/testing.md -f merged.md"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runResolve(ctx context.Context, e *env, o resolveOptions) error {
	var content []byte
	if o.Choice == "file" {
		var err error
		if o.File == "-" {
			content, err = readInput(ctx, e.stdin, "standard input")
		} else {
			content, err = readInputFile(ctx, o.File)
		}
		if err != nil {
			return fmt.Errorf("resolve: read the content: %w", err)
		}
		if content == nil {
			content = []byte{}
		}
	}
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	rec, res, err := s.ResolveConflict(ctx, o.Target, o.Choice, content)
	if err != nil {
		return err
	}
	commitLine(e.stdout, fmt.Sprintf("resolve %s (%s) with %s", rec.Path, rec.ID, o.Choice), res)
	return nil
}
