package store

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ctx-dev/ctx/gitstore"
)

// NotesRef holds the notes of ctx's post-commit hook: which agent session made a commit of the user's
// branches (docs/blame.md). ctx push and ctx pull carry it next to the context branch.
const NotesRef = "refs/notes/ctx"

// maxNotesRetries bounds the push attempts of PushNotes when the remote's notes moved.
const maxNotesRetries = 3

// notesFetchRef is where the remote's notes land before they are merged into NotesRef.
func notesFetchRef(remote string) string {
	sum := sha1.Sum([]byte(remote))
	return "refs/ctx/notes/" + hex.EncodeToString(sum[:])[:12]
}

// NotesResult says what PullNotes or PushNotes did.
type NotesResult struct {
	Found bool          // pull: the remote has notes; push: there were local notes to push
	Tip   gitstore.Hash // NotesRef afterwards
}

// PullNotes fetches the remote's refs/notes/ctx (when it has one) and merges it into the local one with
// git's cat_sort_uniq strategy (git-notes(1)): the records of both sides are kept, each once. remote as in
// PullOptions.Remote. It changes nothing but NotesRef and its fetch ref.
func (s *Store) PullNotes(ctx context.Context, remote string, origin RemoteOrigin) (NotesResult, error) {
	var res NotesResult
	if remote == "" {
		remote = s.RemoteName(ctx)
	}
	if err := s.CheckRemote(remote, origin); err != nil {
		return res, err
	}
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	fetched := notesFetchRef(remote)
	found, err := s.repo.Fetch(tctx, remote, "?+"+NotesRef+":"+fetched, gitstore.TransferOptions{Progress: progress(ctx), Origin: origin})
	if err != nil {
		return res, fmt.Errorf("pull notes: %w", err)
	}
	if !found {
		return res, nil
	}
	res.Found = true
	theirs, err := s.repo.Resolve(ctx, fetched)
	if err != nil {
		return res, fmt.Errorf("pull notes: %w", err)
	}
	ours, err := s.repo.Resolve(ctx, NotesRef)
	if err != nil {
		return res, fmt.Errorf("pull notes: %w", err)
	}
	switch {
	case ours.IsZero():
		if err := s.repo.UpdateRef(ctx, NotesRef, gitstore.ZeroHash, theirs, "ctx pull: notes"); err != nil {
			return res, fmt.Errorf("pull notes: %w", err)
		}
	case ours != theirs:
		if _, err := s.repo.Git(ctx, "notes", "--ref="+NotesRef, "merge", "--quiet", "--strategy=cat_sort_uniq", fetched); err != nil {
			return res, fmt.Errorf("pull notes: merge: %w", err)
		}
	}
	res.Tip, err = s.repo.Resolve(ctx, NotesRef)
	return res, err
}

// PushNotes pushes refs/notes/ctx to the same name on the remote, never forced; when the remote's notes
// moved it pulls them (PullNotes) and tries again, at most three times. Without local notes it does nothing.
func (s *Store) PushNotes(ctx context.Context, remote string, origin RemoteOrigin) (NotesResult, error) {
	var res NotesResult
	if remote == "" {
		remote = s.RemoteName(ctx)
	}
	if err := s.CheckRemote(remote, origin); err != nil {
		return res, err
	}
	for attempt := 0; ; attempt++ {
		tip, err := s.repo.Resolve(ctx, NotesRef)
		if err != nil || tip.IsZero() {
			return res, err
		}
		res.Found, res.Tip = true, tip
		pctx, cancel := context.WithTimeout(ctx, s.timeout())
		err = s.repo.Push(pctx, remote, NotesRef+":"+NotesRef, gitstore.TransferOptions{Progress: progress(ctx), Origin: origin})
		cancel()
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, gitstore.ErrNonFastForward) || attempt >= maxNotesRetries {
			return res, fmt.Errorf("push notes: %w", err)
		}
		if _, err := s.PullNotes(ctx, remote, origin); err != nil {
			return res, fmt.Errorf("push notes: the remote's notes moved and pulling them failed: %w", err)
		}
	}
}
