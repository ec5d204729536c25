package store

import (
	"context"
	crand "crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/merge"
)

// DefaultTimeout bounds one network transfer (docs/architecture.md "Sync").
const DefaultTimeout = 60 * time.Second

// MaxTimeout is the longest transfer timeout ctx accepts (`--timeout`, `ctx config sync.timeout`): a week.
// A longer one is refused where it is given; a config.json edited by hand past it counts as MaxTimeout
// (a bound keeps the sum of push's retry budget, a multiple of the timeout, inside time.Duration).
const MaxTimeout = 7 * 24 * time.Hour

// maxPushRetries bounds the count of push's fetch-merge-retry loop when the remote keeps moving, and
// pushBudget (a multiple of the transfer timeout) its time. Every lost race means another pusher won, so
// with N machines pushing at once the last one needs N-1 retries: 16 left 3 of 20 concurrent syncs
// failing (bench/sync-stress.sh, docs/sync.md); the time budget, not the count, is what bounds a push now.
const (
	maxPushRetries    = 64
	pushBudgetTimeout = 2
)

// pushBackoff is the pause before retry attempt (0-based): exponential from 50 ms, capped at 3.2 s, and
// randomized to [25%, 125%) of that, so that racing pushers spread out instead of colliding again — the
// more often a pusher lost, the more pushers it is racing, and the longer it stays out of their way.
func pushBackoff(attempt int) time.Duration {
	d := 50 * time.Millisecond << min(attempt, 6)
	return d/4 + rand.N(d)
}

// RemoteName picks the remote: the configured one, else origin, else the only remote; "" when none.
func (s *Store) RemoteName(ctx context.Context) string {
	if s.cfg.Remote != "" {
		return s.cfg.Remote
	}
	remotes, err := s.repo.Remotes(ctx)
	if err != nil || len(remotes) == 0 {
		return ""
	}
	for _, r := range remotes {
		if r.Name == "origin" {
			return "origin"
		}
	}
	if len(remotes) == 1 {
		return remotes[0].Name
	}
	return ""
}

// TrackingRef is the remote-tracking ref of the context branch, refs/remotes/<remote>/<branch>.
//
// When remote is a URL or path rather than a configured remote's name (`ctx pull --remote URL`), git has no
// remote-tracking namespace for it: the fetched tip is kept in refs/ctx/fetch/<first 12 hex of the
// SHA-1 of the URL>/<branch>, a local ref that is never pushed.
func (s *Store) TrackingRef(remote string) string {
	if remotes, err := s.repo.Remotes(context.Background()); err == nil {
		for _, r := range remotes {
			if r.Name == remote {
				return "refs/remotes/" + remote + "/" + s.cfg.Branch
			}
		}
	}
	sum := sha1.Sum([]byte(remote))
	return "refs/ctx/fetch/" + hex.EncodeToString(sum[:])[:12] + "/" + s.cfg.Branch
}

// FetchRefspec is what ctx fetches: the remote's context branch into its remote-tracking ref (by way of a
// quarantine ref, see fetch). Private and ephemeral refs are never in a refspec (docs/architecture.md "Sync").
func (s *Store) FetchRefspec(remote string) string {
	return "+" + s.BranchRef() + ":" + s.TrackingRef(remote)
}

// PushRefspec is the only refspec ctx pushes: the context branch to the same name, never forced.
func (s *Store) PushRefspec() string { return s.BranchRef() + ":" + s.BranchRef() }

// TransferTimeout is how long one fetch or push may take before ctx gives up: SetTransferTimeout's, else
// the configured sync.timeout, else DefaultTimeout.
func (s *Store) TransferTimeout() time.Duration { return s.timeout() }

func (s *Store) timeout() time.Duration {
	if s.timeoutOverride > 0 {
		return min(s.timeoutOverride, MaxTimeout)
	}
	if s.cfg.TimeoutSecs > 0 {
		if int64(s.cfg.TimeoutSecs) >= int64(MaxTimeout/time.Second) {
			return MaxTimeout
		}
		return time.Duration(s.cfg.TimeoutSecs) * time.Second
	}
	return DefaultTimeout
}

type progressKey struct{}

// WithProgress returns ctx carrying f, a terminal that receives git's progress output during the
// transfers of Pull and Push run with it; a nil f shows none (the default).
func WithProgress(ctx context.Context, f *os.File) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// progress is the terminal of WithProgress, nil without one.
func progress(ctx context.Context) *os.File {
	f, _ := ctx.Value(progressKey{}).(*os.File)
	return f
}

// fetch fetches the remote's context branch and returns its tip (found false when the remote has none).
// git fsck checks every received object; the fetch lands on a quarantine ref of its own
// (refs/ctx/incoming/<random>), and only once CheckIncoming accepted the tip does the remote-tracking ref
// move to it: a rejected commit moves no ref (docs/security.md). The quarantine ref is always removed.
func (s *Store) fetch(ctx context.Context, remote string, origin gitstore.RemoteOrigin) (gitstore.Hash, bool, error) {
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	s.clearIncoming(ctx)
	var rnd [8]byte
	_, _ = crand.Read(rnd[:])
	incoming := incomingPrefix + hex.EncodeToString(rnd[:])
	release := s.holdQuarantine(incoming)
	defer release()
	opt := gitstore.TransferOptions{Progress: progress(ctx), Origin: origin}
	found, err := s.repo.Fetch(tctx, remote, "?+"+s.BranchRef()+":"+incoming, opt)
	var theirs gitstore.Hash
	if found && err == nil {
		theirs, err = s.repo.Resolve(ctx, incoming)
		if !theirs.IsZero() {
			defer func() {
				// Best effort: a quarantine ref left behind is removed by the next fetch (clearIncoming).
				_ = s.repo.UpdateRef(context.WithoutCancel(ctx), incoming, theirs, gitstore.ZeroHash, "ctx: drop quarantine ref")
			}()
		}
	}
	what := remote + "'s " + s.cfg.Branch + " branch"
	if errors.Is(err, gitstore.ErrFsck) {
		err = s.diagnoseFsck(tctx, remote, what, err, opt)
		s.recordPullRefused(ctx, remote, theirs, err)
		return gitstore.ZeroHash, false, err
	}
	if err != nil || !found {
		return gitstore.ZeroHash, false, err
	}
	tracking := s.TrackingRef(remote)
	prev, err := s.repo.Resolve(ctx, tracking)
	if err != nil {
		return gitstore.ZeroHash, false, err
	}
	ours, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return gitstore.ZeroHash, false, err
	}
	if err := s.CheckIncoming(ctx, what, theirs, ours, []gitstore.Hash{prev}); err != nil {
		s.recordPullRefused(ctx, remote, theirs, err)
		return gitstore.ZeroHash, false, err
	}
	if err := s.moveTracking(ctx, remote, tracking, prev, theirs); err != nil {
		return gitstore.ZeroHash, false, err
	}
	s.clearPullRefused(remote)
	return theirs, true, nil
}

// incomingPrefix is the folder of the quarantine refs of fetches (see fetch).
const incomingPrefix = gitstore.QuarantinePrefix

// newQuarantine clears the quarantine refs of earlier pulls (clearIncoming) and returns a new folder of
// quarantine refs, "refs/ctx/incoming/<16 hex>/", held as this process's until release.
func (s *Store) newQuarantine(ctx context.Context) (q string, release func()) {
	s.clearIncoming(ctx)
	var rnd [8]byte
	_, _ = crand.Read(rnd[:])
	q = incomingPrefix + hex.EncodeToString(rnd[:]) + "/"
	return q, s.holdQuarantine(q)
}

// holdQuarantine marks the quarantine ref or folder q (under incomingPrefix) as this process's until
// release: a process killed before removing them leaves them to the next one that takes the ctx lock
// (gitstore.Repo.HoldQuarantine, docs/locks.md).
func (s *Store) holdQuarantine(q string) (release func()) {
	return s.repo.HoldQuarantine(strings.TrimSuffix(strings.TrimPrefix(q, incomingPrefix), "/"))
}

// clearIncoming removes what killed fetches left of their quarantine refs: ctx's own stale locks
// (RecoverLocks; a live fetch's lock is waited for) and refs older than the transfer timeout, which no
// running fetch can still use. Best effort: a failure here never fails the fetch.
func (s *Store) clearIncoming(ctx context.Context) {
	var locked []string
	for _, lr := range s.repo.LooseRefsUnder(incomingPrefix) {
		if lr.Locked {
			locked = append(locked, lr.Name)
		}
		if lr.Exists && lr.Age > s.timeout()+time.Minute {
			if h, err := s.repo.Resolve(ctx, lr.Name); err == nil && !h.IsZero() {
				_ = s.repo.UpdateRef(ctx, lr.Name, h, gitstore.ZeroHash, "ctx: drop a stale quarantine ref")
			}
		}
	}
	if len(locked) > 0 {
		_ = s.repo.RecoverLocks(ctx, locked)
	}
}

// diagnoseFsck turns git's fsck refusal of a fetch into a RejectedError naming the commit and path: the
// branch is fetched again, without fsck, into a throwaway repository (never into this one) and checked
// there with gitstore.CheckHistory. When that fails, git's own error is returned.
func (s *Store) diagnoseFsck(ctx context.Context, remote, what string, fsckErr error, opt gitstore.TransferOptions) error {
	q, tip, cleanup, err := s.repo.FetchQuarantine(ctx, remote, s.BranchRef(), opt)
	defer cleanup()
	if err != nil {
		return fsckErr
	}
	rej := &RejectedError{What: what, Commit: tip}
	var te *gitstore.TransferError
	if errors.As(fsckErr, &te) {
		rej.Fsck = te.Reason
	} else {
		rej.Fsck = fsckErr.Error()
	}
	seen := map[string]bool{}
	add := func(p Problem) {
		if k := p.Commit + "\x00" + p.Path; !seen[k] {
			seen[k] = true
			if len(rej.Problems) == maxListedProblems {
				rej.More = true
				return
			}
			rej.Problems = append(rej.Problems, p)
		}
	}
	if tree, err := q.TreeOf(ctx, tip); err == nil {
		if ps, err := treeProblemsIn(ctx, q, tip, "", tree, gitstore.ZeroHash); err == nil {
			for _, p := range ps {
				add(p)
			}
		}
	}
	if hist, err := q.CheckHistory(ctx, tip, nil, maxListedProblems+1, maxTipFiles); err == nil {
		for _, np := range hist {
			reason, _ := itemProblem(np.Item)
			add(Problem{Commit: np.Commit.String(), Path: np.Item.Path(), Entry: np.Item.Kind(), Reason: reason, Unsafe: true})
		}
	}
	// Nothing ctx itself refuses (git's fsck found another fault, an unsorted tree): still the commit is
	// named, with git's words.
	return rej
}

// RemoteOrigin says who named a remote (gitstore.RemoteOrigin): the user, or an agent, which may only
// name a configured remote.
type RemoteOrigin = gitstore.RemoteOrigin

// The origins of a remote value.
const (
	RemoteFromUser  = gitstore.FromUser
	RemoteFromAgent = gitstore.FromAgent
)

// remoteRefused is a remote that CheckRemote refuses: an invalid input (ErrInvalid: CLI exit 2, MCP tool
// error) that still unwraps to the *gitstore.RemoteError.
type remoteRefused struct{ *gitstore.RemoteError }

func (e remoteRefused) Unwrap() error        { return e.RemoteError }
func (e remoteRefused) Is(target error) bool { return target == ErrInvalid }

// CheckRemote refuses a remote value that must not reach git (gitstore.Repo.CheckRemote; docs/security.md,
// "Trust boundaries: remotes and arguments"): the error wraps ErrInvalid and *gitstore.RemoteError.
func (s *Store) CheckRemote(remote string, origin RemoteOrigin) error {
	err := s.repo.CheckRemote(remote, origin)
	var re *gitstore.RemoteError
	if errors.As(err, &re) {
		return remoteRefused{re}
	}
	return err
}

// PullResult says what Pull did.
type PullResult struct {
	Remote string
	// Orphaned is the ref (under OrphanedPrefix) that keeps OrphanedTip, the last tip of a context branch
	// deleted with git that .context/ was checked out from; "" when there was none.
	Orphaned    string
	OrphanedTip gitstore.Hash
	Found       bool             // the remote has a context branch
	Action      PullAction       // what happened to the local context branch
	Old, New    gitstore.Hash    // local tip before and after
	Conflicts   []merge.Conflict // open conflicts written as conflicts/<id>.json by the merge
	Decided     []merge.Conflict // conflicts decided by the pull's Strategy (no record written)
	Strategy    Strategy
	Notes       []merge.Note
	HandEdits   []HandEdit // hand edits of .context/ committed before the pull
	RefreshKept []string   // files of .context/ edited by hand and not overwritten
	// RefreshSkipped are entries of the refs the refresh did not check out (Refreshed.Skipped).
	RefreshSkipped []Problem
	Warnings       []string // problems after the branch moved (the pull landed): refreshing .context/ failed
	// NoShared: the remote has machine refs (Found) but no shared branch (deleted there); SharedPruned:
	// the remote-tracking ref that named it was removed by this pull. The next push publishes the branch.
	NoShared, SharedPruned bool
}

// PullAction says what Pull (or MergeCommit) did to the local context branch.
type PullAction string

// The pull actions.
const (
	PullNone        PullAction = "none"         // nothing: the remote has no context branch
	PullUpToDate    PullAction = "up-to-date"   // the local branch already had the remote's commits
	PullFastForward PullAction = "fast-forward" // the local branch moved to the remote's tip
	PullMerged      PullAction = "merge"        // a two-parent merge commit of both sides was made
	PullAdopted     PullAction = "adopted"      // the repository had no context branch and took the remote's
)

// String is the action's name as ctx prints it ("fast-forward").
func (a PullAction) String() string { return string(a) }

// PullOptions tune Pull (and MergeCommit, which ignores Remote).
type PullOptions struct {
	// Remote is the remote's name or URL; "" is the configured remote, else origin (RemoteName).
	Remote string
	// Strategy decides every conflict of the merge at once ("ours" or "theirs"); "" records them.
	Strategy Strategy
	// Origin says who named the remote: gitstore.FromAgent (an MCP argument) accepts only the name of a
	// configured remote (CheckRemote).
	Origin RemoteOrigin
}

// PushOptions tune Push.
type PushOptions struct {
	// Remote is the remote's name or URL; "" is the configured remote, else origin (RemoteName).
	Remote string
	// Strategy decides the conflicts of the merges Push makes when the remote moved (PullOptions).
	Strategy Strategy
	// Origin says who named the remote (PullOptions).
	Origin RemoteOrigin
}

// Pull fetches the remote's context branch into its remote-tracking ref, then fast-forwards the local
// branch or makes a two-parent merge commit of both sides with the merge layer (docs/merge.md,
// docs/architecture.md "Sync"), and refreshes the checked-out tree. Hand edits pending in .context/ are
// committed first, so none is lost; files deleted by hand are not: the pull fails with a
// *HandDeletionsError, having fetched and committed nothing (docs/architecture.md "Hand edits"). A repository without a local context branch adopts the remote's (a
// fresh clone).
// With o.Strategy set, conflicts of the merge are decided in the merge commit itself (applyStrategy).
// Without o.Strategy, conflicts are recorded as conflicts/<id>.json (docs/format.md).
func (s *Store) Pull(ctx context.Context, o PullOptions) (*PullResult, error) {
	remote := o.Remote
	if _, err := ParseStrategy(string(o.Strategy)); err != nil {
		return nil, err
	}
	if remote == "" {
		remote = s.RemoteName(ctx)
	}
	if remote == "" {
		return nil, errors.New("no remote: add one with `git remote add origin <url>` or pass --remote")
	}
	if err := s.CheckRemote(remote, o.Origin); err != nil {
		return nil, err
	}
	if err := s.checkBranchNotCheckedOut(); err != nil {
		return nil, err
	}
	res := &PullResult{Remote: remote, Action: PullNone, Strategy: o.Strategy}
	var err error
	if res.Orphaned, res.OrphanedTip, err = s.keepOrphaned(ctx); err != nil {
		return nil, err
	}
	defer s.made.drop()
	defer s.scanned.drop()
	// A link or tracked files at .context are refused before anything is fetched (docs/security.md
	// "Trust boundaries: the user's branches"), also on a fresh clone that has no context branch yet.
	if _, err := s.checkCheckoutDir(ctx); err != nil {
		return nil, err
	}
	if ok, _ := s.Initialized(ctx); ok {
		_, edits, err := s.commitHandEdits(ctx, "", true)
		var hd *HandDeletionsError
		if errors.As(err, &hd) || errors.Is(err, ErrCheckoutMissing) || errors.Is(err, ErrCheckoutDir) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("record hand edits before pull: %w", err)
		}
		res.HandEdits = edits
	}
	fetched, err := s.fetchAll(ctx, remote, o.Origin)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, fetched.Warnings...)
	res.Found = !fetched.Shared.IsZero() || len(fetched.Machines) > 0
	res.NoShared, res.SharedPruned = fetched.Shared.IsZero(), fetched.SharedPruned
	if !res.Found {
		return res, nil
	}
	if err := s.integrateAll(ctx, fetched, res); err != nil {
		return nil, err
	}
	if err := s.ensureExcluded(); err != nil {
		return nil, err
	}
	ref, err := s.Refresh(ctx)
	if err != nil {
		// The branch moved: the pull landed. A retry would find it up to date and refresh again.
		res.Warnings = append(res.Warnings, warn(ctx, refreshFailed("pulled", err)))
		return res, nil
	}
	res.RefreshKept, res.RefreshSkipped = ref.Kept, ref.Skipped
	return res, nil
}

// integrateAll brings the tips of f into the local branch, one after another in pullTips' order, each
// adopted, fast-forwarded or merged by integrate (a merge commit names the machine ref it merged:
// "merge origin machines/<id>"). res sums them up: the first Old, the last New, the strongest action
// (merge, then adopted, then fast-forward), every conflict and note.
func (s *Store) integrateAll(ctx context.Context, f *fetchedTips, res *PullResult) error {
	ours, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return err
	}
	res.Action, res.Old, res.New = PullUpToDate, ours, ours
	tips, err := s.pullTips(ctx, f, ours)
	if err != nil {
		return err
	}
	rank := map[PullAction]int{PullUpToDate: 0, PullFastForward: 1, PullAdopted: 2, PullMerged: 3}
	for i, t := range tips {
		one := &PullResult{Remote: res.Remote, Strategy: res.Strategy}
		if id, ok := strings.CutPrefix(t.Ref, MachineRefPrefix); ok {
			one.Remote += " machines/" + id
		}
		if err := s.integrate(ctx, t.Tip, one); err != nil {
			return err
		}
		if i == 0 {
			res.Old = one.Old
		}
		res.New = one.New
		if rank[one.Action] > rank[res.Action] {
			res.Action = one.Action
		}
		res.Conflicts = append(res.Conflicts, one.Conflicts...)
		res.Decided = append(res.Decided, one.Decided...)
		res.Notes = append(res.Notes, one.Notes...)
	}
	return nil
}

// integrate brings commit theirs into the local branch: adopt, fast-forward, or merge.
func (s *Store) integrate(ctx context.Context, theirs gitstore.Hash, res *PullResult) error {
	for attempt := 0; attempt < 5; attempt++ {
		ours, err := s.repo.Resolve(ctx, s.BranchRef())
		if err != nil {
			return err
		}
		res.Old, res.New = ours, ours
		if ours.IsZero() {
			// A fresh clone's pull checks .context/ out for the first time: files ctx did not write there
			// are refused as ctx init refuses them, before the branch is adopted.
			if err := s.refuseForeignCheckout(ctx, "ctx pull", theirs); err != nil {
				return err
			}
			if err := s.repo.UpdateRef(ctx, s.BranchRef(), ours, theirs, "ctx pull: adopt"); errors.Is(err, gitstore.ErrStaleRef) {
				continue
			} else if err != nil {
				return err
			}
			res.Action, res.New = PullAdopted, theirs
			return nil
		}
		if up, err := s.repo.IsAncestor(ctx, theirs, ours); err != nil {
			return err
		} else if up {
			res.Action = PullUpToDate
			return nil
		}
		if ff, err := s.repo.IsAncestor(ctx, ours, theirs); err != nil {
			return err
		} else if ff {
			if err := s.repo.UpdateRef(ctx, s.BranchRef(), ours, theirs, "ctx pull: fast-forward"); errors.Is(err, gitstore.ErrStaleRef) {
				continue
			} else if err != nil {
				return err
			}
			res.Action, res.New = PullFastForward, theirs
			return nil
		}
		if fresh, err := s.onlyInit(ctx, ours, theirs); err != nil {
			return err
		} else if fresh {
			// A store created offline (ctx init could not reach the remote) holds nothing but its own manifest:
			// the remote's context branch replaces it, as init would have adopted it.
			if err := s.repo.UpdateRef(ctx, s.BranchRef(), ours, theirs, "ctx pull: adopt over an offline init"); errors.Is(err, gitstore.ErrStaleRef) {
				continue
			} else if err != nil {
				return err
			}
			res.Action, res.New = PullAdopted, theirs
			res.Notes = append(res.Notes, merge.Note{Path: ManifestPath, Kind: "adopted",
				Message: "this store was created offline and held only its manifest: the remote's context branch replaces it"})
			return nil
		}
		return s.mergeCommit(ctx, theirs, res)
	}
	return fmt.Errorf("pull: the context branch kept moving; try again")
}

// onlyInit reports whether ours is the lone commit of `ctx init` (no parent, Ctx-Op: init, a tree holding
// manifest.json alone) and shares no history with theirs.
func (s *Store) onlyInit(ctx context.Context, ours, theirs gitstore.Hash) (bool, error) {
	c, err := s.repo.Commit(ctx, ours)
	if err != nil {
		return false, err
	}
	if len(c.ParentHashes) != 0 || Trailers(c.Message)["Ctx-Op"] != "init" {
		return false, nil
	}
	if base, err := s.repo.MergeBase(ctx, ours, theirs); err != nil || !base.IsZero() {
		return false, err
	}
	n := 0
	err = s.repo.Walk(ctx, c.TreeHash, func(p string, _ gitstore.Hash) error {
		if n++; p != ManifestPath {
			n = 2
		}
		return nil
	})
	return err == nil && n == 1, err
}

// MergeCommit merges commit theirs (already in the repository) into the local context branch with the
// merge layer and commits the result with both parents, as Pull does after its fetch; it neither fetches
// nor refreshes the checked-out tree. It always merges, even when one side contains the other (callers
// that want fast-forwards use Pull). It is the entry point of the merge benchmark.
func (s *Store) MergeCommit(ctx context.Context, theirs gitstore.Hash, o PullOptions) (*PullResult, error) {
	if _, err := ParseStrategy(string(o.Strategy)); err != nil {
		return nil, err
	}
	res := &PullResult{Remote: theirs.String()[:12], Action: PullNone, Found: true, Strategy: o.Strategy}
	defer s.made.drop() // no refresh follows
	old, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return nil, err
	}
	if old.IsZero() {
		return nil, ErrNotInitialized
	}
	res.Old = old
	if err := s.CheckIncoming(ctx, "commit "+theirs.String()[:12], theirs, old, nil); err != nil {
		return nil, err
	}
	if err := s.mergeCommit(ctx, theirs, res); err != nil {
		return nil, err
	}
	return res, nil
}

// mergeCommit merges theirs into the local branch with merge.Tree and commits the result with both
// parents (trailers Ctx-Op: merge and Ctx-Conflicts, the number of conflict records written; with
// res.Strategy set also Ctx-Strategy and Ctx-Decided, the number of conflicts it decided).
func (s *Store) mergeCommit(ctx context.Context, theirs gitstore.Hash, res *PullResult) error {
	ref := s.BranchRef()
	var written [][]byte // the files of the last attempt's merge that differ from ours
	out, err := s.repo.Transact(ctx, []string{ref}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		written = written[:0]
		ours := tips[ref]
		base, err := s.repo.MergeBase(ctx, ours.Commit, theirs)
		if err != nil {
			return nil, fmt.Errorf("merge base: %w", err)
		}
		baseTree, err := s.repo.TreeOf(ctx, base)
		if err != nil {
			return nil, err
		}
		theirTree, err := s.repo.TreeOf(ctx, theirs)
		if err != nil {
			return nil, err
		}
		// Only the paths either side changed since the merge base take part, plus the folders whose files
		// are merged together (decisions: renumbering; conflicts: the records); every other path is the same
		// on both sides and stays as it is (merge.Tree merges path by path otherwise).
		changedOurs, dupOurs, err := s.changedPaths(ctx, baseTree, ours.Tree)
		if err != nil {
			return nil, err
		}
		changedTheirs, dupTheirs, err := s.changedPaths(ctx, baseTree, theirTree)
		if err != nil {
			return nil, err
		}
		// A path only one side changed merges to that side's version (docs/merge.md "What a pull reads"):
		// one only ours changed stays as ours has it, without being read; one only theirs changed takes
		// theirs' blob by name (theirsOnly), read later by the refresh alone, unless the rest of the merge
		// could move it (merge.NeedsOneSided: then every changed path is read and merged, as before).
		paths, oursOnly, theirsOnly := splitOneSided(changedOurs, changedTheirs, dupOurs, dupTheirs)
		together := []string{"decisions", ConflictsDir}
		sides, err := s.repo.FilesAtEach(ctx, []gitstore.Hash{baseTree, ours.Tree, theirTree}, paths, together)
		if err != nil {
			return nil, err
		}
		bf, of, tf := sides[0], sides[1], sides[2]
		var taken []gitstore.Change     // theirs' one-sided changes, by blob name
		var takenData map[string][]byte // the content of each blob taken
		if len(oursOnly)+len(theirsOnly) > 0 {
			one := append(oursOnly, theirsOnly...)
			if !merge.NeedsOneSided(bf, of, tf) {
				taken, takenData, one, err = s.takeTheirs(ctx, ours.Tree, theirTree, theirsOnly)
				if err != nil {
					return nil, err
				}
				oneSidedTaken.Add(int64(len(oursOnly) + len(theirsOnly) - len(one)))
			}
			if len(one) > 0 {
				more, err := s.repo.FilesAtEach(ctx, []gitstore.Hash{baseTree, ours.Tree, theirTree}, one, nil)
				if err != nil {
					return nil, err
				}
				for i, m := range more {
					maps.Copy(sides[i], m)
				}
			}
		}
		m := merge.Tree(merge.Files(bf), merge.Files(of), merge.Files(tf))
		if res.Decided, err = applyStrategy(&m, res.Strategy, of, tf); err != nil {
			return nil, err
		}
		if err := s.nameSides(ctx, &m, ours.Commit, theirs, base, of, tf); err != nil {
			return nil, fmt.Errorf("merge: name the writers of the conflicts: %w", err)
		}
		res.Conflicts, res.Notes = m.Conflicts, m.Notes
		if err := mergeTooLarge(m.Files, of, takenData, res); err != nil {
			return nil, err
		}
		var changes []gitstore.Change
		for p, b := range m.Files {
			if old, ok := of[p]; !ok || string(old) != string(b) {
				changes = append(changes, gitstore.Change{Path: p, Data: b})
				written = append(written, b)
			}
		}
		for p := range of {
			if _, ok := m.Files[p]; !ok {
				changes = append(changes, gitstore.Change{Path: p, Delete: true})
			}
		}
		if len(taken) > 0 {
			for _, c := range taken {
				if _, ok := m.Files[c.Path]; ok {
					return nil, fmt.Errorf("merge: %s changed on one side only and merged too (a bug)", c.Path)
				}
				if _, ok := of[c.Path]; ok {
					return nil, fmt.Errorf("merge: %s changed on one side only and read too (a bug)", c.Path)
				}
			}
			changes = append(changes, taken...)
			for _, b := range takenData {
				written = append(written, b)
			}
		}
		tree, err := s.repo.EditTree(ctx, ours.Tree, changes)
		if err != nil {
			return nil, err
		}
		op := Op{Name: "merge", Summary: fmt.Sprintf("merge %s", res.Remote),
			Extra: [][2]string{{"Ctx-Conflicts", strconv.Itoa(len(m.Conflicts))}}}
		if res.Strategy != StrategyRecord {
			op.Extra = append(op.Extra, [2]string{"Ctx-Strategy", string(res.Strategy)},
				[2]string{"Ctx-Decided", strconv.Itoa(len(res.Decided))})
		}
		if r := renumberedTrailer(m.Notes); r != "" {
			op.Extra = append(op.Extra, [2]string{"Ctx-Renumbered", r})
		}
		op.Extra = append(op.Extra, renamedTrailers(renamesOf(m.Notes))...)
		op.Body = mergeBody(m.Conflicts, res.Decided, m.Notes)
		return map[string]*gitstore.Write{ref: {Tree: &tree, ExtraParents: []gitstore.Hash{theirs}, Message: s.Message(op)}}, nil
	})
	if err != nil {
		return err
	}
	// The refresh after the pull writes these files: from memory, not read back from the objects.
	s.made.add(written)
	res.Action, res.New = PullMerged, out[0].New
	return nil
}

// maxRenumberedInTrailer bounds the pairs of a merge commit's Ctx-Renumbered trailer; the others are
// counted ("and N more"), and the merge's notes name them all.
const maxRenumberedInTrailer = 100

// renumberedTrailer is the value of a merge commit's Ctx-Renumbered trailer: "OLD -> NEW" for each decision
// the merge renumbered (merge.Note "renumbered"), by old then new number, comma-separated; "" when none.
// The commits that added or changed such a decision name its old number in their Ctx-Key; this trailer
// maps it to the new one (docs/architecture.md "Commits").
func renumberedTrailer(notes []merge.Note) string {
	var pairs [][2]int
	for _, n := range notes {
		if n.Kind == "renumbered" && n.From > 0 && n.To > 0 {
			pairs = append(pairs, [2]int{n.From, n.To})
		}
	}
	if len(pairs) == 0 {
		return ""
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	var b strings.Builder
	for i, p := range pairs {
		if i == maxRenumberedInTrailer {
			fmt.Fprintf(&b, ", and %d more", len(pairs)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d -> %d", p[0], p[1])
	}
	return b.String()
}

// maxBodyItems bounds the lines of each list of a merge commit's body (mergeBody); the others are counted.
const maxBodyItems = 100

// mergeBody is the body of a merge commit's message (Op.Body), for whoever reads `git log` of the context
// branch, as git's own merge commits list "Conflicts:": the open conflicts the merge recorded ("Conflicts:",
// one tab-indented line each: path, field, conflict id for ctx resolve), those --strategy decided
// ("Decided:"), and the merge's notes ("Notes:", the note's message: a decision renumbered, a rename
// followed, a deletion that lost to an edit). At most maxBodyItems lines of each, then "and N more"
// (ctx conflicts and the pull's report have them all). Nil when the merge has none of them.
func mergeBody(conflicts, decided []merge.Conflict, notes []merge.Note) []string {
	var out []string
	list := func(head string, n int, line func(i int) string) {
		if n == 0 {
			return
		}
		out = append(out, head)
		for i := 0; i < n; i++ {
			if i == maxBodyItems {
				out = append(out, fmt.Sprintf("\t... and %d more", n-i))
				break
			}
			out = append(out, "\t"+line(i))
		}
	}
	conflict := func(c merge.Conflict) string {
		field := c.Field
		if field == "" {
			field = "whole file"
		}
		if c.LostDeleted {
			field += ", deleted on one side"
		}
		return fmt.Sprintf("%s (%s; conflict %s)", c.Path, field, c.ID)
	}
	list("Conflicts:", len(conflicts), func(i int) string { return conflict(conflicts[i]) })
	list("Decided:", len(decided), func(i int) string { return conflict(decided[i]) })
	list("Notes:", len(notes), func(i int) string {
		if notes[i].Message == "" {
			return fmt.Sprintf("%s: %s", notes[i].Path, notes[i].Kind)
		}
		return notes[i].Message
	})
	return out
}

// renamesOf is the [old, new] paths of the files the merge renamed (merge.Note "renumbered": a decision's
// file moved to its new number), sorted by old path.
func renamesOf(notes []merge.Note) [][2]string {
	var out [][2]string
	for _, n := range notes {
		if (n.Kind == "renumbered" || n.Kind == "rename-rename") && n.OldPath != "" && n.OldPath != n.Path {
			out = append(out, [2]string{n.OldPath, n.Path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] || out[i][0] == out[j][0] && out[i][1] < out[j][1] })
	return out
}

// renamedTrailers are the Ctx-Renamed trailers of a commit that renamed files (a merge's renumbering, a
// decision renamed by hand and recorded by ctx commit): one "OLD -> NEW" trailer per file (a path may hold
// a comma, so one trailer each, as git allows a key to repeat), at most maxRenumberedInTrailer, then one
// "and N more" (docs/architecture.md "Commits"). ctx log shows them.
func renamedTrailers(renames [][2]string) [][2]string {
	var out [][2]string
	for i, r := range renames {
		if i == maxRenumberedInTrailer {
			out = append(out, [2]string{"Ctx-Renamed", fmt.Sprintf("and %d more", len(renames)-i)})
			break
		}
		out = append(out, [2]string{"Ctx-Renamed", r[0] + " -> " + r[1]})
	}
	return out
}

// mergeTooLarge refuses a merge that would write a file over MaxFileBytes (of are ours' files before it,
// taken the files of theirs' one-sided changes, takeTheirs):
// two sides under the limit can make a larger one, most often a conflict record, which holds the base and
// both versions of a file. Nothing is written; the error says how to pull without such a record.
func mergeTooLarge(files, of, taken map[string][]byte, res *PullResult) error {
	var big []string
	for p, b := range files {
		if old, ok := of[p]; int64(len(b)) > maxFileBytes && (!ok || string(old) != string(b)) {
			big = append(big, fmt.Sprintf("%s: %s", p, sizeOf(int64(len(b)))))
		}
	}
	for p, b := range taken { // theirs' one-sided changes, none of them ours' content
		if int64(len(b)) > maxFileBytes {
			big = append(big, fmt.Sprintf("%s: %s", p, sizeOf(int64(len(b)))))
		}
	}
	if len(big) == 0 {
		return nil
	}
	sort.Strings(big)
	hint := "pull again with --strategy ours or --strategy theirs: the merge commit then decides the conflicts without a record " +
		"(the other version stays in the history), or make the two versions of the file agree first"
	if res.Strategy != StrategyRecord {
		hint = "make the two versions of the file agree (or shrink it) on one side, then pull again"
	}
	n := "a file"
	if len(big) > 1 {
		n = strconv.Itoa(len(big)) + " files"
	}
	return &tooLargeError{msg: fmt.Sprintf("merge %s: refused: it would write %s over the limit of one file of the store (%s, docs/limits.md \"Files of the store\"); "+
		"this merge wrote nothing and moved no ref; %s:\n  %s", res.Remote, n, sizeOf(maxFileBytes), hint, strings.Join(big, "\n  "))}
}

// tooLargeError is a pull refused because its merge would write a file over MaxFileBytes: a refused pull
// (errors.Is ErrRejected; CLI exit 5).
type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }
func (e *tooLargeError) Unwrap() error { return ErrRejected }

// nameRefused makes a failed push name the ref it was pushing (git's "! [remote rejected] ctx -> ctx
// (reason)" line; the transport reports the reason alone): "push origin: refs/heads/ctx: [remote
// rejected] (pre-receive hook declined); remote says: ...". Other errors (an unreachable remote) are
// returned as they are.
func (s *Store) nameRefused(err error) error {
	var te *gitstore.TransferError
	if !errors.As(err, &te) || te.Op != "push" || !strings.HasPrefix(te.Reason, "[") && !errors.Is(err, gitstore.ErrNonFastForward) {
		return err // not a refusal of the ref (an unreachable remote, ...)
	}
	named := *te
	named.Reason = s.BranchRef() + " -> " + s.BranchRef() + ": " + te.Reason
	return &named
}

// recordPushed moves the remote-tracking ref tr to tip after a push (git's own push does so only for a
// remote whose fetch refspec maps the branch); retried once when git moved it at the same moment.
func (s *Store) recordPushed(ctx context.Context, tr string, tip gitstore.Hash) error {
	var err error
	for i := 0; i < 2; i++ {
		var cur gitstore.Hash
		if cur, err = s.repo.Resolve(ctx, tr); err != nil {
			return err
		}
		if cur == tip {
			return nil
		}
		if err = s.repo.UpdateRef(ctx, tr, cur, tip, "ctx push"); !errors.Is(err, gitstore.ErrStaleRef) {
			return err
		}
	}
	return err
}

// PushResult says what Push did.
type PushResult struct {
	Remote string
	Tip    gitstore.Hash
	// Machine is this machine's ref on the remote that now holds Tip (refs/ctx/machines/<id>); "" when
	// the remote refuses machine refs and only the shared branch was pushed (Legacy).
	Machine string
	// Shared says what became of the remote's shared context branch (refs/heads/ctx): SharedUpdated, or
	// SharedBehind (another machine updated it first; not a failure: the next sync of any machine merges
	// this one's commits into it), or SharedRefused (a hook or a protected branch; Warnings says why).
	Shared SharedState
	// Legacy: the remote refused refs/ctx/machines/, so Push pushed the shared branch alone with the
	// fetch-merge-retry loop of older ctx (docs/sync.md).
	Legacy  bool
	Retries int          // how many times the remote had moved and was merged first
	Pulls   []PullResult // the merges made on the way
	// Warnings are problems after the remote accepted the push (the push landed): the remote-tracking ref
	// could not be updated, so ctx status compares against an older tip until the next pull.
	Warnings []string
}

// SharedState is what a push did to the remote's shared context branch (PushResult.Shared).
type SharedState string

// The states of the shared branch after a push.
const (
	SharedUpdated SharedState = "updated" // it holds the pushed tip
	SharedBehind  SharedState = "behind"  // another machine moved it first; not a failure
	SharedRefused SharedState = "refused" // the remote refused it (a hook, a protected branch)
)

// checkFirstPush: a push from a clone that never saw the remote's context branch (no remote-tracking
// ref) first asks the remote whether its context branch has another name (checkOtherBranch), so that a
// clone that does not know it does not publish a second shared branch. One ls-remote, first push only.
func (s *Store) checkFirstPush(ctx context.Context, remote, tracking string, origin RemoteOrigin) error {
	if prev, err := s.repo.Resolve(ctx, tracking); err != nil || !prev.IsZero() {
		return err
	}
	opt := gitstore.TransferOptions{Progress: progress(ctx), Origin: origin}
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	adv, err := s.repo.LsRemote(tctx, remote, []string{s.BranchRef(), MachineRefPrefix + "*"}, opt)
	cancel()
	if err != nil {
		return err
	}
	if _, ok := adv[s.BranchRef()]; ok {
		return nil
	}
	return s.checkOtherBranch(ctx, remote, adv, opt)
}

// Push publishes the context branch without force (docs/architecture.md "Sync", docs/sync.md). In one
// transfer it pushes the branch to this machine's own ref, refs/ctx/machines/<MachineID> (a fast-forward of
// its own history, which no other machine writes), and tries once to fast-forward the shared branch
// refs/heads/ctx to it; losing that race is not a failure (PushResult.Shared).
//
// When the machine ref moved (another clone with the same machine id, a copied repository), it pulls and
// tries again. When the remote refuses refs/ctx/machines/ (some forges refuse refs outside heads and tags),
// it says so in a warning and pushes the shared branch alone, pulling (fetch, merge) and retrying while
// the remote moved, at most maxPushRetries times and for pushBudgetTimeout transfer timeouts in all. A
// refusal of the shared branch in that mode, or an unreachable remote, is an error carrying git's reason.
// The merges it makes on the way use o.Strategy, as Pull does.
func (s *Store) Push(ctx context.Context, o PushOptions) (*PushResult, error) {
	remote := o.Remote
	if remote == "" {
		remote = s.RemoteName(ctx)
	}
	if remote == "" {
		return nil, errors.New("no remote: add one with `git remote add origin <url>` or pass --remote")
	}
	if err := s.CheckRemote(remote, o.Origin); err != nil {
		return nil, err
	}
	if ok, err := s.Initialized(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, ErrNotInitialized
	}
	machine, err := s.MachineRef()
	if err != nil {
		return nil, err
	}
	res := &PushResult{Remote: remote}
	tr := s.TrackingRef(remote)
	if err := s.checkFirstPush(ctx, remote, tr, o.Origin); err != nil {
		return res, err
	}
	deadline := time.Now().Add(pushBudgetTimeout * s.timeout())
	for attempt := 0; ; attempt++ {
		tip, err := s.repo.Resolve(ctx, s.BranchRef())
		if err != nil {
			return nil, err
		}
		if err := s.checkPublish(ctx, remote, tip); err != nil {
			return res, err
		}
		specs := []string{s.PushRefspec()}
		if !res.Legacy {
			specs = append(specs, s.BranchRef()+":"+machine)
		}
		pctx, cancel := context.WithTimeout(ctx, s.timeout())
		sts, err := s.repo.PushRefs(pctx, remote, specs, gitstore.TransferOptions{Progress: progress(ctx), Origin: o.Origin, TrackingRef: tr})
		cancel()
		if err != nil {
			return res, err
		}
		shared := sts[0].Err
		if shared == nil {
			res.Shared = SharedUpdated
			if err := s.recordPushed(ctx, tr, tip); err != nil {
				res.Warnings = append(res.Warnings, warn(ctx, fmt.Sprintf("pushed %s, but %s still names the older tip (ctx status counts against it until the next pull): %v",
					tip.String()[:12], tr, err)))
			}
		}
		if !res.Legacy {
			mine := sts[1].Err
			switch {
			case mine == nil:
				res.Tip, res.Machine = tip, machine
				id := strings.TrimPrefix(machine, MachineRefPrefix)
				_ = s.recordPushed(ctx, s.MachinesTrackingPrefix(remote)+id, tip) // a hint for ctx machines; the next pull sets it
				switch {
				case shared == nil:
				case errors.Is(shared, gitstore.ErrNonFastForward):
					res.Shared = SharedBehind
					if err := s.checkSharedIsStore(ctx, remote, machine, tip, o.Origin); err != nil {
						return res, err
					}
				default:
					res.Shared = SharedRefused
					res.Warnings = append(res.Warnings, warn(ctx, fmt.Sprintf("pushed %s, but the remote refused the shared branch: %v", machine, s.nameRefused(shared))))
				}
				return res, nil
			case !errors.Is(mine, gitstore.ErrNonFastForward):
				// A remote that refuses the machine ref (a forge that takes only branches and tags, a hook):
				// the shared branch alone, as older ctx pushes it.
				res.Legacy = true
				res.Warnings = append(res.Warnings, warn(ctx, fmt.Sprintf("the remote refuses %s (%v): pushing the shared branch alone, merging first whenever it moved (docs/sync.md)", machine, mine)))
				if shared != nil {
					// A pre-receive hook refuses the whole push for one ref: the shared branch alone, at once.
					res.Shared = ""
					attempt--
					continue
				}
			default:
				// The machine ref moved past this tip: a clone with the same machine id pushed to it. Pull it
				// (and everything else) and try again.
				shared = mine
			}
		}
		if res.Legacy && shared == nil {
			res.Tip = tip
			return res, nil
		}
		if !errors.Is(shared, gitstore.ErrNonFastForward) || attempt >= maxPushRetries || time.Now().After(deadline) {
			return res, s.nameRefused(shared)
		}
		res.Retries++
		pr, perr := s.Pull(ctx, PullOptions{Remote: remote, Strategy: o.Strategy, Origin: o.Origin})
		if perr != nil {
			return res, fmt.Errorf("push: the remote moved and pulling it failed: %w", perr)
		}
		res.Pulls = append(res.Pulls, *pr)
		time.Sleep(pushBackoff(attempt))
	}
}

// NotStoreError is a push whose shared branch the remote holds as something that is no context store: a
// commit without manifest.json that shares no history with this machine's context branch (a branch of
// code with the context branch's name). The machine ref was pushed; no sync can merge the two. It
// unwraps to ErrRejected (CLI exit 5), as a pull's refusal of that tip does (docs/sync.md "A remote branch
// that is not a context store").
type NotStoreError struct {
	Remote, Branch, Machine string
	Commit                  gitstore.Hash
}

func (e *NotStoreError) Unwrap() error { return ErrRejected }

func (e *NotStoreError) Error() string {
	return fmt.Sprintf("push %s: pushed %s, but %s's %s branch (at %s) is not a context store: it has no %s and no history "+
		"in common with this machine's context branch (a branch of code with the context branch's name), so no ctx sync can "+
		"merge the two. Leave it alone and keep the team's context under another name (ctx init --branch NAME), "+
		"or, if that branch is yours to replace, delete it on the remote (git push %s --delete %s) and ctx push again",
		e.Remote, e.Machine, e.Remote, e.Branch, e.Commit.String()[:12], ManifestPath, e.Remote, e.Branch)
}

// checkSharedIsStore, after the remote refused to fast-forward its shared branch to tip, asks the remote
// for that branch's tip (one ls-remote) and returns a *NotStoreError when this repository holds that
// commit and it is no context store beside tip (unrelatedNonStore). A tip this repository lacks is
// judged by the next pull, which fetches it.
func (s *Store) checkSharedIsStore(ctx context.Context, remote, machine string, tip gitstore.Hash, origin RemoteOrigin) error {
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	adv, err := s.repo.LsRemote(tctx, remote, []string{s.BranchRef()}, gitstore.TransferOptions{Progress: progress(ctx), Origin: origin})
	cancel()
	if err != nil {
		return nil // the push landed; the next pull says more
	}
	theirs := adv[s.BranchRef()]
	if theirs.IsZero() {
		return nil
	}
	if _, err := s.repo.Commit(ctx, theirs); err != nil {
		return nil // not here (or not a commit): the next pull fetches and checks it
	}
	tree, err := s.repo.TreeOf(ctx, theirs)
	if err != nil {
		return nil
	}
	if unrelated, err := s.unrelatedNonStore(ctx, theirs, tree, tip); err != nil || !unrelated {
		return err
	}
	return &NotStoreError{Remote: remote, Branch: s.cfg.Branch, Machine: machine, Commit: theirs}
}

// checkPublish refuses to push tip when a teammate's pull would refuse it: the tree checks of CheckIncoming
// (entries ctx cannot read, conflict records that do not read or name another record, files over the size
// limit, a manifest that does not read, a tree over the bounds of a fetched tip) over the entries tip adds to the remote's branch as this machine
// last saw it (its remote-tracking ref; every entry when there is none). Nothing is pushed then: a tree
// that every teammate's pull refuses would stop the whole team (docs/sync.md "What a push publishes").
func (s *Store) checkPublish(ctx context.Context, remote string, tip gitstore.Hash) error {
	against, err := s.repo.Resolve(ctx, s.TrackingRef(remote))
	if err != nil {
		return err
	}
	tree, err := s.repo.TreeOf(ctx, tip)
	if err != nil {
		return err
	}
	var atree gitstore.Hash
	if !against.IsZero() {
		if atree, err = s.repo.TreeOf(ctx, against); err != nil {
			atree = gitstore.ZeroHash // not in this repository: every entry is checked
		}
	}
	ps, err := checkTree(ctx, s.repo, tip, "", tree, atree, checkSizes|checkRecords)
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	if p, err := tipBounds(ctx, s.repo, tip, tree, atree); err != nil {
		return fmt.Errorf("push: %w", err)
	} else if p != nil {
		ps = append(ps, *p)
	}
	if reason, err := s.manifestProblem(ctx, tree, atree); err != nil {
		return fmt.Errorf("push: %w", err)
	} else if reason != "" {
		ps = append(ps, Problem{Commit: tip.String(), Path: ManifestPath, Entry: "file", Reason: "the manifest cannot be read: " + reason})
	}
	if len(ps) == 0 {
		return nil
	}
	return &PublishRefusedError{Remote: remote, Commit: tip, Problems: ps}
}

// PublishRefusedError is a push that checkPublish refused: the local context branch holds entries a
// teammate's pull would refuse. Nothing was pushed. It unwraps to ErrRejected (CLI exit 5).
type PublishRefusedError struct {
	Remote   string
	Commit   gitstore.Hash
	Problems []Problem
}

func (e *PublishRefusedError) Unwrap() error { return ErrRejected }

func (e *PublishRefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refusing to push %s to %s: it holds entries every teammate's ctx pull would refuse (nothing was pushed):",
		e.Commit.String()[:12], e.Remote)
	for i, p := range e.Problems {
		if i == maxListedProblems {
			b.WriteString("\n  (more not listed)")
			break
		}
		fmt.Fprintf(&b, "\n  %s", p)
	}
	records, bounds := false, false
	for _, p := range e.Problems {
		records = records || p.Record
		bounds = bounds || (p.Path == "" && p.Entry == "tree")
	}
	if bounds {
		b.WriteString("\nRemove files from the context branch (ctx knowledge rm KEY, ctx skill rm NAME, or git rm -r and ctx commit) " +
			"until it is within the bounds of docs/limits.md \"Files of a fetched tip\"; then ctx push again")
		return b.String()
	}
	if records {
		b.WriteString("\nWrite the malformed records again (" + recordRepair + "); ")
		if !allRecords(e.Problems) {
			b.WriteString("ctx doctor --fix removes the other entries from the context branch in one commit; ")
		}
		b.WriteString("then ctx push again")
		return b.String()
	}
	b.WriteString("\nctx doctor --fix removes them from the context branch in one commit (ctx doctor lists them first); then ctx push again")
	return b.String()
}
