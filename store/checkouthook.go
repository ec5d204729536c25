package store

import (
	"context"
	"path/filepath"
	"sort"
)

// GitPath is the path of a file git keeps per worktree, in this worktree's git dir (as `git rev-parse
// --git-path NAME` prints it for HEAD, rebase-merge, CHERRY_PICK_HEAD or ctx's hook stamp).
func (s *Store) GitPath(name string) string { return filepath.Join(s.repo.GitDir(), name) }

// RefValues is what `git for-each-ref --format='%(refname)=%(objectname)' REF...` prints for the full ref
// names refs (the hooks' stamp, docs/hooks.md): "REF=OID" of each ref that exists in the repository,
// sorted by name. The private and ephemeral refs live in a repository of their own, which git's
// for-each-ref does not see, and neither does this.
func (s *Store) RefValues(ctx context.Context, refs []string) ([]string, error) {
	sorted := append([]string(nil), refs...)
	sort.Strings(sorted) // by name, as git sorts: "refs/x" before "refs/x2" ('=' sorts after '2')
	var out []string
	for _, r := range sorted {
		h, err := s.repo.ResolveInRepository(ctx, r)
		if err != nil {
			return nil, err
		}
		if !h.IsZero() {
			out = append(out, r+"="+h.String())
		}
	}
	return out, nil
}

// Head is what `git rev-parse --symbolic-full-name HEAD` prints: the full name of this worktree's branch,
// or "HEAD" when it is detached.
func (s *Store) Head(context.Context) (string, error) { return s.repo.HeadName() }

// ReadWithGit makes the store read objects through one `git cat-file --batch` process instead of go-git's
// pack reader: cheaper for a short-lived process that reads a few objects of a big store, such as a git
// hook's refresh (docs/hooks.md). Call it right after Open.
func (s *Store) ReadWithGit() { s.repo.ReadWithGit() }

// ReadInProcess makes the store read objects with gitstore's own pack reader first (gitstore's
// ReadInProcess): what a one-shot command that reads entries or commits uses. Call it right after Open.
func (s *Store) ReadInProcess() { s.repo.ReadInProcess() }
