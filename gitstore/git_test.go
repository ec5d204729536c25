package gitstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// Git runs in the directory it is given, on the repository that contains it, with the calling git's
// GIT_INDEX_FILE dropped; outside a repository it is ErrNotRepository.
func TestGitRunsOnTheRepositoryOfDir(t *testing.T) {
	dir := testenv.NewRepo(t)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := gitstore.Git(bg, sub, "rev-parse", "--show-prefix"); err != nil || got != "sub/" {
		t.Errorf("rev-parse --show-prefix in sub = %q, %v; want sub/", got, err)
	}
	want := testenv.Git(t, dir, "ls-files")
	t.Setenv("GIT_INDEX_FILE", filepath.Join(t.TempDir(), "other-index"))
	if got, err := gitstore.Git(bg, dir, "ls-files"); err != nil || got != want {
		t.Errorf("ls-files with GIT_INDEX_FILE set = %q, %v; want %q", got, err, want)
	}
	if _, err := gitstore.Git(bg, t.TempDir(), "status"); !errors.Is(err, gitstore.ErrNotRepository) {
		t.Errorf("outside a repository: %v, want ErrNotRepository", err)
	}
	if _, err := gitstore.Git(bg, dir, "no-such-command"); err == nil {
		t.Error("a failing git command returned no error")
	}
}

// TrackedFiles lists the index's files below a folder, relative to the work tree root.
func TestTrackedFiles(t *testing.T) {
	dir := testenv.NewRepo(t)
	writeFile(t, filepath.Join(dir, ".context", "mine.txt"), "x")
	writeFile(t, filepath.Join(dir, ".context", "untracked.txt"), "y")
	testenv.Git(t, dir, "add", ".context/mine.txt")
	r := open(t, dir)
	got, err := r.TrackedFiles(bg, ".context")
	if err != nil || len(got) != 1 || got[0] != ".context/mine.txt" {
		t.Errorf("TrackedFiles = %q, %v", got, err)
	}
	if got, err := r.TrackedFiles(bg, "nothing-here"); err != nil || len(got) != 0 {
		t.Errorf("TrackedFiles(nothing-here) = %q, %v", got, err)
	}
}

// LockCheckout serialises the holders of one worktree's checkout lock and gives up when ctx ends.
func TestLockCheckout(t *testing.T) {
	dir := testenv.NewRepo(t)
	r, other := open(t, dir), open(t, dir)
	unlock, err := r.LockCheckout(bg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	if u, err := other.LockCheckout(ctx); err == nil {
		u()
		t.Fatal("a second holder took the checkout lock while it was held")
	}
	unlock()
	u, err := other.LockCheckout(bg)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	u()
}
