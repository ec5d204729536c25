package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestCommittedWriteIsNotAnError: a write tool whose commit landed but whose refresh of .context/ failed
// returns success (never -32603, which makes agents retry and record the decision twice), with the
// warning in the result, and the commit it made.
func TestCommittedWriteIsNotAnError(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	s := serve(t, st, Options{Agent: "claude-code", Version: "test"}, "")
	rec := filepath.Join(dir, store.CheckoutDir, store.RecordFile)
	os.Remove(rec)
	if err := os.MkdirAll(filepath.Join(rec, "x"), 0o777); err != nil {
		t.Fatal(err)
	}
	before := atoi(git(t, dir, "rev-list", "--count", "ctx"))
	res, err := s.callErr("context_record_decision", map[string]any{"title": "Use Go", "context": "c", "decision": "d", "consequences": "q"})
	if err != nil {
		t.Fatalf("a committed write is a JSON-RPC error: %v", err)
	}
	out := structured(t, "context_record_decision", res)
	ws, _ := out["warnings"].([]any)
	if len(ws) != 1 || !strings.Contains(fmt.Sprint(ws[0]), "committed, but refreshing .context failed") {
		t.Errorf("warnings = %v", out["warnings"])
	}
	if !strings.Contains(resultText(res), `"warnings":["committed, but refreshing`) {
		t.Errorf("no warning in the text content: %q", resultText(res))
	}
	if out["commit"] != git(t, dir, "rev-parse", "ctx") {
		t.Errorf("commit %v, tip %s", out["commit"], git(t, dir, "rev-parse", "ctx"))
	}
	res, err = s.callErr("context_update_decision_status", map[string]any{"id": float64(1), "status": "accepted"})
	if err != nil || res.IsError {
		t.Fatalf("update status: %v %s", err, resultText(res))
	}
	if got := atoi(git(t, dir, "rev-list", "--count", "ctx")) - before; got != 2 {
		t.Errorf("%d commits, want 2", got)
	}
}

// TestDecisionToolsReturnTheirOwnCommit: with another process writing to the branch at the same time, the
// commit context_record_decision and context_update_decision_status return is the one that wrote that
// decision, not whatever the tip is by the time the tool answers.
func TestDecisionToolsReturnTheirOwnCommit(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	s := serve(t, st, Options{Agent: "claude-code", Version: "test"}, "")
	other, err := store.Open(context.Background(), dir, store.Actor{Agent: "other"})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // another writer, as a second agent or the CLI would be
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = other.SetEntry(context.Background(), store.KnowledgeKind, store.SetEntry{Key: fmt.Sprintf("k%d", i%5), Content: fmt.Sprint(i)}) // a lost race is fine: it only moves the ref
		}
	}()
	const n = 25
	for i := 1; i <= n; i++ {
		out := structured(t, "context_record_decision", s.call(t, "context_record_decision", map[string]any{
			"title": fmt.Sprintf("Decision %d", i), "context": "c", "decision": "d", "consequences": "q"}))
		if msg := git(t, dir, "log", "-1", "--format=%s", out["commit"].(string)); msg != fmt.Sprintf("ctx: add decision Decision %d", i) {
			t.Errorf("record %d returned a commit that is not its own: %q", i, msg)
		}
		out = structured(t, "context_update_decision_status", s.call(t, "context_update_decision_status", map[string]any{
			"id": float64(i), "status": "accepted"}))
		if msg := git(t, dir, "log", "-1", "--format=%s", out["commit"].(string)); !strings.HasPrefix(msg, fmt.Sprintf("ctx: set decision %d status", i)) {
			t.Errorf("status %d returned a commit that is not its own: %q", i, msg)
		}
	}
	close(stop)
	wg.Wait()
}
