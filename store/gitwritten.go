package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// Files git wrote into .context/ (docs/security.md "Trust boundaries: the user's branches"). A commit of
// the user's branch that tracks files under .context/ makes git write them there on a pull or checkout,
// and delete them again on a revert or a checkout of another commit. While the branch tracks them,
// CheckoutDirError refuses every command; once the user untracks them (`git rm -r --cached .context`),
// the files git wrote are still there and, differing from the context branch, would look like hand edits
// that the next `ctx sync` records and pushes in the user's name; files git deleted would look like hand
// deletions. So every path a tracked-files check found is remembered in the worktree's git dir, and is
// never recorded as a hand edit (added, modified or deleted) until `ctx restore` puts the branch's version
// back.

// gitWrittenFile, in the worktree's git dir under ctx/, lists those paths (relative to .context/), one a
// line.
const gitWrittenFile = "checkout-git-written"

// ErrGitWritten is what a *GitWrittenError is (errors.Is), as ErrInvalid is (exit 2).
var ErrGitWritten = errors.New("files of " + CheckoutDir + "/ written by git from the user's branch")

// GitWrittenError refuses to record hand edits of files git wrote into (or deleted from) .context/ from a
// commit of the user's branch: they are not the user's edits. Nothing was committed.
type GitWrittenError struct {
	Paths []string
	// RemovedBy names, by path, the branch that tracks a file git deleted when the user checked out another
	// commit (docs/hooks.md "Files git removed in a checkout"); empty for files remembered by a tracked-files
	// check.
	RemovedBy map[string]string
}

func (e *GitWrittenError) Error() string {
	const show = 5
	if len(e.RemovedBy) > 0 {
		var why []string
		for _, p := range e.Paths {
			if ref, ok := e.RemovedBy[p]; ok && len(why) < show {
				why = append(why, removedByGitWhy(p, ref))
			}
		}
		more := ""
		if len(e.Paths) > len(why) {
			more = fmt.Sprintf("\n(and %d more: ctx status lists them)", len(e.Paths)-len(why))
		}
		return fmt.Sprintf("nothing committed: %s/ lacks files that git deleted, not you, so ctx does not delete them "+
			"for everyone (ctx restore puts them all back):\n  %s%s", CheckoutDir, strings.Join(why, "\n  "), more)
	}
	list, more := e.Paths, ""
	if len(list) > show {
		list, more = list[:show], fmt.Sprintf(" and %d more", len(e.Paths)-show)
	}
	return fmt.Sprintf("nothing committed: %s/ holds changes git made from a commit of your branch that tracked files there, "+
		"not edits of yours (%s%s); ctx does not record them: run ctx restore to put the context branch's version back "+
		"(and rm the files it leaves, which the branch does not have); to keep such text, write it yourself with ctx knowledge set",
		CheckoutDir, strings.Join(list, ", "), more)
}

func (e *GitWrittenError) Is(target error) bool {
	return target == ErrGitWritten || target == ErrInvalid
}

func (s *Store) gitWrittenPath() string { return s.GitPath(filepath.Join("ctx", gitWrittenFile)) }

// gitWritten is the set of remembered paths; empty when there are none (or the list cannot be read: it is
// rewritten by the next tracked-files check that finds some).
func (s *Store) gitWritten() map[string]bool {
	b, err := os.ReadFile(s.gitWrittenPath())
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out[string(l)] = true
		}
	}
	return out
}

// setGitWritten writes the remembered paths (removing the list when there are none).
func (s *Store) setGitWritten(set map[string]bool) error {
	p := s.gitWrittenPath()
	if len(set) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	paths := make([]string, 0, len(set))
	for k := range set {
		paths = append(paths, k)
	}
	slices.Sort(paths)
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	return atomicfile.Write(p, []byte(strings.Join(paths, "\n")+"\n"), 0o644)
}

// rememberGitWritten adds the tracked files a check found (slash paths from the work tree's root) to the
// remembered paths. A failure is returned but the refusal that found them stands on its own.
func (s *Store) rememberGitWritten(tracked []string) error {
	set := s.gitWritten()
	if set == nil {
		set = map[string]bool{}
	}
	n := len(set)
	for _, p := range tracked {
		if rel, ok := strings.CutPrefix(p, CheckoutDir+"/"); ok && rel != "" {
			set[rel] = true
		}
	}
	if len(set) == n {
		return nil
	}
	return s.setGitWritten(set)
}

// forgetGitWritten drops paths (relative to .context/) from the remembered ones: their branch version
// was put back (Restore).
func (s *Store) forgetGitWritten(paths []string) error {
	set := s.gitWritten()
	if len(set) == 0 {
		return nil
	}
	for _, p := range paths {
		delete(set, p)
	}
	return s.setGitWritten(set)
}

// refuseGitWritten is a *GitWrittenError when any of edits is a remembered path, else nil.
func (s *Store) refuseGitWritten(edits []HandEdit) error {
	set := s.gitWritten()
	if len(set) == 0 {
		return nil
	}
	var hit []string
	edited := map[string]bool{}
	for _, e := range edits {
		edited[e.Path] = true
		if set[e.Path] {
			hit = append(hit, e.Path)
		}
	}
	// A remembered file that is no longer a hand edit is the branch's version again (or gone for good,
	// as the branch has it): nothing of git's is left there to mistake for the user's.
	stale := false
	for p := range set {
		if !edited[p] {
			delete(set, p)
			stale = true
		}
	}
	if stale {
		_ = s.setGitWritten(set) // a cache of refusals: a failed write refuses the same files again
	}
	if len(hit) == 0 {
		return nil
	}
	return &GitWrittenError{Paths: hit}
}
