package gitstore

import (
	"container/heap"
	"context"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// Log returns up to n commits (n <= 0: all) reachable from tip along first parents, newest first. When
// path is not "", only commits whose tree differs from their first parent's at path are returned (a file
// or a directory). It walks first parents with tree lookups rather than go-git's Log with a path filter,
// which is orders of magnitude slower on long histories (docs/architecture.md "Commits").
func (r *Repo) Log(ctx context.Context, tip Hash, n int, path string) ([]*Commit, error) {
	var out []*Commit
	h := tip
	for !h.IsZero() {
		if n > 0 && len(out) >= n {
			break
		}
		c, err := r.Commit(ctx, h)
		if err != nil {
			return out, err
		}
		var parent Hash
		if len(c.ParentHashes) > 0 {
			parent = c.ParentHashes[0]
		}
		keep := true
		if path != "" {
			mine, err := r.PathHash(ctx, c.TreeHash, path)
			if err != nil {
				return out, err
			}
			var theirs Hash
			if !parent.IsZero() {
				pt, err := r.TreeOf(ctx, parent)
				if err != nil {
					return out, err
				}
				if theirs, err = r.PathHash(ctx, pt, path); err != nil {
					return out, err
				}
			}
			keep = mine != theirs
		}
		if keep {
			out = append(out, c)
		}
		h = parent
	}
	return out, nil
}

// MergeBase returns a best common ancestor of a and b (ZeroHash when they share no history), found by
// walking all parents of both sides. Ties are broken by the newest committer time, like git merge-base.
func (r *Repo) MergeBase(ctx context.Context, a, b Hash) (Hash, error) {
	if a.IsZero() || b.IsZero() {
		return ZeroHash, nil
	}
	ca, err := r.ogCommit(ctx, a)
	if err != nil {
		return ZeroHash, err
	}
	cb, err := r.ogCommit(ctx, b)
	if err != nil {
		return ZeroHash, err
	}
	var bases []*object.Commit
	err = r.read(func() (err error) {
		bases, err = ca.MergeBase(cb)
		return err
	})
	if err != nil {
		return ZeroHash, err
	}
	if len(bases) == 0 {
		return ZeroHash, nil
	}
	best := bases[0]
	for _, c := range bases[1:] {
		if c.Committer.When.After(best.Committer.When) {
			best = c
		}
	}
	return Hash(best.Hash), nil
}

// IsAncestor reports whether a is reachable from b (a == b counts).
func (r *Repo) IsAncestor(ctx context.Context, a, b Hash) (bool, error) {
	if a.IsZero() {
		return true, nil
	}
	if b.IsZero() {
		return false, nil
	}
	if a == b {
		return true, nil
	}
	ca, err := r.ogCommit(ctx, a)
	if err != nil {
		return false, err
	}
	cb, err := r.ogCommit(ctx, b)
	if err != nil {
		return false, err
	}
	var ok bool
	err = r.read(func() (err error) {
		ok, err = ca.IsAncestor(cb)
		return err
	})
	return ok, err
}

// CountAhead returns how many commits are reachable from a but not from b (git rev-list --count b..a).
// It walks both sides newest first by committer time, painting commits reachable from b, and stops as soon
// as every commit left to visit is reachable from b, as git's revision walk does; so the cost is the
// commits since the sides diverged, not the whole history.
func (r *Repo) CountAhead(ctx context.Context, a, b Hash) (int, error) {
	var known []Hash
	if !b.IsZero() {
		known = []Hash{b}
	}
	hs, err := r.NewCommits(ctx, a, known)
	return len(hs), err
}

// NewCommits returns the commits reachable from a but from none of known (git rev-list a --not known...),
// newest first by committer time, with the walk of CountAhead.
func (r *Repo) NewCommits(ctx context.Context, a Hash, known []Hash) ([]Hash, error) {
	if a.IsZero() {
		return nil, nil
	}
	const fromA, fromB = 1, 2
	flags := map[Hash]int{}
	when := map[Hash]time.Time{}
	var order []Hash
	q := &commitQueue{}
	push := func(h Hash, f int) error {
		if flags[h]&f == f {
			return nil
		}
		if flags[h] == 0 {
			order = append(order, h)
		}
		flags[h] |= f
		c, err := r.Commit(ctx, h)
		if err != nil {
			return err
		}
		when[h] = c.Committer.When
		heap.Push(q, queued{c: c, f: f})
		return nil
	}
	if err := push(a, fromA); err != nil {
		return nil, err
	}
	for _, b := range known {
		if b.IsZero() {
			continue
		}
		if err := push(b, fromB); err != nil {
			return nil, err
		}
	}
	for q.Len() > 0 {
		// Go on while something left may be reachable from a only, or may still paint such a commit: a
		// commit reachable from b that is not older than the oldest commit painted a-only so far.
		interesting := false
		var oldestA time.Time
		for h, f := range flags {
			if f == fromA && (oldestA.IsZero() || when[h].Before(oldestA)) {
				oldestA = when[h]
			}
		}
		for _, it := range *q {
			if flags[it.c.Hash]&fromB == 0 || !oldestA.IsZero() && !it.c.Committer.When.Before(oldestA) {
				interesting = true
				break
			}
		}
		if !interesting {
			break
		}
		it := heap.Pop(q).(queued)
		f := flags[it.c.Hash]
		for _, p := range it.c.ParentHashes {
			if err := push(p, f); err != nil {
				return nil, err
			}
		}
	}
	var out []Hash
	for _, h := range order {
		if flags[h] == fromA {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return when[out[i]].After(when[out[j]]) })
	return out, nil
}

type queued struct {
	c *Commit
	f int
}

// commitQueue is a max-heap of commits by committer time.
type commitQueue []queued

func (q commitQueue) Len() int           { return len(q) }
func (q commitQueue) Less(i, j int) bool { return q[i].c.Committer.When.After(q[j].c.Committer.When) }
func (q commitQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)        { *q = append(*q, x.(queued)) }
func (q *commitQueue) Pop() any          { old := *q; x := old[len(old)-1]; *q = old[:len(old)-1]; return x }

// LogAll returns up to n commits (n <= 0: all) reachable from tip along every parent, each once, newest
// committer time first (git log's default order): unlike Log it includes the commits a merge brought in.
// When path is not "", only commits whose tree at path differs from that of every parent are returned
// (a root commit: when path exists in it); a merge that took one side's version unchanged is left out, as
// the commit that made that version is listed itself.
//
// With a path and a git binary, C git finds the commits that changed path (logPathGit: `git log
// --full-history -- path`, which compares only the trees on the path) and ctx keeps its own order and merge
// rule; without git, or when git fails, every commit's tree is looked up here (logAllWalk).
func (r *Repo) LogAll(ctx context.Context, tip Hash, n int, path string) ([]*Commit, error) {
	if path != "" && !tip.IsZero() && HasGit() && gitPathOK(path) {
		if out, err := r.logPathGit(ctx, tip, n, path); err == nil || ctx.Err() != nil {
			return out, err
		}
	}
	return r.logAllWalk(ctx, tip, n, path)
}

// logAllWalk is LogAll done with go-git only: a walk of every parent that looks up path in each commit's
// tree.
func (r *Repo) logAllWalk(ctx context.Context, tip Hash, n int, path string) ([]*Commit, error) {
	var out []*Commit
	if tip.IsZero() {
		return out, nil
	}
	seen := map[Hash]bool{tip: true}
	// pathAt is the object at path in a commit's tree, looked up once per commit (as itself and as the
	// parent of each of its children).
	at := map[Hash]Hash{}
	pathAt := func(c *Commit) (Hash, error) {
		if h, ok := at[c.Hash]; ok {
			return h, nil
		}
		h, err := r.PathHash(ctx, c.TreeHash, path)
		if err == nil {
			at[c.Hash] = h
		}
		return h, err
	}
	var queue allQueue
	c, err := r.Commit(ctx, tip)
	if err != nil {
		return nil, err
	}
	heap.Push(&queue, c)
	for queue.Len() > 0 {
		if n > 0 && len(out) >= n {
			break
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		c := heap.Pop(&queue).(*Commit)
		parents := make([]*Commit, 0, len(c.ParentHashes))
		for _, p := range c.ParentHashes {
			pc, err := r.Commit(ctx, p)
			if err != nil {
				return out, err
			}
			parents = append(parents, pc)
			if !seen[p] {
				seen[p] = true
				heap.Push(&queue, pc)
			}
		}
		keep := true
		if path != "" {
			mine, err := pathAt(c)
			if err != nil {
				return out, err
			}
			if len(parents) == 0 {
				keep = !mine.IsZero()
			}
			for _, pc := range parents {
				theirs, err := pathAt(pc)
				if err != nil {
					return out, err
				}
				if theirs == mine {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out, nil
}

// allQueue is a max-heap of commits by committer time (ties: by hash, for a stable order).
type allQueue []*Commit

func (q allQueue) Len() int { return len(q) }
func (q allQueue) Less(i, j int) bool {
	a, b := q[i].Committer.When, q[j].Committer.When
	if a.Equal(b) {
		return q[i].Hash.String() > q[j].Hash.String()
	}
	return a.After(b)
}
func (q allQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *allQueue) Push(x any)   { *q = append(*q, x.(*Commit)) }
func (q *allQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// Contained returns the commits of tips that are reachable from a commit of from other than themselves
// (git merge-base --is-ancestor for many pairs at once). One walk back from the parents of from, newest
// committer time first, which stops once every commit left to visit is older than every tip not found
// yet; so the cost is the commits since the oldest tip, not the whole history. A committer clock set back
// can only make a contained tip look not contained (the caller then merges or checks a tip it did not
// need to), never the reverse.
func (r *Repo) Contained(ctx context.Context, tips, from []Hash) (map[Hash]bool, error) {
	out := map[Hash]bool{}
	want := map[Hash]time.Time{}
	for _, t := range tips {
		if t.IsZero() {
			continue
		}
		c, err := r.Commit(ctx, t)
		if err != nil {
			return nil, err
		}
		want[t] = c.Committer.When
	}
	seen := map[Hash]bool{}
	q := &commitQueue{}
	push := func(h Hash) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		if _, ok := want[h]; ok {
			out[h] = true
			delete(want, h)
		}
		c, err := r.Commit(ctx, h)
		if err != nil {
			return err
		}
		heap.Push(q, queued{c: c})
		return nil
	}
	for _, f := range from {
		if f.IsZero() {
			continue
		}
		c, err := r.Commit(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, p := range c.ParentHashes {
			if err := push(p); err != nil {
				return nil, err
			}
		}
	}
	for q.Len() > 0 && len(want) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		oldest := time.Time{}
		for _, w := range want {
			if oldest.IsZero() || w.Before(oldest) {
				oldest = w
			}
		}
		if (*q)[0].c.Committer.When.Before(oldest) {
			break
		}
		it := heap.Pop(q).(queued)
		for _, p := range it.c.ParentHashes {
			if err := push(p); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
