package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
)

// TestRemoteBranchNotAStore: the remote's ctx branch is a branch of code (the project's main, pushed under
// that name): a push says so, exit 5 (ErrRejected), instead of "the next ctx sync merges both", and a pull
// refuses it as no context store, never as a store whose manifest was deleted (whose repair, ctx doctor
// --fix, cannot help here) (docs/sync.md "A remote branch that is not a context store").
func TestRemoteBranchNotAStore(t *testing.T) {
	sa, _, a, _ := pair(t)
	mustSet(t, sa, "k", "v")
	testenv.Git(t, a, "push", "-q", "--force", "origin", "main:refs/heads/ctx")
	code := testenv.Git(t, a, "rev-parse", "main")

	_, err := sa.Push(bg, store.PushOptions{})
	var ns *store.NotStoreError
	if !errors.As(err, &ns) || !errors.Is(err, store.ErrRejected) || ns.Commit.String() != code ||
		!strings.Contains(err.Error(), "is not a context store") || strings.Contains(err.Error(), "merges both") {
		t.Fatalf("push over a code branch named ctx: %v; want a NotStoreError", err)
	}
	before := testenv.Git(t, a, "rev-parse", "refs/heads/ctx")
	_, err = sa.Pull(bg, store.PullOptions{})
	var rej *store.RejectedError
	if !errors.As(err, &rej) || !rej.NotStore || rej.Manifest || strings.Contains(err.Error(), "doctor --fix") ||
		!strings.Contains(err.Error(), "it holds no manifest.json (it is not a context store)") ||
		!strings.Contains(err.Error(), "not a context store but a branch of code") {
		t.Fatalf("pull of a code branch named ctx: %v; want a refusal saying it is no context store", err)
	}
	if got := testenv.Git(t, a, "rev-parse", "refs/heads/ctx"); got != before {
		t.Errorf("a refused pull moved ctx")
	}
}
