package store

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

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
	fetched := notesFetchRef(remote)
	ours, err := s.repo.Resolve(ctx, NotesRef)
	if err != nil {
		return res, fmt.Errorf("pull notes: %w", err)
	}
	prev, err := s.repo.Resolve(ctx, fetched)
	if err != nil {
		return res, fmt.Errorf("pull notes: %w", err)
	}
	// The pull just before listed the remote's notes ref (fetchAll): no notes there, or the tip fetched
	// last time, needs no fetch (a git fetch and the remote's upload-pack, for nothing).
	tip, listed := s.notes.take(remote)
	var theirs gitstore.Hash
	switch {
	case listed && tip.IsZero():
		return res, nil
	case listed && s.hasFetchedNotes(ctx, fetched, tip):
		// Fetched and checked before its fetch ref moved; checked again against ours, which costs
		// nothing once merged (a fetch ref an older ctx moved unchecked is checked here).
		if err := s.checkNotes(ctx, remote, tip, []gitstore.Hash{ours}); err != nil {
			return res, err
		}
		theirs = tip
	default:
		// Into a quarantine ref first (as the context branch: fetchAll), checked before any ref moves.
		tctx, cancel := context.WithTimeout(ctx, s.timeout())
		defer cancel()
		q, release := s.newQuarantine(ctx)
		defer release()
		found, err := s.repo.Fetch(tctx, remote, "?+"+NotesRef+":"+q+"notes", gitstore.TransferOptions{Progress: progress(ctx), Origin: origin})
		defer s.dropQuarantine(context.WithoutCancel(ctx), q)
		if err != nil {
			return res, fmt.Errorf("pull notes: %w", err)
		}
		if !found {
			return res, nil
		}
		if theirs, err = s.repo.Resolve(ctx, q+"notes"); err != nil {
			return res, fmt.Errorf("pull notes: %w", err)
		}
		if err := s.checkNotes(ctx, remote, theirs, []gitstore.Hash{ours, prev}); err != nil {
			return res, err
		}
		if err := s.moveTracking(ctx, remote, fetched, prev, theirs); err != nil {
			return res, fmt.Errorf("pull notes: %w", err)
		}
	}
	res.Found = true
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

// hasFetchedNotes reports whether the fetch ref of the remote's notes is at tip and its commit is here.
func (s *Store) hasFetchedNotes(ctx context.Context, fetched string, tip gitstore.Hash) bool {
	cur, err := s.repo.Resolve(ctx, fetched)
	if err != nil || cur != tip {
		return false
	}
	_, err = s.repo.Commit(ctx, tip)
	return err == nil
}

// notesSeen is the remote's notes tip as a pull's listing of the remote gave it (ZeroHash: no notes
// there), for the PullNotes that follows it in the same command (ctx pull, ctx sync). It is taken once,
// and only within notesSeenFor of the listing: a later PullNotes (a long-lived server's) fetches.
type notesSeen struct {
	mu     sync.Mutex
	remote string
	tip    gitstore.Hash
	at     time.Time
}

// notesSeenFor bounds how old a listing PullNotes trusts: the remote's notes may move after it, as they
// may after a fetch; a pull's own checks and merge take seconds at most.
const notesSeenFor = time.Minute

// saw records the listing of remote.
func (n *notesSeen) saw(remote string, tip gitstore.Hash) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.remote, n.tip, n.at = remote, tip, time.Now()
}

// take returns and forgets the listing of remote; ok is false when there is none that recent.
func (n *notesSeen) take(remote string) (tip gitstore.Hash, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ok = n.remote == remote && !n.at.IsZero() && time.Since(n.at) < notesSeenFor
	tip = n.tip
	n.remote, n.tip, n.at = "", gitstore.ZeroHash, time.Time{}
	return tip, ok
}

// MaxNoteBytes bounds one note of refs/notes/ctx a pull takes (1 MiB): a note holds a few ctx-blame
// records of a commit (docs/blame.md), a few hundred bytes each.
const MaxNoteBytes = 1 << 20

// checkNotes refuses fetched notes tip theirs when a commit of its history not reachable from known is
// over gitstore.MaxCommitBytes, or adds a note (a blob of the notes tree) over MaxNoteBytes: the error names
// the commit, the note (the annotated object's name) and the limit; nothing is read but the objects'
// headers, and no ref has moved (docs/limits.md "Commit messages and notes: 1 MiB").
func (s *Store) checkNotes(ctx context.Context, remote string, theirs gitstore.Hash, known []gitstore.Hash) error {
	what := remote + "'s " + NotesRef
	big, err := s.oversizedCommits(ctx, theirs, known)
	if err != nil {
		return fmt.Errorf("pull notes: check %s: %w", what, err)
	}
	if len(big) == 0 {
		commits, err := s.repo.NewCommits(ctx, theirs, known)
		if err != nil {
			return fmt.Errorf("pull notes: check %s: %w", what, err)
		}
		var notes []gitstore.Hash
		where := map[gitstore.Hash]Problem{}
		for _, h := range commits {
			c, err := s.repo.Commit(ctx, h)
			if err != nil {
				return fmt.Errorf("pull notes: check %s: %w", what, err)
			}
			var parentTree gitstore.Hash
			if len(c.ParentHashes) > 0 {
				if parentTree, err = s.repo.TreeOf(ctx, c.ParentHashes[0]); err != nil {
					return fmt.Errorf("pull notes: check %s: %w", what, err)
				}
			}
			// Bounded as the context branch's history is (maxTipFiles entries of either tree, docs/limits.md
			// "Files of a fetched tip"): a few trees naming one another twice would otherwise be walked for
			// minutes.
			added, _, err := s.repo.DiffItemsWithin(ctx, parentTree, c.TreeHash, maxTipFiles)
			if err != nil {
				return fmt.Errorf("pull notes: check %s: commit %s: %w", what, h, err)
			}
			for _, it := range added {
				if it.IsFile() {
					notes = append(notes, it.Hash)
					where[it.Hash] = Problem{Commit: h.String(), Path: it.Path(), Entry: "note"}
				}
			}
		}
		sizes, err := s.repo.ObjectSizes(ctx, notes)
		if err != nil {
			return fmt.Errorf("pull notes: check %s: %w", what, err)
		}
		for _, n := range notes {
			if sz := sizes[n]; sz > MaxNoteBytes {
				p := where[n]
				p.Size = sz
				p.Reason = fmt.Sprintf("the note of %s is %s, over the limit of one note (%s)", strings.ReplaceAll(p.Path, "/", ""), sizeOf(sz), sizeOf(MaxNoteBytes))
				big = append(big, p)
				delete(where, n)
			}
		}
	}
	if len(big) == 0 {
		return nil
	}
	sort.Slice(big, func(i, j int) bool { return big[i].Commit+big[i].Path < big[j].Commit+big[j].Path })
	var b strings.Builder
	fmt.Fprintf(&b, "pull notes: refusing %s at %s: it holds notes or commits over the size limit (nothing was changed: no ref moved):", what, theirs)
	for i, p := range big {
		if i == maxListedProblems {
			b.WriteString("\n  (more not listed)")
			break
		}
		fmt.Fprintf(&b, "\n  %s", p)
	}
	fmt.Fprintf(&b, "\nThe notes' history keeps a note removed later (git notes remove), so whoever made them resets %s to a commit "+
		"before them (git update-ref %s COMMIT) and force-pushes it (git push --force REMOTE %s) (docs/limits.md \"Commit messages and notes\")", NotesRef, NotesRef, NotesRef)
	return &notesRejected{b.String()}
}

// notesRejected is fetched notes that checkNotes refuses; it wraps ErrRejected.
type notesRejected struct{ msg string }

func (e *notesRejected) Error() string { return e.msg }
func (e *notesRejected) Unwrap() error { return ErrRejected }

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
		// What every teammate's pull would refuse is not published: the notes' new commits (those the last
		// fetch of the remote's notes lacks) are checked as a pull checks them.
		prev, err := s.repo.Resolve(ctx, notesFetchRef(remote))
		if err != nil {
			return res, fmt.Errorf("push notes: %w", err)
		}
		if err := s.checkNotes(ctx, "this clone", tip, []gitstore.Hash{prev}); err != nil {
			return res, fmt.Errorf("push notes: not pushed, as every pull would refuse them: %w", err)
		}
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
