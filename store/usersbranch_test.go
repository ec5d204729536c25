package store_test

import (
	"errors"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestUsersBranchNamedCtx: a branch of the user's code that has the context branch's name (no
// manifest.json) is never written to: a write and doctor --fix fail with ErrNotContextBranch (which is
// also ErrNotInitialized, exit 4) and the branch does not move; init --branch NAME makes the store under
// another name, where writes then go.
func TestUsersBranchNamedCtx(t *testing.T) {
	dir := storetest.Repo(t)
	testenv.Git(t, dir, "branch", store.DefaultBranch)
	before := testenv.Git(t, dir, "rev-parse", store.DefaultBranch)
	s, err := store.Open(bg, dir, store.Actor{Agent: "test-agent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Init(bg, store.InitOptions{}); err == nil {
		t.Fatal("init on the user's branch succeeded")
	}
	_, err = s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "v\n"})
	if !errors.Is(err, store.ErrNotContextBranch) || !errors.Is(err, store.ErrNotInitialized) {
		t.Fatalf("write to the user's branch: %v, want ErrNotContextBranch", err)
	}
	if _, _, err := s.RemoveProblems(bg); !errors.Is(err, store.ErrNotContextBranch) {
		t.Fatalf("doctor --fix on the user's branch: %v, want ErrNotContextBranch", err)
	}
	if _, err := s.Doctor(bg); !errors.Is(err, store.ErrNotContextBranch) {
		t.Fatalf("doctor on the user's branch: %v, want ErrNotContextBranch", err)
	}
	if after := testenv.Git(t, dir, "rev-parse", store.DefaultBranch); after != before {
		t.Fatalf("the user's branch moved: %s -> %s", before, after)
	}
	if _, err := s.Init(bg, store.InitOptions{Branch: "team-context"}); err != nil {
		t.Fatalf("init --branch team-context: %v", err)
	}
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "v\n"}); err != nil {
		t.Fatal(err)
	}
	if !storetest.Files(t, dir, "team-context")["knowledge/k.md"] || testenv.Git(t, dir, "rev-parse", store.DefaultBranch) != before {
		t.Fatal("the write did not go to the new context branch alone")
	}
}
