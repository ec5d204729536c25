package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/gitstore/objread"
)

// Status is what `ctx status` shows (issue: branch, tip, ahead/behind against the remote-tracking ref,
// entry counts, hand edits of the checked-out tree).
type Status struct {
	Branch      string `json:"branch"`
	Tip         string `json:"tip"`
	Remote      string `json:"remote,omitempty"`
	Tracking    string `json:"tracking_ref,omitempty"`
	TrackingTip string `json:"tracking_tip,omitempty"`
	Ahead       int    `json:"ahead"`
	Behind      int    `json:"behind"`
	// PullRefused is the last pull of Remote that refused the remote's tip (nil: none since the last
	// accepted fetch): Ahead and Behind count against TrackingTip, what was last accepted, not the remote.
	PullRefused *PullRefused   `json:"pull_refused,omitempty"`
	Counts      map[string]int `json:"counts"`
	Checkout    string         `json:"checkout,omitempty"`
	HandEdits   []HandEdit     `json:"hand_edits"`
	// Unreadable are the entries of the context refs that ctx does not read (TreeProblems): skipped by every
	// reader, never checked out; ctx doctor says how to repair them.
	Unreadable []Problem `json:"unreadable"`
	// Stale lists the files of the checked-out tree that are behind the context branch: the branch changed
	// them since they were checked out, but they hold a hand edit, so the refresh left them (ctx commit
	// merges the edit with the branch's version).
	Stale []string `json:"stale"`
	// CheckoutBehind is set when the checked-out tree does not mirror the tips of the context refs (its
	// record names older commits: a refresh that could not finish).
	CheckoutBehind bool `json:"checkout_behind,omitempty"`
	// Refreshed is set when .context/ was behind the context refs (a write from another worktree, another
	// process, a pull by git) and this status brought it up to them before scanning it: what it wrote and
	// removed (nil: it mirrored the refs already).
	Refreshed *RefreshedCounts `json:"refreshed,omitempty"`
	// CheckoutProblem says why .context/ was neither scanned nor refreshed: it is missing after it was
	// checked out here (CheckoutMissing, ctx restore brings it back), or it is not ctx's to use (a symbolic
	// link, a file, files the user's repository tracks: CheckoutDirError). "" when none.
	CheckoutProblem string `json:"checkout_problem,omitempty"`
	CheckoutMissing bool   `json:"checkout_missing,omitempty"`
	// GitSees lists what git sees as untracked in .context/ (GitSeesCheckout: paths relative to it):
	// files `git add -A` would stage into the user's branch. Empty when ctx's .gitignore is in place there
	// (the usual case, checked without git).
	GitSees   []string `json:"git_sees,omitempty"`
	Private   string   `json:"private_tip,omitempty"`
	Ephemeral string   `json:"ephemeral_tip,omitempty"`
	// Locks are the lock files on the context refs and the remote-tracking ref (docs/locks.md): ctx's own
	// stale ones, which its next write or sync removes, live ones, and foreign ones with the fix.
	Locks []gitstore.LockInfo `json:"locks"`
	// CtxLock says who holds the ctx lock while status runs ("" when free): a ctx process waiting for it
	// says the same (docs/locks.md "Waiting for the ctx lock").
	CtxLock string `json:"ctx_lock,omitempty"`
	// Clashes are the entries of the context refs ctx would not write side by side (look-alike keys,
	// decisions sharing a number or uid) as the last check found them (RecordedClashes): a pull that moved
	// the branch, or ctx doctor. Never nil.
	Clashes []Clash `json:"clashes"`
	// ClashesCheckedAt is the context branch's tip at that check; "" when none was recorded (ctx doctor
	// checks).
	ClashesCheckedAt string `json:"clashes_checked_at"`
}

// Status computes the store's status. ErrNotInitialized when there is no context branch. When the
// checked-out tree does not mirror the refs (a write from another worktree or process, a pull by git) it
// first brings it up to them (Refresh), so that the hand edits it reports are edits, not a stale view. A
// .context/ that is missing after it was checked out here, or is not ctx's to use (a symbolic link,
// tracked files: CheckoutDirError), is neither scanned nor refreshed: CheckoutProblem says why.
//
// It stats only what could have changed, as git status does with its index (docs/architecture.md "The
// status index"): the entry counts are kept per tips, the record's entries and the stat data of every
// file and folder of .context/ in the status index, so that a status of an unchanged store reads no
// object, parses no record and lists no folder.
func (s *Store) Status(ctx context.Context) (*Status, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	if tips[Public].IsZero() {
		if tip := s.orphanedTip(ctx); !tip.IsZero() {
			return nil, &OrphanedError{Branch: s.cfg.Branch, Tip: tip}
		}
		return nil, ErrNotInitialized
	}
	// A branch of the user's under the name is no store: not read, not checked out (exit 4, as a write).
	if tree, err := s.repo.TreeOf(ctx, tips[Public]); err != nil {
		return nil, err
	} else if err := s.checkContextTree(ctx, tree); err != nil {
		return nil, err
	}
	st := &Status{Branch: s.cfg.Branch, Tip: tips[Public].String(), Counts: map[string]int{}, HandEdits: []HandEdit{}, Stale: []string{}}
	countAt := func() (map[string]int, error) { return s.entryCounts(ctx) }
	root := s.CheckoutRoot()
	var x *statusIndex
	clean, cleanKnown := false, false
	if root != "" {
		o := scanOptions{tips: tips, mirror: true, counts: countAt}
		st.HandEdits, x, err = s.scanCheckout(ctx, o)
		if errors.Is(err, ErrCheckoutDir) || errors.Is(err, ErrCheckoutMissing) {
			// Reported, never refreshed: a link is not followed, a tracked file not overwritten, a removed
			// .context/ not checked out again behind the user's back (ctx restore does).
			st.CheckoutProblem, st.CheckoutMissing = err.Error(), errors.Is(err, ErrCheckoutMissing)
			st.HandEdits, x, err = []HandEdit{}, nil, nil
			root = ""
		}
		if errors.Is(err, errNeedRefresh) {
			refreshed, rerr := s.Refresh(ctx)
			if rerr != nil {
				// Status still reports what it can (the refs, the locks); the hand edits below are then
				// against the last refresh that completed.
				warn(ctx, fmt.Sprintf("refreshing %s failed: %v", CheckoutDir, rerr))
			} else {
				clean, cleanKnown = refreshed.Clean, true
				if n, m := len(refreshed.Written), len(refreshed.Removed); n+m > 0 {
					st.Refreshed = &RefreshedCounts{Written: n, Removed: m}
				}
			}
			o.mirror = false
			st.HandEdits, x, err = s.scanCheckout(ctx, o)
		}
		if err != nil {
			return nil, err
		}
	}
	if x != nil && x.countsOK {
		st.Counts = x.counts()
	} else if st.Counts, err = countAt(); err != nil {
		return nil, err
	}
	// The record knows when the tips it mirrors hold no entry ctx does not read: the trees are walked only
	// when there is something to list.
	if !cleanKnown && x != nil && !x.incomplete && sameCommits(x.commits, tipStrings(tips)) {
		clean = x.clean
	}
	st.Locks = s.Locks(ctx)
	st.CtxLock = s.repo.CtxLockHolder()
	st.Clashes, st.ClashesCheckedAt = s.RecordedClashes(tips, root)
	if !tips[Private].IsZero() {
		st.Private = tips[Private].String()
	}
	if !tips[Ephemeral].IsZero() {
		st.Ephemeral = tips[Ephemeral].String()
	}
	if remote := s.RemoteName(ctx); remote != "" {
		st.Remote, st.Tracking = remote, s.TrackingRef(remote)
		tt, err := s.repo.Resolve(ctx, st.Tracking)
		if err != nil {
			return nil, err
		}
		if !tt.IsZero() {
			st.TrackingTip = tt.String()
			if st.Ahead, err = s.repo.CountAhead(ctx, tips[Public], tt); err != nil {
				return nil, err
			}
			if st.Behind, err = s.repo.CountAhead(ctx, tt, tips[Public]); err != nil {
				return nil, err
			}
		}
		if r, err := s.LastPullRefused(); err == nil && r != nil && r.Remote == remote && r.Tip != st.TrackingTip {
			st.PullRefused = r
		}
	}
	if !clean {
		if st.Unreadable, err = s.TreeProblems(ctx); err != nil {
			return nil, err
		}
	}
	if st.Unreadable == nil {
		st.Unreadable = []Problem{}
	}
	if root != "" {
		st.Checkout = root
		if st.GitSees, err = s.GitSeesCheckout(ctx); err != nil {
			warn(ctx, fmt.Sprintf("asking git whether it ignores %s failed: %v", CheckoutDir, err))
		}
		if st.HandEdits == nil {
			st.HandEdits = []HandEdit{}
		}
		now, err := s.Tips(ctx)
		if err != nil {
			return nil, err
		}
		want := tipStrings(now)
		if x == nil || x.incomplete || !sameCommits(x.commits, want) {
			st.CheckoutBehind = true
		}
		// A hand-edited file is behind when the branch's version is no longer the one it was edited from.
		for _, e := range st.HandEdits {
			if x == nil || e.Change == ChangeAdded {
				continue
			}
			f, ok := x.entry(e.Path)
			if !ok {
				continue
			}
			if now[f.scope].IsZero() {
				st.Stale = append(st.Stale, e.Path)
				continue
			}
			tree, err := s.repo.TreeOf(ctx, now[f.scope])
			if err != nil {
				return nil, err
			}
			h, err := s.repo.PathHash(ctx, tree, e.Path)
			if err != nil {
				return nil, err
			}
			if h != f.blob {
				st.Stale = append(st.Stale, e.Path)
			}
		}
	}
	if PublicOnly(ctx) {
		// Nothing of the private and ephemeral scopes for a public-only caller (WithPublicOnly).
		st.Private, st.Ephemeral = "", ""
		pub := st.HandEdits[:0:0]
		for _, e := range st.HandEdits {
			if e.Scope == Public {
				pub = append(pub, e)
			}
		}
		st.HandEdits, st.Stale = pub, []string{} // the counts come from a public-only view already
	}
	return st, nil
}

// entryCounts counts the entries of each kind at the refs' tips, as ctx status shows them.
func (s *Store) entryCounts(ctx context.Context) (map[string]int, error) {
	v, err := s.RefView(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, dir := range []string{"knowledge", "conventions", "decisions", "skills", "history", "activity", "conflicts"} {
		names, err := v.List(ctx, dir)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, l := range names {
			if dir == "skills" || dir == "activity" || !l.Dir {
				n++
			}
		}
		counts[dir] = n
	}
	// Sessions are in history/YYYY/MM/ as well (docs/format.md "Layout for growth").
	sessions, err := sessionFiles(ctx, v)
	if err != nil {
		return nil, err
	}
	counts["history"] = len(sessions)
	return counts, nil
}

// Locks lists the lock files that block ctx's work (docs/locks.md): on the refs of the three scopes, on the
// remote-tracking ref of the context branch, and packed-refs.lock. Never nil.
func (s *Store) Locks(ctx context.Context) []gitstore.LockInfo {
	refs := append(s.Refs(), "packed-refs")
	if remote := s.RemoteName(ctx); remote != "" {
		refs = append(refs, s.TrackingRef(remote))
	}
	out := s.repo.RefLocks(refs)
	if out == nil {
		out = []gitstore.LockInfo{}
	}
	return out
}

// LogEntry is one context commit as `ctx log` shows it: the trailers of docs/architecture.md "Commits" and
// the author.
type LogEntry struct {
	Commit  string   `json:"commit"`
	Summary string   `json:"summary"`
	Op      string   `json:"op"`
	Key     string   `json:"key,omitempty"`
	Agent   string   `json:"agent,omitempty"`
	Session string   `json:"session,omitempty"`
	Machine string   `json:"machine,omitempty"`
	Author  string   `json:"author"`
	Time    string   `json:"time"`
	Parents []string `json:"parents"`
	// Renumbered is a merge commit's Ctx-Renumbered trailer: "OLD -> NEW, ..." for the decisions it
	// renumbered, whose earlier commits name the old number as their Key.
	Renumbered string `json:"renumbered,omitempty"`
	// Renamed are the commit's Ctx-Renamed trailers, "OLD -> NEW" each: the files it renamed (a merge's
	// renumbered decisions, a decision renamed by hand and recorded by ctx commit), whose earlier commits
	// name the old path.
	Renamed []string `json:"renamed,omitempty"`
}

// TrailerValues is every value of the trailer key in a commit message's last paragraph (a key may repeat:
// Ctx-Renamed).
func TrailerValues(msg, key string) []string { return objread.TrailerValues(msg, key) }

// Trailers parses the "Key: value" lines of a commit message's last paragraph (git-interpret-trailers(1)).
func Trailers(msg string) map[string]string { return objread.Trailers(msg) }

// Log lists up to n context commits of the public branch (all when n <= 0), newest first, following
// first parents; path filters to commits that changed that file or folder of the store.
func (s *Store) Log(ctx context.Context, n int, path string) ([]LogEntry, error) {
	tip, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, ErrNotInitialized
	}
	commits, err := s.repo.LogAll(ctx, tip, n, strings.Trim(path, "/"))
	if err != nil {
		return nil, err
	}
	out := make([]LogEntry, 0, len(commits))
	for _, c := range commits {
		t := Trailers(c.Message)
		e := LogEntry{Commit: c.Hash.String(), Summary: strings.SplitN(c.Message, "\n", 2)[0], Op: t["Ctx-Op"],
			Key: t["Ctx-Key"], Agent: t["Ctx-Agent"], Session: t["Ctx-Session"], Machine: t["Ctx-Machine"],
			Author: c.Author.Name + " <" + c.Author.Email + ">", Time: c.Author.When.UTC().Format(time.RFC3339),
			Renumbered: t["Ctx-Renumbered"], Renamed: TrailerValues(c.Message, "Ctx-Renamed")}
		for _, p := range c.ParentHashes {
			e.Parents = append(e.Parents, p.String())
		}
		out = append(out, e)
	}
	return out, nil
}

// RefreshedCounts is what a status's refresh of .context/ did: files written and removed.
type RefreshedCounts struct {
	Written int `json:"written"`
	Removed int `json:"removed"`
}
