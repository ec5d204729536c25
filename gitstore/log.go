package gitstore

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Log returns up to n commits (n <= 0: all) reachable from tip along first parents, newest first. When
// path is not "", only commits whose tree differs from their first parent's at path are returned (a file
// or a directory). It walks first parents with tree lookups rather than go-git's Log with a path filter,
// which is orders of magnitude slower on long histories (design §3).
func (r *Repo) Log(ctx context.Context, tip plumbing.Hash, n int, path string) ([]*object.Commit, error) {
	var out []*object.Commit
	h := tip
	for !h.IsZero() {
		if n > 0 && len(out) >= n {
			break
		}
		c, err := r.Commit(ctx, h)
		if err != nil {
			return out, err
		}
		var parent plumbing.Hash
		if len(c.ParentHashes) > 0 {
			parent = c.ParentHashes[0]
		}
		keep := true
		if path != "" {
			mine, err := r.PathHash(ctx, c.TreeHash, path)
			if err != nil {
				return out, err
			}
			var theirs plumbing.Hash
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
func (r *Repo) MergeBase(ctx context.Context, a, b plumbing.Hash) (plumbing.Hash, error) {
	if a.IsZero() || b.IsZero() {
		return plumbing.ZeroHash, nil
	}
	ca, err := r.Commit(ctx, a)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	cb, err := r.Commit(ctx, b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, nil
	}
	best := bases[0]
	for _, c := range bases[1:] {
		if c.Committer.When.After(best.Committer.When) {
			best = c
		}
	}
	return best.Hash, nil
}

// IsAncestor reports whether a is reachable from b (a == b counts).
func (r *Repo) IsAncestor(ctx context.Context, a, b plumbing.Hash) (bool, error) {
	if a.IsZero() {
		return true, nil
	}
	if b.IsZero() {
		return false, nil
	}
	if a == b {
		return true, nil
	}
	ca, err := r.Commit(ctx, a)
	if err != nil {
		return false, err
	}
	cb, err := r.Commit(ctx, b)
	if err != nil {
		return false, err
	}
	return ca.IsAncestor(cb)
}

// CountAhead returns how many commits are reachable from a but not from b (git rev-list --count b..a).
func (r *Repo) CountAhead(ctx context.Context, a, b plumbing.Hash) (int, error) {
	if a.IsZero() {
		return 0, nil
	}
	seen := map[plumbing.Hash]bool{}
	if !b.IsZero() {
		cb, err := r.Commit(ctx, b)
		if err != nil {
			return 0, err
		}
		iter := object.NewCommitPreorderIter(cb, nil, nil)
		if err := iter.ForEach(func(c *object.Commit) error { seen[c.Hash] = true; return nil }); err != nil {
			return 0, err
		}
	}
	ca, err := r.Commit(ctx, a)
	if err != nil {
		return 0, err
	}
	n := 0
	iter := object.NewCommitPreorderIter(ca, seen, nil)
	err = iter.ForEach(func(c *object.Commit) error {
		if !seen[c.Hash] {
			n++
		}
		return nil
	})
	return n, err
}
