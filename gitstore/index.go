package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/gitstore/objread"
)

// NothingTrackedIn reports, without starting git, that neither the worktree's index nor HEAD's tree holds
// a file at or below dir, a single folder name at the work tree's root (".context"): what `git ls-files --
// dir` and `git ls-tree -r HEAD -- dir` would both print nothing for. It answers true only when it is sure;
// false means "maybe" (an entry there, or an index or object it does not read: a split index, an index
// version it does not know, GIT_INDEX_FILE naming another index, HEAD's commit not readable in process)
// and the caller asks git (TrackedFiles, TrackedInHead), whose lists also name the files. A bare
// repository tracks nothing there.
//
// The index is read only up to the entries that sort after dir (git keeps them sorted by name); HEAD's tree
// is read only when this Repo reads objects in process (ReadInProcess), as its root tree's names only: a
// blob, link, tree or submodule named dir there is a "maybe".
func (r *Repo) NothingTrackedIn(ctx context.Context, dir string) bool {
	if r.workTree == "" {
		return true
	}
	if dir == "" || strings.ContainsAny(dir, "/\x00") || dir == "." || dir == ".." {
		return false
	}
	if _, ok := r.cf.(*packReader); !ok {
		return false // go-git would index the user's packs: git ls-tree is cheaper
	}
	if os.Getenv("GIT_INDEX_FILE") != "" {
		return false // another index than the worktree's: git reads the one it names
	}
	if split, err := r.splitIndex(); err != nil || split {
		return false
	}
	if found, err := objread.IndexHasPath(filepath.Join(r.gitDir, "index"), dir); err != nil || found {
		return false
	}
	head, err := r.ResolveHEAD(ctx)
	if err != nil {
		return false
	}
	return r.CommitLacks(ctx, head, dir)
}

// CommitLacks reports, without starting git, that commit's root tree has no entry named dir (a single name,
// ".context"): nothing at or below it is tracked there. True for the zero hash (an unborn branch, git's
// "no previous HEAD"). False means "maybe": an entry of that name, or a commit not read in process (this
// Repo reads objects through git, or the commit is missing); the caller asks git (TrackedInCommit).
func (r *Repo) CommitLacks(ctx context.Context, commit Hash, dir string) bool {
	if commit.IsZero() {
		return true
	}
	if dir == "" || strings.ContainsAny(dir, "/\x00") || dir == "." || dir == ".." {
		return false
	}
	if _, ok := r.cf.(*packReader); !ok {
		return false // go-git would index the user's packs: git ls-tree is cheaper
	}
	root, err := r.TreeOf(ctx, commit)
	if err != nil {
		return false
	}
	t, err := r.tree(root)
	if err != nil {
		return false
	}
	for _, e := range t.Entries {
		if e.Name == dir {
			return false
		}
	}
	return true
}

// splitIndex reports whether the worktree's index may be split (core.splitIndex: its entries partly in a
// sharedindex.<hash> file beside it), which objread.IndexHasPath does not read.
func (r *Repo) splitIndex() (bool, error) {
	for _, d := range []string{r.gitDir, r.commonDir} {
		m, err := filepath.Glob(filepath.Join(d, "sharedindex.*"))
		if err != nil {
			return false, err
		}
		if len(m) > 0 {
			return true, nil
		}
	}
	return false, nil
}
