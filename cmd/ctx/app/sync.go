package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// Pull, push and sync: one run function (runSync) for the three.

var remoteFlag = &cli.StringFlag{Name: "remote", Usage: "remote `NAME` or URL (default: configured, else origin)"}
var timeoutFlag = &cli.DurationFlag{Name: "timeout", Value: store.DefaultTimeout, Usage: "give up a transfer after `DURATION`"}

// strategyFlag is pull's and sync's --strategy: decide every conflict of this pull at once.
var strategyFlag = &cli.StringFlag{Name: "strategy",
	Usage: "decide every conflict of this pull at once with `SIDE` (ours or theirs) in the merge commit, writing no conflict record",
	Action: func(_ *cli.Context, v string) error {
		if _, err := store.ParseStrategy(v); err != nil || v == "" {
			return usagef("invalid --strategy %q: use ours or theirs", v)
		}
		return nil
	}}

// syncOptions are the arguments of ctx pull, push and sync: Pull and Push say which steps run (sync: both).
type syncOptions struct {
	Pull, Push bool
	Remote     string
	Timeout    time.Duration // used when HasTimeout; else the configured sync.timeout
	HasTimeout bool
	Strategy   store.Strategy
	// JSON prints one JSON object on standard output instead of the lines of text (docs/sync.md "JSON
	// output"): pull's store.PullReport, push's store.PushReport, sync's {"pull": ..., "push": ...}.
	JSON bool
}

// syncParse maps the flags of pull, push and sync to their options.
func syncParse(pull, push bool) func(c *cli.Context) (syncOptions, error) {
	return func(c *cli.Context) (syncOptions, error) {
		o := syncOptions{Pull: pull, Push: push, Remote: c.String("remote"), Strategy: store.Strategy(c.String("strategy")), JSON: c.Bool("json")}
		if c.NArg() > 0 {
			// git push REMOTE habits: a name given as an argument must not be ignored (the push would go to
			// the configured remote instead).
			return o, usagef("%s takes no arguments: name the remote with --remote %s", c.Command.Name, c.Args().First())
		}
		if c.IsSet("timeout") {
			o.Timeout, o.HasTimeout = c.Duration("timeout"), true
			if o.Timeout > store.MaxTimeout {
				return o, usagef("--timeout takes at most %v, got %v", store.MaxTimeout, o.Timeout)
			}
		}
		return o, nil
	}
}

// syncExits are the exit codes of pull, push and sync.
var syncExits = []exit{{ExitUsage, "usage error, or a remote ctx refuses (an option, a command transport)"}, {ExitNoStore, ""},
	{ExitTransfer, "the remote could not be reached, refused the push, or sent what ctx refuses"}}

func newPullCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:   "pull",
		Usage:  "fetch the remote's context branch and fast-forward or merge it",
		Flags:  []cli.Flag{remoteFlag, timeoutFlag, strategyFlag, jsonFlag},
		Action: action(e, syncParse(true, false), runSync),
	}, "Records the hand edits of .context/ first, as ctx commit would (one commit; ctx status lists them;\n"+
		"throw them away with ctx restore before pulling to keep them out). Files deleted by hand are not\n"+
		"recorded: the pull stops and asks for ctx commit or ctx restore. Then it fetches the remote's\n"+
		"context branch and every machine's ref (refs/ctx/machines/*; every object checked by git fsck,\n"+
		"every tip checked before any ref moves), then fast-forwards or merges each tip the branch does not hold yet, field by field.\n"+
		"A conflict keeps one version in the file and the other in conflicts/<id>.json (see ctx conflicts),\n"+
		"unless --strategy decides them all. The first pull of a clone adopts the remote's branch.",
		[]string{"ctx pull", "ctx pull --remote upstream --timeout 2m", "ctx pull --strategy theirs", "ctx pull --json"},
		syncExits)
}

func newPushCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:   "push",
		Usage:  "publish the context branch to this machine's ref and the shared branch (never forced)",
		Flags:  []cli.Flag{remoteFlag, timeoutFlag, jsonFlag},
		Action: action(e, syncParse(false, true), runSync),
	}, "Pushes the context branch to this machine's own ref on the remote, refs/ctx/machines/<id> (no other\n"+
		"machine writes it, so the push never races), and tries once to move the remote's branch of the same\n"+
		"name to it; when another machine moved that branch first, the next sync merges both (not a failure).\n"+
		"A remote that refuses refs/ctx/machines/ gets the branch alone: when it moved, its commits are pulled\n"+
		"and merged first, then the push is tried again. Nothing is ever forced. Private and ephemeral entries\n"+
		"live outside this repository's refs and are never pushed.",
		[]string{"ctx push", "ctx push --remote upstream", "ctx push --json"},
		syncExits)
}

func newSyncCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:   "sync",
		Usage:  "pull, then push",
		Flags:  []cli.Flag{remoteFlag, timeoutFlag, strategyFlag, jsonFlag},
		Action: action(e, syncParse(true, true), runSync),
	}, "Runs ctx pull, then ctx push, with the same remote and timeout: the hand edits of .context/ are\n"+
		"recorded first (as ctx pull does) and so published. With --json it prints one object,\n"+
		"{\"pull\": ..., \"push\": ...}, each as ctx pull --json and ctx push --json print it.",
		[]string{"ctx sync", "ctx sync --strategy ours --timeout 1m", "ctx sync --json"},
		syncExits)
}

// runSync is ctx pull (o.Pull), ctx push (o.Push) and ctx sync (both): the pull first, then the push.
// With o.JSON the lines of text become one JSON object on standard output, printed when every step
// succeeded (a refusal prints its error alone), and what is not part of the result (the notes ref, the
// hooks hint) goes to standard error.
func runSync(ctx context.Context, e *env, o syncOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	if o.HasTimeout {
		s.SetTransferTimeout(max(o.Timeout, time.Second))
	}
	return timeoutHint(runSyncSteps(ctx, e, o, s), s)
}

// timeoutHint names the setting behind a transfer that ran out of time ("context deadline exceeded" says
// nothing of it).
func timeoutHint(err error, s *store.Store) error {
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (gave up after %v, the transfer timeout: --timeout DURATION, or ctx config sync.timeout DURATION)", err, s.TransferTimeout())
	}
	return err
}

// runSyncSteps runs the steps of runSync on the opened store s.
func runSyncSteps(ctx context.Context, e *env, o syncOptions, s *store.Store) error {
	info := e.stdout // lines that are not part of the result
	if o.JSON {
		info = e.stderr
	}
	var report struct {
		Pull *store.PullReport `json:"pull,omitempty"`
		Push *store.PushReport `json:"push,omitempty"`
	}
	if o.Pull {
		r, err := s.Pull(ctx, store.PullOptions{Remote: o.Remote, Strategy: o.Strategy})
		if err != nil {
			return err
		}
		if r.Orphaned != "" {
			fmt.Fprintf(e.stderr, "ctx: warning: the context branch had been deleted; its last tip %s, which .context/ showed, is kept as %s "+
				"(the pull does not merge it: git log %s shows its entries; docs/sync.md \"A deleted context branch\")\n",
				r.OrphanedTip.String()[:12], r.Orphaned, r.Orphaned)
		}
		if o.JSON {
			pr := r.Report()
			report.Pull = &pr
		} else {
			printPull(e, r)
		}
		if r.Found && r.Action != store.PullUpToDate {
			warnClashes(ctx, e, s)
		}
		// The notes of ctx's post-commit hook travel with the context branch (docs/blame.md); a failure
		// there is a warning, the branch's pull stands.
		if nr, err := s.PullNotes(ctx, r.Remote, store.RemoteFromUser); err != nil {
			fmt.Fprintf(e.stderr, "ctx: warning: %v\n", err)
		} else if nr.Found {
			fmt.Fprintf(info, "pull %s: %s at %s\n", r.Remote, store.NotesRef, nr.Tip.String()[:12])
		}
		// The agents' files enabled for refresh follow the pull (docs/adapters.md "Refresh").
		refreshAdapters(ctx, e, s, true)
		// Sessions teammates shared are indexed for search and blame (docs/blame.md "Sharing").
		indexSharedAfterPull(ctx, e, s)
		if !o.Push && r.Action == store.PullAdopted {
			if hint := hooksHint(ctx, s); hint != "" {
				fmt.Fprintln(info, hint)
			}
		}
	}
	if o.Push {
		r, err := s.Push(ctx, store.PushOptions{Remote: o.Remote, Strategy: o.Strategy})
		if r != nil && !o.JSON {
			for i := range r.Pulls {
				printPull(e, &r.Pulls[i])
			}
		}
		if err != nil {
			return err
		}
		if o.JSON {
			pr := r.Report()
			report.Push = &pr
		} else {
			printPush(e, s.BranchRef(), r)
		}
		nr, err := s.PushNotes(ctx, r.Remote, store.RemoteFromUser)
		if err != nil {
			return err
		}
		if nr.Found {
			fmt.Fprintf(info, "push %s: %s at %s\n", r.Remote, store.NotesRef, nr.Tip.String()[:12])
		}
	}
	switch {
	case !o.JSON:
		return nil
	case o.Pull && o.Push:
		return printJSON(e.stdout, report)
	case o.Pull:
		return printJSON(e.stdout, report.Pull)
	default:
		return printJSON(e.stdout, report.Push)
	}
}

// warnClashes warns, after a pull that moved the branch, of clashes on it (store.Clash: look-alike keys,
// decisions sharing a number or uid): each write passed its own check, a merge of two machines' writes
// can still put them side by side (docs/security.md "Look-alike keys"). ctx doctor reports them too. The
// check records what it found (store.RecordedClashes), which ctx status and the MCP status tool report
// without checking again: only a pull brings a clash from elsewhere.
func warnClashes(ctx context.Context, e *env, s *store.Store) {
	cs, err := s.Clashes(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "ctx: warning: looking for look-alike keys after the pull: %v\n", err)
		return
	}
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(e.stderr, "ctx: warning: the context branch holds %s (look-alike keys, decisions sharing a number or uid or superseding each other in a cycle, an entry in two scopes; repair: ctx doctor):\n", plural(len(cs), "clash", "clashes"))
	for _, c := range cs {
		ps := make([]string, 0, len(c.Paths))
		for _, p := range c.Paths {
			if c.Kind == "scopes" {
				ps = append(ps, string(p.Scope)+" "+p.Path)
			} else {
				ps = append(ps, p.Path)
			}
		}
		fmt.Fprintf(e.stderr, "  %s: %s\n", c.Kind, strings.Join(ps, ", "))
	}
}

// printPush says what a push did: this machine's ref, and the shared branch (docs/sync.md). A shared branch
// another machine moved first is no failure: one line says so.
func printPush(e *env, branch string, r *store.PushResult) {
	if r.Machine != "" {
		fmt.Fprintf(e.stdout, "push %s: %s at %s\n", r.Remote, r.Machine, r.Tip.String()[:12])
	}
	switch r.Shared {
	case store.SharedUpdated:
		fmt.Fprintf(e.stdout, "push %s: %s at %s\n", r.Remote, branch, r.Tip.String()[:12])
	case store.SharedBehind:
		fmt.Fprintf(e.stdout, "push %s: %s not moved: it has commits this machine has not merged yet (another machine pushed first; the next ctx sync merges both)\n", r.Remote, branch)
	}
}

// printPull says what a pull did: the hand edits recorded first, the action, notes, conflicts and what
// the refresh of .context/ kept or skipped.
func printPull(e *env, r *store.PullResult) {
	w := e.stdout
	if len(r.HandEdits) > 0 {
		fmt.Fprintf(w, "recorded %s of .context/ first\n", plural(len(r.HandEdits), "hand edit", "hand edits"))
	}
	switch {
	case !r.Found && r.SharedPruned:
		fmt.Fprintf(w, "pull %s: the remote has no context branch any more (deleted there; its remote-tracking ref was removed): your next ctx push publishes yours again\n", r.Remote)
	case !r.Found:
		fmt.Fprintf(w, "pull %s: the remote has no context branch yet (ctx push publishes yours)\n", r.Remote)
	case r.Action == store.PullUpToDate:
		fmt.Fprintf(w, "pull %s: already up to date at %s\n", r.Remote, r.New.String()[:12])
	case r.Action == store.PullMerged:
		fmt.Fprintf(w, "pull %s: merged into %s (%s)\n", r.Remote, r.New.String()[:12], plural(len(r.Conflicts), "conflict", "conflicts"))
	default:
		fmt.Fprintf(w, "pull %s: %s to %s\n", r.Remote, r.Action, r.New.String()[:12])
	}
	if r.Found && r.NoShared {
		fmt.Fprintf(w, "  note: the remote has no shared context branch (deleted there?), only machine refs, which were merged; your next ctx push publishes the branch again\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s: %s\n", n.Path, n.Message)
	}
	for _, cf := range r.Conflicts {
		fmt.Fprintf(w, "  conflict %s: %s %s (kept one version, the other is in conflicts/%s.json; see ctx conflicts)\n", cf.ID, cf.Path, cf.Field, cf.ID)
	}
	printDecided(w, r)
	for _, p := range r.RefreshKept {
		fmt.Fprintf(w, "  kept your hand edit of .context/%s (not overwritten)\n", p)
	}
	for _, p := range r.RefreshSkipped {
		fmt.Fprintf(w, "  skipped %s (not checked out; see ctx doctor)\n", p)
	}
}
