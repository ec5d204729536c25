package gitstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestReadAfterRepackBeside: a `git repack -a -d` (what a detached `git gc --auto` runs) replaces the
// packs a Repo indexed while it stays open; its next reads find every object in the new pack instead of
// failing with "packfile not found" (found by make stress: a ctx status raced a gc left by a killed pull).
func TestReadAfterRepackBeside(t *testing.T) {
	ctx := context.Background()
	dir := testenv.NewRepo(t)
	for i := 0; i < 3; i++ {
		testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
	}
	testenv.Git(t, dir, "repack", "-a", "-d", "-q")
	r, err := gitstore.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	head := gitstore.NewHash(testenv.Git(t, dir, "rev-parse", "HEAD"))
	first := gitstore.NewHash(testenv.Git(t, dir, "rev-parse", "HEAD~2"))
	if _, err := r.Commit(ctx, head); err != nil { // the pack index is built now
		t.Fatal(err)
	}
	// New objects, then one pack of everything in place of the old one.
	testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "d")
	testenv.Git(t, dir, "repack", "-a", "-d", "-q")
	for _, h := range []gitstore.Hash{first, head} {
		if _, err := r.Commit(ctx, h); err != nil {
			t.Fatalf("read %s after a repack beside the open Repo: %v", h, err)
		}
	}
}

// openPacks counts this process's open descriptors of packfiles under dir.
func openPacks(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir) && strings.HasSuffix(target, ".pack") {
			n++
		}
	}
	return n
}

// A Repo keeps a packfile open once it has read from it (go-git's KeepDescriptors), instead of opening
// it again for every object: 40 reads of packed commits leave one descriptor of the one pack. Close
// closes it, and the Repo still reads afterwards.
func TestPackKeptOpenUntilClose(t *testing.T) {
	ctx := context.Background()
	dir := realpath(t, testenv.NewRepo(t))
	for i := 0; i < 40; i++ {
		testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint("c", i))
	}
	testenv.Git(t, dir, "repack", "-a", "-d", "-q")
	r, err := gitstore.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := openPacks(t, dir); n != 0 {
		t.Fatalf("%d packfiles open after Open, want none (nothing read yet)", n)
	}
	for i := 0; i < 40; i++ {
		h := gitstore.NewHash(testenv.Git(t, dir, "rev-parse", fmt.Sprintf("HEAD~%d", i)))
		if _, err := r.Commit(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if n := openPacks(t, dir); n != 1 {
		t.Errorf("%d descriptors of the pack open after 40 reads, want 1", n)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openPacks(t, dir); n != 0 {
		t.Errorf("%d packfiles open after Close, want none", n)
	}
	head := gitstore.NewHash(testenv.Git(t, dir, "rev-parse", "HEAD"))
	if _, err := r.Commit(ctx, head); err != nil {
		t.Fatalf("read after Close: %v", err)
	}
	_ = r.Close()
}
