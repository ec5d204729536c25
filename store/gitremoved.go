package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
)

// Files git removed from .context/ (docs/hooks.md "Files git removed in a checkout"). A branch of the user's
// that tracks files under .context/ (a teammate ran `git add -f`) loses them when the user checks out
// another commit: git deletes the files the old commit tracked and the new one does not. They look like
// hand deletions, and a `ctx commit` (or the commit a `ctx sync` makes first) would delete the entries for
// the whole team. So the post-checkout hook puts them back (RestoreCheckoutRemoved), and without the hook
// `ctx status` names them and `ctx commit` refuses them (removedByGit): deleting an entry for everyone is
// asked for explicitly, with `ctx knowledge rm` and its siblings.

// RestoreCheckoutRemoved puts back the files of .context/ that git removed in the checkout from commit
// old to commit new (the post-checkout hook's first two arguments, 40 hex digits each): files that old
// tracks under .context/, new does not, and that are missing now (a hand deletion of the checkout
// record's file). Each is written again from its context ref, as `ctx restore PATH` writes it, and
// forgotten as a file git wrote. It returns the restored paths (slash paths under .context/), none when
// old tracks nothing under .context/ (read in process from old's root tree when the store reads objects
// in process: no git process on the common path). Invalid hashes are an error wrapping ErrInvalid.
func (s *Store) RestoreCheckoutRemoved(ctx context.Context, old, new string) ([]string, error) {
	oldH, err := gitstore.ParseHash(old)
	if err != nil {
		return nil, invalidf("checkout from %q: not a commit name", old)
	}
	newH, err := gitstore.ParseHash(new)
	if err != nil {
		return nil, invalidf("checkout to %q: not a commit name", new)
	}
	if oldH == newH || s.repo.CommitLacks(ctx, oldH, CheckoutDir) || s.CheckoutRoot() == "" {
		return nil, nil
	}
	was, err := s.repo.TrackedInCommit(ctx, oldH, CheckoutDir)
	if err != nil {
		return nil, err
	}
	if len(was) == 0 {
		return nil, nil
	}
	now := map[string]bool{}
	if !s.repo.CommitLacks(ctx, newH, CheckoutDir) {
		is, err := s.repo.TrackedInCommit(ctx, newH, CheckoutDir)
		if err != nil {
			return nil, err
		}
		for _, p := range is {
			now[p] = true
		}
	}
	removed := map[string]bool{}
	for _, p := range was {
		if rel, ok := strings.CutPrefix(p, CheckoutDir+"/"); ok && rel != "" && !now[p] {
			removed[rel] = true
		}
	}
	if len(removed) == 0 {
		return nil, nil
	}
	edits, err := s.HandEdits(ctx)
	if err != nil {
		return nil, err
	}
	force := map[string]bool{}
	for _, e := range edits {
		if e.Change == ChangeDeleted && removed[e.Path] {
			force[e.Path] = true
		}
	}
	if len(force) == 0 {
		return nil, nil
	}
	r, err := s.refresh(ctx, force)
	if err != nil {
		return nil, fmt.Errorf("put back the files git removed from %s/: %w", CheckoutDir, err)
	}
	kept := map[string]bool{}
	for _, p := range r.Kept {
		kept[p] = true
	}
	var out []string
	for p := range force {
		if !kept[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	if err := s.forgetGitWritten(out); err != nil {
		return out, fmt.Errorf("the files git removed are back, but forgetting that git wrote them failed: %w", err)
	}
	return out, nil
}

// removedByGit maps each deletion among edits (paths under .context/) that a branch of the project tracks
// under .context/ to that branch (refs/heads/NAME, else refs/remotes/REMOTE/NAME): git removed the file
// when it checked out another commit, the user did not. Only deletions are looked at, and only when there
// are some (git processes: gitstore.Repo.RefsTracking). A failure to ask git finds nothing: the deletion
// then stays a hand deletion, as before this check.
func (s *Store) removedByGit(ctx context.Context, edits []HandEdit) map[string]string {
	var deleted []string
	for _, e := range edits {
		if e.Change == ChangeDeleted {
			deleted = append(deleted, e.Path)
		}
	}
	if len(deleted) == 0 || s.CheckoutRoot() == "" {
		return nil
	}
	by, err := s.repo.RefsTracking(ctx, CheckoutDir, deleted)
	if err != nil || len(by) == 0 {
		return nil
	}
	return by
}

// removedByGitWhy is the reason ctx status and ctx commit give for a deletion git made (removedByGit).
func removedByGitWhy(p, ref string) string {
	return fmt.Sprintf("%s: deleted by git, not by you: your branch %s tracks %s/%s, and git removed it when you checked out another commit; "+
		"run ctx restore %s to put the context branch's version back (to delete the entry for everyone, use the kind's rm command)",
		p, shortRef(ref), CheckoutDir, p, p)
}

// shortRef is a branch's name as git prints it: refs/heads/ and refs/remotes/ dropped.
func shortRef(ref string) string {
	if r, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return r
	}
	if r, ok := strings.CutPrefix(ref, "refs/remotes/"); ok {
		return r
	}
	return ref
}
