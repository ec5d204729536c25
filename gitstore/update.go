package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/internal/plainfile"
)

// Tip is the state of one ref at the start of a transaction: its commit (ZeroHash when the ref does
// not exist yet) and that commit's tree (ZeroHash = empty).
type Tip struct {
	Ref    string
	Commit Hash
	Tree   Hash
}

// Write is what a transaction asks for on one ref: Changes applied to the tip's tree (or, when Tree is
// set, that whole tree), committed with Message. ExtraParents follow the tip as parents (a merge commit).
// A Write whose tree equals the tip's tree makes no commit unless it has extra parents.
type Write struct {
	Changes      []Change
	Tree         *Hash
	ExtraParents []Hash
	Message      string
}

// Result is what a transaction did on one ref.
type Result struct {
	Ref       string
	Old, New  Hash // New == Old when no commit was made
	Committed bool
	Paths     []string // files changed by the commit, sorted
}

// maxCASRetries bounds how often Transact re-runs fn when a ref moved under it (only C git or a process
// that ignores the ctx lock can do that).
const maxCASRetries = 5

// Transact runs fn under the ctx lock with the current tips of refs and commits what it returns, one commit
// per ref that changed, published with UpdateRef's compare-and-swap (docs/architecture.md "Commits"): every
// ref that changed moves, or none does (a locked or moved ref fails the whole transaction before any ref
// moves). fn may be re-run when a ref moved concurrently, so it must not have side effects outside its return
// value. The author and committer are the user's git identity. Results are in the order of refs. On error no
// ref moved, unless the error says that restoring a ref failed (docs/locks.md).
func (r *Repo) Transact(ctx context.Context, refs []string, fn func(tips map[string]Tip) (map[string]*Write, error)) ([]Result, error) {
	unlock, err := r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	for attempt := 0; ; attempt++ {
		res, err := r.transactOnce(ctx, refs, fn)
		if errors.Is(err, ErrStaleRef) && attempt < maxCASRetries {
			continue
		}
		if err == nil {
			r.maybePack(ctx, res)
		}
		return res, err
	}
}

func (r *Repo) transactOnce(ctx context.Context, refs []string, fn func(map[string]Tip) (map[string]*Write, error)) ([]Result, error) {
	tips := make(map[string]Tip, len(refs))
	for _, ref := range refs {
		c, err := r.Resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		t, err := r.TreeOf(ctx, c)
		if err != nil {
			return nil, err
		}
		tips[ref] = Tip{Ref: ref, Commit: c, Tree: t}
	}
	writes, err := fn(tips)
	if err != nil {
		return nil, err
	}
	res, err := r.commitWrites(ctx, refs, tips, writes)
	if err != nil && !errors.Is(err, ErrStaleRef) {
		return nil, &WriteError{Err: err, Landed: errors.Is(err, errPartial)}
	}
	return res, err
}

// WriteError is a transaction that failed while writing what it had computed: objects (a full disk),
// commits, or the refs (locked, moved). Landed is false when no ref moved, which is always the case unless
// restoring a ref after a failure failed as well (the message then names it). Objects written before the
// failure are unreferenced, and git gc prunes them; ctx leaves no temporary file behind.
type WriteError struct {
	Err    error
	Landed bool
}

func (e *WriteError) Error() string {
	if e.Landed {
		return "the write landed only in part: " + e.Err.Error()
	}
	return "nothing was written (no ref moved): " + e.Err.Error()
}

func (e *WriteError) Unwrap() error { return e.Err }

// commitWrites writes the objects of writes and moves the refs (transactOnce's second half).
func (r *Repo) commitWrites(ctx context.Context, refs []string, tips map[string]Tip, writes map[string]*Write) ([]Result, error) {
	type pending struct {
		tip    Tip
		commit Hash
		msg    string
		paths  []string
	}
	var todo []pending
	var author, committer Signature
	results := make([]Result, len(refs))
	for i, ref := range refs {
		tip := tips[ref]
		results[i] = Result{Ref: ref, Old: tip.Commit, New: tip.Commit}
		w := writes[ref]
		if w == nil {
			continue
		}
		// A ref of the local-only store gets its objects there (KeepLocal).
		st, err := r.storageFor(ref)
		if err != nil {
			return nil, err
		}
		tree := tip.Tree
		if w.Tree != nil {
			tree = *w.Tree
			if st != r.st {
				if err := r.copyTree(ctx, st, tree); err != nil {
					return nil, fmt.Errorf("%s: %w", ref, err)
				}
			}
		} else if len(w.Changes) > 0 {
			tree, err = r.editTreeIn(ctx, st, tip.Tree, w.Changes)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
		}
		if st != r.st {
			for _, p := range w.ExtraParents {
				if err := r.copyReachable(ctx, st, p); err != nil {
					return nil, fmt.Errorf("%s: %w", ref, err)
				}
			}
		}
		if tree == tip.Tree && len(w.ExtraParents) == 0 && !tip.Commit.IsZero() {
			continue
		}
		if author.Name == "" {
			// Resolved once per transaction (it reads the repository, global and system config).
			if author, err = r.Identity(ctx); err != nil {
				return nil, err
			}
			if committer, err = r.Committer(ctx); err != nil {
				return nil, err
			}
		}
		var parents []Hash
		if !tip.Commit.IsZero() {
			parents = append(parents, tip.Commit)
		}
		parents = append(parents, w.ExtraParents...)
		c, err := r.writeCommit(ctx, st, CommitSpec{Tree: tree, Parents: parents, Author: author, Committer: committer, Message: w.Message})
		if err != nil {
			return nil, err
		}
		paths, err := r.DiffTrees(ctx, tip.Tree, tree)
		if err != nil {
			return nil, err
		}
		todo = append(todo, pending{tip: tip, commit: c, msg: w.Message, paths: paths})
		results[i].New, results[i].Committed, results[i].Paths = c, true, paths
	}
	FaultPoint("objects-written", "")
	// All refs move or none (updateRefs): a scope move deletes from one ref and adds to another.
	ups := make([]refUpdate, len(todo))
	for i, p := range todo {
		ups[i] = refUpdate{name: p.tip.Ref, old: p.tip.Commit, new: p.commit, msg: "ctx: " + firstLine(p.msg)}
	}
	if err := r.updateRefs(ctx, ups); err != nil {
		return nil, err
	}
	return results, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// packEvery is how many ctx commits go by between two `git gc --auto` runs. gc --auto packs loose objects
// once git's own threshold (gc.auto, 6700 by default) is passed and honours the user's gc settings, so a
// store with 100k commits stays packed (docs/architecture.md "Commits": go-git never packs).
const packEvery = 100

// maybePack counts commits in <ctx dir>/writes (<ctx dir>/writes-local for the local-only store) and runs
// `git gc --auto --quiet` in that repository every packEvery commits.
// It is best effort: a missing git binary or a failing gc never fails the write.
func (r *Repo) maybePack(ctx context.Context, res []Result) {
	n, local := 0, 0
	for _, x := range res {
		switch {
		case x.Committed && r.isLocal(x.Ref):
			local++
		case x.Committed:
			n++
		}
	}
	if n > 0 {
		r.packAfter(ctx, r.commonDir, filepath.Join(r.CtxDir(), "writes"), n, res)
	}
	if local > 0 {
		r.packAfter(ctx, r.LocalDir(), filepath.Join(r.CtxDir(), "writes-local"), local, res)
	}
}

// packAfter adds n to the write counter in file counter and runs `git gc --auto --quiet` in git dir dir
// every packEvery writes.
func (r *Repo) packAfter(ctx context.Context, dir, counter string, n int, res []Result) {
	b, _ := os.ReadFile(counter)
	count, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	count += n
	// In place (plainfile.Overwrite): a counter truncated to nothing and written again is written back to
	// disk at its close by ext4.
	if count < packEvery {
		_ = plainfile.Overwrite(counter, []byte(strconv.Itoa(count)+"\n"), 0o666)
		return
	}
	_ = plainfile.Overwrite(counter, []byte("0\n"), 0o666)
	if !HasGit() {
		return
	}
	gc := gitCmd{dir: dir, args: []string{"--git-dir=" + dir, "gc", "--auto", "--quiet"}}
	// gc packs refs (pack-refs --prune locks each loose ref and packed-refs): its owner record makes a lock
	// it leaves when killed known as ctx's (docs/locks.md). A detached gc keeps the record live.
	refs := []string{"packed-refs"}
	for _, x := range res {
		if r.refDir(x.Ref) == dir {
			refs = append(refs, x.Ref)
		}
	}
	if f, done := r.startOwner("gc", refs); f != nil {
		gc.owner = f
		defer done()
	}
	_, _, _ = gc.run(ctx)
}
