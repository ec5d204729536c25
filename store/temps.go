package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// Leftover temporary files: a write killed between making its temporary file and renaming it leaves the
// file behind (atomicfile.TempTarget's exact names). Which ones are leftovers, and when they are removed:
// docs/architecture.md "Atomic files".

// StaleTempAge is the age from which a temporary file of ctx's in the git dir's ctx folders is a leftover
// whatever made it: every write renames or removes its temporary file within milliseconds of making it.
const StaleTempAge = 10 * time.Minute

// journalFile is the refresh journal's name in the worktree's <git dir>/ctx/ (journalPath).
const journalFile = "checkout-journal.json"

// lockedTemps are the files of the worktree's <git dir>/ctx/ whose temporary files are leftovers whenever
// the checkout lock is held, whatever their age: the journal, written only with it held (a refresh, the
// lean front's write), and the tracked-files cache, whose failed write is no error (a temporary file
// removed under its writer costs the next check).
var lockedTemps = map[string]bool{journalFile: true, checkoutDirFile: true}

// leftoverTemps are the leftover temporary files findLeftovers found.
type leftoverTemps struct {
	gitDir   []string // absolute paths in the git dir's ctx folders
	checkout []string // slash paths in .context/
}

// findLeftovers lists the leftover temporary files, with the checkout lock held: in the git dir's ctx
// folders (the worktree's and the common one, one listing each) those of lockedTemps and those older than
// StaleTempAge at now; in .context/ (fsys, nil for none) every one, when walk is set or a temporary file of
// the journal was found (a refresh killed half way, which may have made some in any folder). Every file
// of .context/ is written with the checkout lock held (a refresh, the lean front), so there any temporary
// file seen with it held is a leftover. Only regular files named exactly as a write names them are listed:
// never a user's file, never a folder or a link.
func (s *Store) findLeftovers(fsys *checkoutFS, walk bool, now time.Time) leftoverTemps {
	var out leftoverTemps
	wt := filepath.Join(s.repo.GitDir(), "ctx")
	dirs := []string{wt}
	if c := s.repo.CtxDir(); filepath.Clean(c) != filepath.Clean(wt) {
		dirs = append(dirs, c)
	}
	for _, dir := range dirs {
		es, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range es {
			base, ok := atomicfile.TempTarget(e.Name())
			if !ok || !e.Type().IsRegular() {
				continue
			}
			if dir == wt && lockedTemps[base] {
				out.gitDir = append(out.gitDir, filepath.Join(dir, e.Name()))
				walk = walk || base == journalFile
				continue
			}
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > StaleTempAge {
				out.gitDir = append(out.gitDir, filepath.Join(dir, e.Name()))
			}
		}
	}
	if fsys != nil && walk {
		_ = fs.WalkDir(fsys.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable folder: skipped
			}
			if _, ok := atomicfile.TempTarget(d.Name()); ok && d.Type().IsRegular() {
				out.checkout = append(out.checkout, p)
			}
			return nil
		})
	}
	return out
}

// remove removes the leftovers, through fsys for those of .context/ (never through a link); errors joined.
func (l leftoverTemps) remove(fsys *checkoutFS) error {
	var errs []error
	for _, p := range l.gitDir {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, p := range l.checkout {
		if err := fsys.removeTemp(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeTemp removes the temporary file at p (slash path) of .context/ if it is still a regular file
// reached through no link.
func (c *checkoutFS) removeTemp(p string) error {
	if err := c.noLinks(p); err != nil {
		return nil
	}
	fi, err := c.root.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if err := c.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}

// sweepLeftovers removes the leftover temporary files (findLeftovers) with the checkout lock held, best
// effort: one that cannot be removed is tried again by the next command. Called by every refresh and
// hand-edit scan: one listing of the git dir's ctx folder, and a walk of .context/ only after an
// interrupted refresh (walk: its journal is there; or a temporary file of its journal).
func (s *Store) sweepLeftovers(fsys *checkoutFS, walk bool) {
	_ = s.findLeftovers(fsys, walk, time.Now()).remove(fsys)
}

// LeftoverTemps lists the temporary files that killed writes left in the git dir's ctx folders and in
// .context/ (findLeftovers, with every folder of .context/ walked), absolute paths, sorted by folder;
// with remove set it removes them (`ctx doctor --fix`) and returns those it removed. It takes the checkout
// lock, so no write in progress is listed; a .context/ that is missing or not a folder is not looked at.
func (s *Store) LeftoverTemps(ctx context.Context, remove bool) ([]string, error) {
	unlock, err := s.repo.LockCheckout(ctx)
	if err != nil {
		return nil, fmt.Errorf("leftover temporary files: %w", err)
	}
	defer unlock()
	var fsys *checkoutFS
	root := s.CheckoutRoot()
	if fi, err := os.Lstat(root); root != "" && err == nil && fi.IsDir() {
		if fsys, err = openCheckout(root); err != nil {
			fsys = nil
		} else {
			defer fsys.Close()
		}
	}
	l := s.findLeftovers(fsys, true, time.Now())
	out := append([]string(nil), l.gitDir...)
	for _, p := range l.checkout {
		out = append(out, filepath.Join(root, filepath.FromSlash(p)))
	}
	if remove {
		if err := l.remove(fsys); err != nil {
			return nil, fmt.Errorf("remove leftover temporary files: %w", err)
		}
	}
	return out, nil
}
