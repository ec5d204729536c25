package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// statusOptions are the flags of ctx status.
type statusOptions struct{ JSON bool }

func newStatusCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "status",
		Usage: "show the context branch, its tip, ahead/behind the remote, entry counts and hand edits of .context/",
		Flags: []cli.Flag{jsonFlag, formatFlag},
		Action: action(e, func(c *cli.Context) (statusOptions, error) {
			js, err := jsonOrFormat(c)
			return statusOptions{JSON: js}, err
		}, runStatus),
	}, "Shows the context branch and its tip, how far it is ahead of or behind the remote's (as of the\n"+
		"last pull or push: status does not fetch), the number of entries of each kind, git locks left in\n"+
		"the repository, entries ctx does not read, and the hand edits of the checked-out tree .context/.\n"+
		"With --json (--format json) it prints one JSON object: that status plus history (the agent-history\n"+
		"index: path, generation, sources, sessions, events) and local_usage (the tool calls this clone's MCP\n"+
		"servers answered); the MCP status tool returns the same object with read_only: true.",
		[]string{"ctx status", "ctx status --json", "ctx status --format json"},
		[]exit{{ExitNoStore, "not a git repository, or a context branch deleted with git (a repository that never had one shows the agent history)"}})
}

func runStatus(ctx context.Context, e *env, o statusOptions) error {
	// A short-lived process whose heap is a few MB at 10,000 entries (the status index): collecting it
	// costs more than it saves.
	defer lessGC(1 << 30)()
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		r, err := mcp.StatusReport(ctx, s, mcp.Options{Version: Version})
		if err != nil {
			return err
		}
		return printJSON(e.stdout, r)
	}
	st, err := s.Status(ctx)
	w := e.stdout
	var orphaned *store.OrphanedError
	if errors.As(err, &orphaned) {
		return err // the branch was deleted with git: its tip is named, exit 4 (docs/sync.md "A deleted context branch")
	}
	if errors.Is(err, store.ErrNotContextBranch) {
		return err // a branch of the user's under the name: ctx init --branch NAME (exit 4, as a write)
	}
	if errors.Is(err, store.ErrNotInitialized) {
		// A history-only repository is a valid one (docs/mcp.md "status: upgrade").
		fmt.Fprintln(w, "context:  not initialised here (no context branch): ctx init creates it, ctx pull fetches a remote's")
		fmt.Fprintln(w, "history:  the agent history works without it: ctx history sources, ctx status --json")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "branch:   %s at %s\n", s.BranchRef(), st.Tip[:12])
	switch {
	case st.Remote == "":
		fmt.Fprintln(w, "remote:   none")
	case st.TrackingTip == "":
		fmt.Fprintf(w, "remote:   %s: no %s (never synced, or the remote has no context branch as of the last pull: ctx push publishes it)\n", st.Remote, st.Tracking)
	default:
		fmt.Fprintf(w, "remote:   %s: %d ahead, %d behind %s\n", st.Remote, st.Ahead, st.Behind, st.Tracking)
	}
	if r := st.PullRefused; r != nil {
		// The counts above are against what was last accepted, not against the remote (docs/sync.md).
		tip := "its tip"
		if len(r.Tip) >= 12 {
			tip = "its tip " + r.Tip[:12]
		}
		fmt.Fprintf(w, "          the last pull (%s) refused %s: the counts are against what was last accepted, not the remote: %s\n",
			r.At, tip, r.Reason)
	}
	fmt.Fprintf(w, "entries:  %d knowledge, %d conventions, %d decisions, %d skills, %d sessions, %d activity, %d conflicts\n",
		st.Counts["knowledge"], st.Counts["conventions"], st.Counts["decisions"], st.Counts["skills"],
		st.Counts["history"], st.Counts["activity"], st.Counts["conflicts"])
	if st.CtxLock != "" {
		fmt.Fprintf(w, "lock:     %s (ctx writes wait for it)\n", st.CtxLock)
	}
	for _, l := range st.Locks {
		fmt.Fprintf(w, "locked:   %s: %s (%s old), %s\n", l.Ref, l.Path, time.Duration(l.AgeS)*time.Second, lockOwner(l))
	}
	if len(st.Unreadable) > 0 {
		fmt.Fprintf(w, "skipped:  %s ctx does not read (repair: ctx doctor):\n", plural(len(st.Unreadable), "entry", "entries"))
		for _, p := range st.Unreadable {
			fmt.Fprintf(w, "  %s: %s\n", p.Scope, p)
		}
	}
	if len(st.Clashes) > 0 {
		fmt.Fprintf(w, "clashes:  %s found at %s (look-alike keys, decisions sharing a number or uid or superseding each other in a cycle, an entry in two scopes; repair: ctx doctor):\n",
			plural(len(st.Clashes), "clash", "clashes"), st.ClashesCheckedAt[:12])
		for _, c := range st.Clashes {
			ps := make([]string, 0, len(c.Paths))
			for _, p := range c.Paths {
				ps = append(ps, p.Path)
			}
			fmt.Fprintf(w, "  %s: %s\n", c.Kind, strings.Join(ps, ", "))
		}
	}
	if st.CheckoutProblem != "" {
		fmt.Fprintf(w, "checkout: %s\n", st.CheckoutProblem)
	} else if st.Checkout != "" {
		var refused map[string]string
		if len(st.HandEdits) > 0 {
			// What ctx commit would refuse, so that the advice below is never one it turns down. Only
			// when there are hand edits: a clean status reads no file.
			if refused, err = s.HandEditProblems(ctx, st.HandEdits); err != nil {
				return err
			}
		}
		printCheckoutStatus(w, st, refused)
	}
	if st.Behind > 0 {
		fmt.Fprintf(w, "behind:   .context/ lacks %s of %s: ctx pull\n", plural(st.Behind, "commit", "commits"), st.Tracking)
	}
	adaptersStatusLines(ctx, e, s)
	return nil
}

// printCheckoutStatus is the checkout line of ctx status: "clean" only when .context/ mirrors the branch
// (no hand edit, no file behind it).
// refused holds, by path, the hand edits ctx commit would refuse and why.
func printCheckoutStatus(w io.Writer, st *store.Status, refused map[string]string) {
	if r := st.Refreshed; r != nil {
		fmt.Fprintf(w, "checkout: %s was behind the context branch (a write from another worktree or process): "+
			"brought up to date (%s written, %d removed)\n", st.Checkout, plural(r.Written, "file", "files"), r.Removed)
	}
	if len(st.GitSees) > 0 {
		// Never "clean" then: a git add -A of the user's branch would stage these (docs/security.md
		// "Private entries on disk").
		fmt.Fprintf(w, "checkout: %s is not ignored by git: it sees %s as untracked (git add -A would stage them): %s; ctx keeps %s/%s there to prevent it, and could not write it (the warning says why)\n",
			st.Checkout, plural(len(st.GitSees), "file", "files"), store.NamedFew(st.GitSees, 5), store.CheckoutDir, store.IgnoreFile)
	}
	switch {
	case st.CheckoutBehind:
		fmt.Fprintf(w, "checkout: %s, behind the context branch (its refresh did not finish: ctx status or any write refreshes it)\n", st.Checkout)
	case len(st.HandEdits) == 0 && len(st.Stale) == 0 && len(st.GitSees) == 0:
		fmt.Fprintf(w, "checkout: %s, clean\n", st.Checkout)
		return
	case len(st.HandEdits) == 0 && len(st.Stale) == 0:
		return
	case len(st.HandEdits) == 0:
		fmt.Fprintf(w, "checkout: %s:\n", st.Checkout)
	case len(refused) == 0:
		// Not optional for long: ctx pull and ctx sync record them first (sync then publishes them), as
		// ctx pull --help says (docs/sync.md "Hand edits"); not deletions, which they refuse until ctx
		// commit records them.
		deleted := 0
		for _, e := range st.HandEdits {
			if e.Change == store.ChangeDeleted {
				deleted++
			}
		}
		pull := "ctx pull and ctx sync record them first, and sync publishes them"
		switch {
		case deleted == len(st.HandEdits):
			pull = "ctx pull and ctx sync refuse deletions until ctx commit records them"
		case deleted > 0:
			pull = "ctx pull and ctx sync record them first, and sync publishes them, except deletions: they refuse those until ctx commit records them"
		}
		fmt.Fprintf(w, "checkout: %s, %s (record them with ctx commit, or throw them away with ctx restore; %s):\n",
			st.Checkout, plural(len(st.HandEdits), "hand edit", "hand edits"), pull)
	default:
		fmt.Fprintf(w, "checkout: %s, %s; ctx commit refuses %d of them (fix or remove those files, then record the rest with ctx commit):\n",
			st.Checkout, plural(len(st.HandEdits), "hand edit", "hand edits"), len(refused))
	}
	for _, e := range st.HandEdits {
		fmt.Fprintf(w, "  %-8s %s (%s)\n", e.Change, e.Path, e.Scope)
		if why, ok := refused[e.Path]; ok {
			fmt.Fprintf(w, "           refused: %s\n", reason(why, e.Path))
		}
	}
	for _, p := range st.Stale {
		fmt.Fprintf(w, "  behind   %s (the branch changed it; your hand edit is kept: ctx commit merges the two)\n", p)
	}
}

// lockOwner says whose a lock is and what to do about it (docs/locks.md).
func lockOwner(l store.LockInfo) string {
	switch l.Owner {
	case "ctx-stale":
		return "left by an interrupted ctx: its next write, push or pull removes it"
	case "ctx-live":
		return "held by a running ctx process"
	}
	return "not ctx's: if no git command is running in this repository, remove it: " + l.Fix
}
