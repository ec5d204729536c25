package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// errUnhealthy is doctor's exit status 1 when it found entries ctx does not read (the report is printed).
var errUnhealthy = errors.New("the context refs hold entries ctx does not read (see above)")

// doctorOptions are the flags of ctx doctor.
type doctorOptions struct{ JSON, Fix bool }

func newDoctorCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "doctor",
		Usage: "check the context refs for entries ctx does not read (unsafe names, links, gitlinks, paths outside the layout); " +
			"and for entries that clash (look-alike keys, decisions sharing a number or uid or superseding each other in a cycle, an entry in two scopes), files over the size limit, " +
			"malformed JSON records and a manifest.json that does not read; exit 1 when there are some; --fix removes the unreadable ones " +
			"in one commit per ref and puts back the last manifest that reads",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.BoolFlag{Name: "fix", Usage: "remove those entries from the tips of the context refs (one commit per ref)"},
		},
		Action: action(e, func(c *cli.Context) (doctorOptions, error) {
			return doctorOptions{JSON: c.Bool("json"), Fix: c.Bool("fix")}, nil
		}, runDoctor),
	}, "Checks the tips of the context refs for entries every command skips: names that could write outside\n"+
		".context/, symbolic links, gitlinks and paths outside the layout. Without --fix it prints them and how to\n"+
		"repair them; --fix removes them in one commit per ref (they stay in the history: see docs/security.md).\n"+
		"It also reports readable entries ctx would not write side by side (a merge, an older ctx or plain git\n"+
		"put them there): keys that look alike or fold to one name, decisions sharing a number or uid; rename or\n"+
		"remove one of each (docs/security.md \"Look-alike keys\"). And files over the limit of one file of the store\n"+
		"(docs/limits.md \"Files of the store\"), which a teammate's pull would refuse: shrink or remove them.\n"+
		"A manifest.json that does not read (plain git wrote it) is reported too; --fix puts back the newest one\n"+
		"of the branch's history that does. Malformed JSON records (state.json, sessions, activity, proposals with\n"+
		"a field of the wrong type) are reported with how to write them again; --fix leaves them. The tips of deleted\n"+
		"context branches kept under refs/ctx-orphaned/ are listed with how to restore or delete each; --fix deletes\n"+
		"only those the context branch holds already (docs/sync.md \"A deleted context branch\"). Temporary files that\n"+
		"interrupted writes left in .context/ and the git dir's ctx folder are listed (no problem) and removed by --fix\n"+
		"(docs/architecture.md \"Atomic files\").",
		[]string{"ctx doctor", "ctx doctor --json", "ctx doctor --fix && ctx push"},
		[]exit{{ExitOK, "every entry is readable (or --fix removed the others)"}, {ExitFailure, "entries ctx does not read were found (or entries that clash, or files over the size limit), or a failure"}, {ExitNoStore, ""}})
}

func runDoctor(ctx context.Context, e *env, o doctorOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	w := e.stdout
	if o.Fix {
		// Temporary files of killed writes: ctx's own, removed before anything else writes.
		temps, err := s.LeftoverTemps(ctx, true)
		if err != nil {
			return err
		}
		// The manifest first, put back, not removed: the store needs one (store.RepairManifest), and the
		// other repairs write to the branch only once it is a store again.
		mres, mp, err := s.RepairManifest(ctx)
		if err != nil {
			return err
		}
		res, removed, err := s.RemoveProblems(ctx)
		if err != nil {
			return err
		}
		// Kept tips of deleted context branches go only when the branch holds them already: losing data is
		// no fix (docs/sync.md "A deleted context branch").
		pruned, orphaned, err := s.PruneOrphanedRefs(ctx)
		if err != nil {
			return err
		}
		// Files over the size limit are readable content: --fix leaves them, and says so (exit 1). So are
		// malformed records: a write replaces them, removing one would lose what it still holds.
		over, err := s.OversizedFiles(ctx)
		if err != nil {
			return err
		}
		recs, err := s.MalformedRecords(ctx)
		if err != nil {
			return err
		}
		if o.JSON {
			out := map[string]any{"removed": nonNil(removed), "commits": res.Commits, "oversized": nonNil(over), "malformed_records": nonNil(recs),
				"orphaned_deleted": nonNilOrphaned(pruned), "orphaned": orphaned, "leftover_temp_files_removed": append([]string{}, temps...)}
			if mp != nil {
				out["manifest_restored_from"] = mp.LastGood
				out["manifest_commits"] = mres.Commits
			}
			if err := printJSON(w, out); err != nil {
				return err
			}
			if len(recs) > 0 {
				return errRecords
			}
			if len(over) > 0 {
				return errOversized
			}
			return nil
		}
		printPruned(w, pruned)
		printOrphaned(w, s.Branch(), orphaned)
		for _, p := range temps {
			fmt.Fprintf(w, "  removed %s (a temporary file left by an interrupted write)\n", p)
		}
		if len(removed) == 0 && mp == nil {
			if len(over) > 0 || len(recs) > 0 {
				printOversized(w, over)
				printRecords(w, recs)
				if len(recs) > 0 {
					return errRecords
				}
				return errOversized
			}
			if len(pruned) == 0 && len(temps) == 0 {
				fmt.Fprintln(w, "nothing to fix: every entry of the context refs is readable")
			}
			return nil
		}
		for _, p := range removed {
			fmt.Fprintf(w, "  removed %s\n", p)
		}
		if len(removed) > 0 {
			commitLine(w, "doctor --fix", res)
		}
		if mp != nil {
			fmt.Fprintf(w, "  put back %s of commit %.12s (the tip's: %s)\n", store.ManifestPath, mp.LastGood, mp.Reason)
			commitLine(w, "doctor --fix", mres)
		}
		fmt.Fprintln(w, "publish the repair with ctx push (an unsafe entry stays in the history: see docs/security.md)")
		printOversized(w, over)
		printRecords(w, recs)
		if len(recs) > 0 {
			return errRecords
		}
		if len(over) > 0 {
			return errOversized
		}
		return nil
	}
	d, err := s.Doctor(ctx)
	if err != nil {
		return err
	}
	if hint := outdatedHooksHint(ctx, s); hint != "" {
		fmt.Fprintln(e.stderr, hint)
	}
	if o.JSON {
		if err := printJSON(w, d); err != nil {
			return err
		}
		if len(d.Problems) > 0 || d.Manifest != nil {
			return errUnhealthy
		}
		if len(d.Records) > 0 {
			return errRecords
		}
		if len(d.Clashes) > 0 {
			return errClashes
		}
		if len(d.Oversized) > 0 {
			return errOversized
		}
		if d.Checkout != "" {
			return errCheckout
		}
		return nil
	}
	if d.Checkout != "" {
		fmt.Fprintf(w, "checkout: %s\n", d.Checkout)
	}
	printOrphaned(w, s.Branch(), d.Orphaned)
	printLeftovers(w, d.Leftovers)
	if len(d.Problems) == 0 && len(d.Clashes) == 0 && len(d.Oversized) == 0 && len(d.Records) == 0 && d.Manifest == nil {
		if d.Checkout != "" {
			return errCheckout
		}
		fmt.Fprintln(w, "ok: every entry of the context refs is readable")
		return nil
	}
	if len(d.Problems) > 0 {
		printDiagnosis(w, s, d)
	}
	printManifestProblem(w, d.Manifest)
	printClashes(w, d.Clashes)
	printOversized(w, d.Oversized)
	printRecords(w, d.Records)
	switch {
	case len(d.Problems) > 0 || d.Manifest != nil:
		return errUnhealthy
	case len(d.Records) > 0:
		return errRecords
	case len(d.Clashes) > 0:
		return errClashes
	}
	return errOversized
}

// printLeftovers lists the temporary files that interrupted writes left (store.Diagnosis.Leftovers): no
// problem (exit 0 for them), removed by ctx doctor --fix.
func printLeftovers(w io.Writer, ps []string) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "%s left by interrupted writes (harmless; ctx doctor --fix removes them):\n", plural(len(ps), "temporary file", "temporary files"))
	for _, p := range ps {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

// errRecords is doctor's exit status 1 when records of the context refs are malformed.
var errRecords = errors.New("records of the context refs are malformed (see above)")

// printRecords prints the malformed records and how to write them again (store.Diagnosis.Records).
func printRecords(w io.Writer, ps []store.Problem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintln(w, "malformed records (every reader of them fails; ctx doctor --fix leaves them: writing the record again repairs it):")
	for _, p := range ps {
		fmt.Fprintf(w, "  %s: %s\n", p.Scope, p)
	}
	fmt.Fprintln(w, "repair: ctx state set ... replaces state.json; any record: fix the file in .context/ and run ctx commit "+
		"(or fix it with git on the branch); then ctx push")
}

// errOversized is doctor's exit status 1 when files are over the store's size limit.
var errOversized = errors.New("files of the context refs are over the size limit (see above)")

// printOversized prints the files over store.MaxFileBytes and how to repair them.
func printOversized(w io.Writer, ps []store.Problem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "%s over the limit of one file of the store (%d bytes; a teammate's pull refuses a tip that adds one):\n",
		plural(len(ps), "file", "files"), store.MaxFileBytes)
	for _, p := range ps {
		fmt.Fprintf(w, "  %s: %s\n", p.Scope, p)
	}
	fmt.Fprintln(w, "repair: shrink or remove each (ctx knowledge set KEY -f SMALLER, ctx knowledge rm KEY, or split it into several entries); then ctx push")
}

// errCheckout is doctor's exit status 1 when .context/ cannot be used (Diagnosis.Checkout).
var errCheckout = errors.New(".context/ cannot be used (see above)")

// errClashes is doctor's exit status 1 when entries clash (look-alike keys, decisions sharing a number).
var errClashes = errors.New("entries of the context refs clash (see above)")

// printManifestProblem says why the branch's manifest.json cannot be read and how to repair it.
func printManifestProblem(w io.Writer, p *store.ManifestProblem) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "%s of commit %.12s cannot be read: %s\n", store.ManifestPath, p.Commit, p.Reason)
	if p.LastGood == "" {
		fmt.Fprintf(w, "  repair: no earlier commit holds one that reads: write it by hand (docs/format.md \"Records\"), then ctx commit\n")
		return
	}
	fmt.Fprintf(w, "  repair: ctx doctor --fix puts back the one of commit %.12s; then ctx push\n", p.LastGood)
}

// printClashes prints the clashes of readable entries and how to repair each.
func printClashes(w io.Writer, cs []store.Clash) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "%s of entries ctx would not write side by side (a merge, an older ctx or plain git put them there):\n", plural(len(cs), "clash", "clashes"))
	for _, c := range cs {
		fmt.Fprintf(w, "  %s:\n", c.Kind)
		for _, p := range c.Paths {
			fmt.Fprintf(w, "    %s: %s\n", p.Scope, p.Path)
		}
		fmt.Fprintf(w, "    repair: %s\n", c.Fix)
	}
}

func nonNil(ps []store.Problem) []store.Problem {
	if ps == nil {
		return []store.Problem{}
	}
	return ps
}

// printDiagnosis prints the problems of d and how to repair them.
func printDiagnosis(w io.Writer, s *store.Store, d *store.Diagnosis) {
	fmt.Fprintf(w, "%s ctx does not read (skipped by every command, never checked out):\n", plural(len(d.Problems), "entry", "entries"))
	for _, p := range d.Problems {
		tag := ""
		if p.Unsafe {
			tag = " [unsafe]"
		}
		fmt.Fprintf(w, "  %s: %s%s\n", p.Scope, p, tag)
	}
	fmt.Fprintln(w, "repair:")
	fmt.Fprintln(w, "  ctx doctor --fix   removes them from the tips in one commit per ref; then ctx push")
	for _, sc := range store.Scopes {
		good, ok := d.LastSafe[sc]
		if !ok {
			continue
		}
		if good == "" {
			fmt.Fprintf(w, "  %s holds unsafe entries in its history: rebuild it without them (docs/security.md)\n", s.RefOf(sc))
			continue
		}
		fmt.Fprintf(w, "  unsafe entries stay in the history, which git's fsck refuses on every fetch: reset %s to the last safe commit\n"+
			"    git update-ref %s %s   (commits after it are dropped; then publish with git push --force-with-lease)\n",
			s.RefOf(sc), s.RefOf(sc), good)
	}
}

// printOrphaned names the kept tips of deleted context branches (store.OrphanedRefs) and how to restore or
// delete each: no problem of the store (the exit status does not change), but entries that may exist
// nowhere else.
func printOrphaned(w io.Writer, branch string, os []store.OrphanedRef) {
	if len(os) == 0 {
		return
	}
	fmt.Fprintf(w, "%s of deleted context branches kept under %s (docs/sync.md \"A deleted context branch\"):\n",
		plural(len(os), "tip", "tips"), store.OrphanedPrefix)
	for _, o := range os {
		date := o.Date
		if date == "" {
			date = "its commit cannot be read"
		}
		fmt.Fprintf(w, "  %s  %.12s  last written %s", o.Ref, o.Tip, date)
		if o.Kept != "" {
			fmt.Fprintf(w, ", kept %s", o.Kept)
		}
		if o.Merged {
			fmt.Fprintln(w, "\n    the context branch holds it already: ctx doctor --fix deletes the ref (or git update-ref -d "+o.Ref+")")
			continue
		}
		fmt.Fprintf(w, "\n    its entries are not on the context branch: see them with git log -p %s; write back what you want\n"+
			"    (ctx knowledge set ...), or make it the context branch again with git branch -f %s %s (what the branch holds\n"+
			"    now is then lost); delete it when no longer needed: git update-ref -d %s\n", o.Ref, branch, o.Tip, o.Ref)
	}
}

// printPruned lists the kept tips ctx doctor --fix deleted (store.PruneOrphanedRefs).
func printPruned(w io.Writer, os []store.OrphanedRef) {
	for _, o := range os {
		fmt.Fprintf(w, "  deleted %s (%.12s: the context branch holds it)\n", o.Ref, o.Tip)
	}
}

func nonNilOrphaned(os []store.OrphanedRef) []store.OrphanedRef {
	if os == nil {
		return []store.OrphanedRef{}
	}
	return os
}
