package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// The user's branches are not ctx's (docs/security.md "Trust boundaries: the user's branches"): whoever
// can push to main can commit a symbolic link named .context, or files under .context/, and git checks
// them out over ctx's ignored folder. ctx never follows such a link and never takes such a file for a hand
// edit: every command that reads or writes .context/ first checks it (checkCheckoutDir).

// ErrCheckoutDir is what a *CheckoutDirError is (errors.Is).
var ErrCheckoutDir = errors.New(CheckoutDir + "/ is not ctx's to use")

// CheckoutDirError is the refusal to use .context/: something else than a folder stands at its place (a
// symbolic link, which ctx never follows, or a file), or the user's repository tracks files there (in its
// index or in HEAD), which ctx would otherwise take for hand edits and commit to the context branch.
// Nothing was read or written through it.
type CheckoutDirError struct {
	Dir     string   // the absolute path of .context
	Link    string   // the symbolic link's target when .context is one, else ""
	NotDir  bool     // .context is neither a folder nor a symbolic link
	Tracked []string // the files of .context/ the repository tracks (slash paths from the work tree root)
	Commit  string   // the abbreviated name of HEAD's last commit that changed .context, "" when unknown
	// Replaced says that ctx had checked .context/ out in this worktree: git put the branch's files over
	// it (git deletes ignored files that stand in the way of a checkout), so hand edits not recorded with
	// ctx commit are lost.
	Replaced bool
}

func (e *CheckoutDirError) Error() string {
	var b strings.Builder
	switch {
	case e.Link != "":
		fmt.Fprintf(&b, "%s is a symbolic link (to %q), not ctx's folder: ctx never reads or writes through it", e.Dir, e.Link)
	case e.NotDir:
		fmt.Fprintf(&b, "%s is not a folder: ctx keeps its checked-out tree there", e.Dir)
	default:
		const show = 3
		list, more := e.Tracked, ""
		if len(list) > show {
			list, more = list[:show], fmt.Sprintf(" and %d more", len(e.Tracked)-show)
		}
		fmt.Fprintf(&b, "your repository tracks files in %s/ (%s%s): they are your branch's, not hand edits, "+
			"and ctx neither commits nor overwrites them", CheckoutDir, strings.Join(list, ", "), more)
	}
	if e.Commit != "" {
		fmt.Fprintf(&b, " (commit %s of your branch put it there)", e.Commit)
	}
	if e.Replaced {
		b.WriteString("; git checked it out over ctx's checked-out tree, so hand edits of .context/ that ctx commit had not recorded are lost")
	}
	if len(e.Tracked) > 0 {
		fmt.Fprintf(&b, "; remove it from your branch: git rm -r --cached %s && git commit, then ", CheckoutDir)
	} else {
		b.WriteString("; ")
	}
	if e.Link != "" || e.NotDir {
		fmt.Fprintf(&b, "remove %s (rm %s) and run ctx restore to check the context branch out again", CheckoutDir, CheckoutDir)
	} else {
		b.WriteString("run ctx restore to check the context branch out again")
	}
	return b.String()
}

func (e *CheckoutDirError) Is(target error) bool { return target == ErrCheckoutDir }

// dirVerified remembers, per Store, the key of the last tracked-files check that found none (untrackedKey),
// so that one command checks once.
type dirVerified struct {
	mu  sync.Mutex
	key string
}

func (d *dirVerified) get() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.key
}

func (d *dirVerified) set(key string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.key = key
	d.mu.Unlock()
}

// checkoutDirFile is the cache, in the worktree's git dir, of the last tracked-files check that found none:
// its key (untrackedKey). While the index and HEAD are unchanged, no git process runs.
const checkoutDirFile = "checkout-untracked"

// CheckCheckoutDir checks that .context/ is ctx's to use (checkCheckoutDir); nil in a bare repository.
// *CheckoutDirError otherwise.
func (s *Store) CheckCheckoutDir(ctx context.Context) error {
	_, err := s.checkCheckoutDir(ctx)
	return err
}

// checkCheckoutDir checks that .context/ is ctx's to use: not a symbolic link (lstat: a link is never
// followed, wherever it points) or another file, and holding no file the user's repository tracks, in
// its index (`git ls-files -- .context`) or in HEAD. exists says that .context is a folder. The
// tracked-files check runs git only when the index or HEAD changed since a check found none (the key of
// untrackedKey, kept in the worktree's git dir): a command on an unchanged repository pays one stat of the
// index, one read of HEAD and of the cache. Without a git binary the tracked-files check is skipped.
func (s *Store) checkCheckoutDir(ctx context.Context) (exists bool, err error) {
	root := s.CheckoutRoot()
	if root == "" {
		return false, nil
	}
	fi, err := os.Lstat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("check %s: %w", CheckoutDir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		e := &CheckoutDirError{Dir: root}
		if e.Link, err = os.Readlink(root); err != nil || e.Link == "" {
			e.Link = "?"
		}
		s.trackedFiles(ctx, e)
		return false, e
	case !fi.IsDir():
		e := &CheckoutDirError{Dir: root, NotDir: true}
		s.trackedFiles(ctx, e)
		return false, e
	default:
		exists = true
	}
	key := s.untrackedKey(ctx)
	if key != "" {
		if s.dirOK.get() == key {
			return exists, nil
		}
		if b, err := os.ReadFile(s.GitPath(filepath.Join("ctx", checkoutDirFile))); err == nil && string(b) == key {
			s.dirOK.set(key)
			return exists, nil
		}
	}
	// A checkout of the user's branch changes both parts of the key: read in process first (the index up to
	// .context's place, HEAD's root tree), and start git only when something may be tracked there, for the
	// list of files the refusal names (docs/hooks.md "A checkout after the context branch moved").
	if !s.repo.NothingTrackedIn(ctx, CheckoutDir) {
		e := &CheckoutDirError{Dir: root}
		if !s.trackedFiles(ctx, e) {
			return exists, nil // no git: nothing known, nothing cached
		}
		if len(e.Tracked) > 0 {
			return exists, e
		}
	}
	if key != "" {
		s.dirOK.set(key)
		p := s.GitPath(filepath.Join("ctx", checkoutDirFile))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err == nil {
			// A cache: a lost or failed write only costs the next check, so no fsync (two on every checkout,
			// each a journal commit of the file system that the user's git checkout waited for).
			_ = atomicfile.WriteNoSync(p, []byte(key), 0o644)
		}
	}
	return exists, nil
}

// untrackedKey is what a tracked-files check depends on: the stat data of the worktree's index file (git
// writes a new index by rename, so any change of it changes them) and the commit HEAD names. "" when they
// cannot be read (the check then runs every time).
func (s *Store) untrackedKey(ctx context.Context) string {
	head, err := s.repo.ResolveHEAD(ctx)
	if err != nil {
		return ""
	}
	var st FileStat
	if fi, err := os.Lstat(s.GitPath("index")); err == nil {
		st = *statOf(fi)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return fmt.Sprintf("v1 %+v %s\n", st, head)
}

// trackedFiles fills e.Tracked with the files of .context the repository tracks (index, then HEAD) and,
// when there are some, e.Commit; false when git could not say (no git binary, git failing).
func (s *Store) trackedFiles(ctx context.Context, e *CheckoutDirError) bool {
	idx, err := s.repo.TrackedFiles(ctx, CheckoutDir)
	if err != nil {
		return false
	}
	// git ls-tree with the path reads HEAD's root tree and what is below .context only: cheaper than
	// opening the user's packs in process (a reindex of a big pack).
	head, err := s.repo.TrackedInHead(ctx, CheckoutDir)
	if err != nil {
		return false
	}
	seen := map[string]bool{}
	for _, p := range append(idx, head...) {
		if !seen[p] {
			seen[p] = true
			e.Tracked = append(e.Tracked, p)
		}
	}
	if len(e.Tracked) > 0 {
		e.Commit, _ = s.repo.LastCommitTouching(ctx, CheckoutDir)
		e.Replaced = s.checkoutMade()
		// Once untracked, what git wrote there must not pass for hand edits (gitwritten.go).
		_ = s.rememberGitWritten(e.Tracked)
	}
	return true
}

// checkoutMadeFile, in the worktree's git dir, says that ctx checked .context/ out here: a .context/ that
// is missing then was deleted (rm -rf, git clean -X), and is not checked out again behind the user's back
// (CheckoutMissingError).
const checkoutMadeFile = "checked-out"

// checkoutMade reports whether .context/ was checked out in this worktree: the marker a refresh leaves, or
// the status index of a ctx that did not leave it yet.
func (s *Store) checkoutMade() bool {
	for _, p := range []string{s.GitPath(filepath.Join("ctx", checkoutMadeFile)), s.statusIndexPath()} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// markCheckoutMade leaves the marker of checkoutMade (once).
func (s *Store) markCheckoutMade() error {
	p := s.GitPath(filepath.Join("ctx", checkoutMadeFile))
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return fmt.Errorf("mark the checkout: %w", err)
	}
	return atomicfile.Write(p, []byte("ctx checked .context/ out in this worktree\n"), 0o644)
}

// ErrCheckoutMissing is what a *CheckoutMissingError is (errors.Is).
var ErrCheckoutMissing = errors.New(CheckoutDir + "/ is missing")

// CheckoutMissingError says that the checked-out tree, once made in this worktree, is gone as a whole (rm
// -rf .context, git clean -fdX). ctx does not take it for the deletion of every entry (ctx commit and a
// pull refuse, as for files deleted by hand), nor check it out again on its own: Restore does.
type CheckoutMissingError struct{ Dir string }

func (e *CheckoutMissingError) Error() string {
	return fmt.Sprintf("%s is missing (deleted by hand, or by git clean -X): nothing of it is recorded; "+
		"check the context branch out again with `ctx restore` (to delete entries, use their rm commands)", e.Dir)
}

func (e *CheckoutMissingError) Is(target error) bool { return target == ErrCheckoutMissing }

// checkoutMissing returns a *CheckoutMissingError when .context/ is missing but was checked out here.
func (s *Store) checkoutMissing(exists bool) error {
	if exists || s.CheckoutRoot() == "" || !s.checkoutMade() {
		return nil
	}
	return &CheckoutMissingError{Dir: s.CheckoutRoot()}
}

// ErrCheckoutBlocked is what a *CheckoutBlockedError is (errors.Is).
var ErrCheckoutBlocked = errors.New("entries of the context branch are not checked out")

// CheckoutBlockedError is a refresh that could not write entries of the context refs because a folder of
// .context/ on their way is a symbolic link (never followed) or a file. The refresh wrote everything else
// and marked its record incomplete, so .context/ reads as behind the context branch (ctx status), the MCP
// server reads from the refs, and the next refresh after the folder is removed checks those entries out
// (docs/security.md "Trust boundaries: the user's branches").
type CheckoutBlockedError struct {
	Dir   string   // the absolute path of the folder in the way
	Link  bool     // it is a symbolic link; otherwise it is not a folder
	Paths []string // the entries not written (slash paths relative to .context/)
}

func (e *CheckoutBlockedError) Error() string {
	what := "is not a folder"
	if e.Link {
		what = "is a symbolic link, which ctx never writes through"
	}
	return fmt.Sprintf("%s %s: %d %s of the context branch not checked out (%s); remove it (rm %s) and run ctx restore",
		e.Dir, what, len(e.Paths), pluralWord(len(e.Paths), "entry", "entries"), NamedFew(e.Paths, 3), e.Dir)
}

func (e *CheckoutBlockedError) Is(target error) bool { return target == ErrCheckoutBlocked }

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// NamedFew joins the first n of names with ", " and says how many more there are ("a, b and 3 more"):
// how ctx's messages name a long list.
func NamedFew(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
