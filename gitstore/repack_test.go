package gitstore_test

import (
	"context"
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
