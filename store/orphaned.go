package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
)

// A context branch deleted with plain git (`git branch -D ctx`) leaves its commits dangling, though
// .context/'s checkout record still names the last tip checked out here. ctx status names it, and ctx
// init and ctx pull, which would start over or adopt the remote's branch and refresh .context/ without
// it, first keep it under refs/ctx-orphaned/ and say so (docs/sync.md "A deleted context branch").

// OrphanedPrefix holds the refs that keep the tips of deleted context branches reachable.
const OrphanedPrefix = "refs/ctx-orphaned/"

// OrphanedError is ErrNotInitialized (exit 4) for a repository whose context branch is gone while the
// checkout record names its last tip, a commit still in the repository.
type OrphanedError struct {
	Branch string        // the branch's short name
	Tip    gitstore.Hash // the last tip .context/ was checked out from
}

func (e *OrphanedError) Error() string {
	return fmt.Sprintf("the context branch %s is gone (deleted with git?), but .context/ was checked out from its commit %s, "+
		"which this repository still has: git branch %s %s brings it back (ctx init or ctx pull would start without it, "+
		"and keep it under %s)", e.Branch, e.Tip.String()[:12], e.Branch, e.Tip, OrphanedPrefix)
}

func (e *OrphanedError) Is(target error) bool { return target == ErrNotInitialized }

// orphanedTip is the public commit the checkout record names when the context branch does not exist and
// that commit is still in the repository and holds a manifest.json (a context store's tip); zero otherwise.
func (s *Store) orphanedTip(ctx context.Context) gitstore.Hash {
	if s.CheckoutRoot() == "" {
		return gitstore.Hash{}
	}
	if cur, err := s.repo.Resolve(ctx, s.BranchRef()); err != nil || !cur.IsZero() {
		return gitstore.Hash{}
	}
	rec, err := s.ReadRecord()
	if err != nil || rec == nil {
		return gitstore.Hash{}
	}
	h, err := gitstore.ParseHash(rec.Commits[Public])
	if err != nil || h.IsZero() {
		return gitstore.Hash{}
	}
	if _, err := s.repo.Commit(ctx, h); err != nil {
		return gitstore.Hash{}
	}
	// A record that names a commit with no manifest.json was left by an older ctx that checked a branch of
	// the user's out as the store: that commit was never a context store's tip, nothing to keep.
	if ok, err := s.isContextTip(ctx, h); err != nil || !ok {
		return gitstore.Hash{}
	}
	return h
}

// keepOrphaned keeps the orphaned tip (orphanedTip) under refs/ctx-orphaned/<branch>-<unix seconds> before
// init or pull replaces the branch; it returns the ref made ("" when there is no orphaned tip).
func (s *Store) keepOrphaned(ctx context.Context) (string, gitstore.Hash, error) {
	tip := s.orphanedTip(ctx)
	if tip.IsZero() {
		return "", tip, nil
	}
	ref := OrphanedPrefix + s.cfg.Branch + "-" + strconv.FormatInt(time.Now().Unix(), 10)
	if err := s.repo.UpdateRef(ctx, ref, gitstore.Hash{}, tip, "ctx: keep the tip of the deleted context branch"); err != nil {
		return "", tip, fmt.Errorf("keep the deleted context branch's tip %s: %w", tip, err)
	}
	return ref, tip, nil
}
