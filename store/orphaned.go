package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
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

// maxOrphanedRefs bounds the refs of OrphanedPrefix that OrphanedRefs reads (each is one ctx init or pull
// after a deletion: a handful in practice).
const maxOrphanedRefs = 1000

// OrphanedRef is one ref under OrphanedPrefix: the kept tip of a deleted context branch (docs/sync.md "A
// deleted context branch").
type OrphanedRef struct {
	Ref string `json:"ref"` // the full ref name, refs/ctx-orphaned/<branch>-<unix seconds>
	Tip string `json:"tip"` // the commit it keeps (40 hex digits)
	// Date is the tip's committer date (RFC 3339, UTC): the last write of that branch; "" when the commit
	// cannot be read.
	Date string `json:"date"`
	// Kept is when ctx kept it, from the ref name's unix seconds (RFC 3339, UTC); "" for a name without them.
	Kept string `json:"kept,omitempty"`
	// Merged: the tip is in the context branch's history (its entries were pulled or written back), so
	// deleting the ref loses nothing; ctx doctor --fix deletes only these.
	Merged bool `json:"merged"`
}

// OrphanedRefs lists the refs under OrphanedPrefix, sorted by name, each with its tip's date and whether
// the context branch holds the tip already. Never nil. More than maxOrphanedRefs such refs is an error
// (gitstore.ErrTooManyRefs).
func (s *Store) OrphanedRefs(ctx context.Context) ([]OrphanedRef, error) {
	refs, err := s.repo.RefsUnder(OrphanedPrefix, maxOrphanedRefs)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", OrphanedPrefix, err)
	}
	branch, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return nil, err
	}
	out := make([]OrphanedRef, 0, len(refs))
	for name, tip := range refs {
		o := OrphanedRef{Ref: name, Tip: tip.String()}
		if i := strings.LastIndexByte(name, '-'); i >= 0 {
			if sec, err := strconv.ParseInt(name[i+1:], 10, 64); err == nil && sec > 0 {
				o.Kept = time.Unix(sec, 0).UTC().Format(time.RFC3339)
			}
		}
		if c, err := s.repo.Commit(ctx, tip); err == nil {
			o.Date = c.Committer.When.UTC().Format(time.RFC3339)
			if !branch.IsZero() {
				if o.Merged, err = s.repo.IsAncestor(ctx, tip, branch); err != nil {
					return nil, fmt.Errorf("is %s in %s: %w", name, s.BranchRef(), err)
				}
			}
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// PruneOrphanedRefs deletes the refs under OrphanedPrefix whose tip the context branch holds already
// (OrphanedRef.Merged: nothing is lost) and returns them, and the refs it keeps as OrphanedRefs lists them
// (their entries may exist nowhere else; never nil). Each is deleted with git update-ref -d against the
// tip read, so a ref moved meanwhile stays, and a packed one goes too.
func (s *Store) PruneOrphanedRefs(ctx context.Context) (deleted, kept []OrphanedRef, err error) {
	all, err := s.OrphanedRefs(ctx)
	if err != nil {
		return nil, nil, err
	}
	kept = make([]OrphanedRef, 0, len(all))
	for i, o := range all {
		if !o.Merged || !strings.HasPrefix(o.Ref, OrphanedPrefix) || strings.ContainsAny(o.Ref, " \t\n") {
			kept = append(kept, o)
			continue
		}
		if _, err := s.repo.Git(ctx, "update-ref", "-m", "ctx doctor --fix: the context branch holds this tip", "-d", o.Ref, o.Tip); err != nil {
			return deleted, append(kept, all[i:]...), fmt.Errorf("delete %s: %w", o.Ref, err)
		}
		deleted = append(deleted, o)
	}
	return deleted, kept, nil
}
