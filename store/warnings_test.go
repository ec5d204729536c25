package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// breakRefresh makes every refresh of .context/ fail: its checkout record is a folder.
func breakRefresh(t *testing.T, dir string) {
	t.Helper()
	rec := filepath.Join(dir, store.CheckoutDir, store.RecordFile)
	if err := os.Remove(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(rec, "x"), 0o777); err != nil {
		t.Fatal(err)
	}
}

// TestCommittedWriteWarnsOnRefreshFailure: a write that committed but could not refresh .context/ is a
// success with a warning (in the result and the context's collector), never an error that makes callers
// retry it; the decision writes return their own commit.
func TestCommittedWriteWarnsOnRefreshFailure(t *testing.T) {
	s, dir := storetest.New(t)
	breakRefresh(t, dir)
	before := storetest.Count(t, dir, "refs/heads/ctx")
	ctx, w := store.WithWarnings(bg)
	c, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "v"})
	if err != nil {
		t.Fatalf("a committed write returned an error: %v", err)
	}
	if !c.Changed() || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "committed, but refreshing .context failed") {
		t.Fatalf("result = %+v", c)
	}
	if got := w.List(); len(got) != 1 || got[0] != c.Warnings[0] {
		t.Errorf("collector = %q", got)
	}
	d, dc, err := s.AddDecision(ctx, store.NewDecision{Title: "Use Go", Context: "c", Decision: "d", Consequences: "q"})
	if err != nil {
		t.Fatalf("AddDecision: %v", err)
	}
	if tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"); dc.Commits[store.Public].String() != tip {
		t.Errorf("decision commit %s, tip %s", dc.Commits[store.Public], tip)
	}
	if _, sc, err := s.SetDecisionStatus(ctx, "1", "accepted", 0); err != nil || !sc.Changed() {
		t.Fatalf("SetDecisionStatus: %v %+v", err, sc)
	} else if msg := storetest.LastMessage(t, dir, "refs/heads/ctx"); !strings.Contains(msg, "decision.status") {
		t.Errorf("last commit: %s", msg)
	}
	if got := storetest.Count(t, dir, "refs/heads/ctx") - before; got != 3 {
		t.Errorf("%d commits, want 3 (one per write, none repeated)", got)
	}
	if d.ID != 1 || len(w.List()) != 3 {
		t.Errorf("decision %+v, warnings %q", d, w.List())
	}
}
