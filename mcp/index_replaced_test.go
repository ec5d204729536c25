package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
)

// writeTranscript writes a Claude Code transcript of one user message per text under
// root/-w/<name>.jsonl.
func writeTranscript(t *testing.T, root, name string, texts ...string) {
	t.Helper()
	var b []byte
	for i, txt := range texts {
		b = append(b, mustJSON(map[string]any{"type": "user", "uuid": name + itoa(i), "timestamp": "2026-02-01T10:00:0" + itoa(i) + "Z",
			"cwd": "/w", "message": map[string]any{"role": "user", "content": txt}})...)
		b = append(b, '\n')
	}
	if err := os.MkdirAll(filepath.Join(root, "-w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "-w", name+".jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAgentHistoryIndexReplaced: an index removed and rebuilt by `ctx history import` while a server runs
// (what the import does with a damaged index) is the one the server reads from its next call on: search,
// status and show_session answer from the new index, never from the deleted file; and a cursor issued
// over the old index is cursor_stale, on that server and on a new one (a rebuilt index does not start its
// generations again).
func TestAgentHistoryIndexReplaced(t *testing.T) {
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	hist := filepath.Join(t.TempDir(), "history")
	oldRoot, newRoot := t.TempDir(), t.TempDir()
	writeTranscript(t, oldRoot, "old", "the ocelot word", "a second", "a third")
	reimport(t, hist, oldRoot)
	s := serve(t, st, Options{HistoryDir: hist}, "")

	hits := func(s *session, q string) int {
		t.Helper()
		return len(list(structured(t, "search "+q, s.call(t, "search", map[string]any{"query": q})), "results"))
	}
	if hits(s, "ocelot") != 1 {
		t.Fatal("the old index: no hit")
	}
	qe := structured(t, "query_events", s.call(t, "query_events", map[string]any{"limit": 1, "content": "none"}))
	cursor := qe["next_cursor"]
	if cursor == nil {
		t.Fatalf("query_events page 1: %v", qe)
	}

	if err := os.RemoveAll(hist); err != nil {
		t.Fatal(err)
	}
	writeTranscript(t, newRoot, "new", "the lynx word", "a second", "a third", "a fourth")
	reimport(t, hist, newRoot)

	if n := hits(s, "ocelot"); n != 0 {
		t.Errorf("after the rebuild the server still finds %d hits of the deleted index", n)
	}
	if n := hits(s, "lynx"); n != 1 {
		t.Errorf("after the rebuild the server finds %d hits of the new index, want 1", n)
	}
	h := obj(structured(t, "status", s.call(t, "status", nil))["history"])
	if h["sessions"] != float64(1) || h["events"] != float64(4) {
		t.Errorf("status after the rebuild: %v, want 1 session of 4 events", h)
	}
	if code := errorCode(t, "show_session of a deleted session", s.call(t, "show_session",
		map[string]any{"ctx_session_id": history.SessionID(history.ClaudeCode, "old")})); code != codeNotFound {
		t.Errorf("show_session of the old index's session: %s, want not_found", code)
	}
	res := structured(t, "show_session", s.call(t, "show_session", map[string]any{"ctx_session_id": history.SessionID(history.ClaudeCode, "new")}))
	if len(list(res, "events")) != 4 {
		t.Errorf("show_session of the new index's session: %v", res)
	}
	args := map[string]any{"limit": 1, "content": "none", "cursor": cursor}
	if code := errorCode(t, "old cursor, same server", s.call(t, "query_events", args)); code != codeCursorStale {
		t.Errorf("a cursor of the removed index on the same server: %s, want cursor_stale", code)
	}
	fresh := serve(t, st, Options{HistoryDir: hist}, "")
	if code := errorCode(t, "old cursor, new server", fresh.call(t, "query_events", args)); code != codeCursorStale {
		t.Errorf("a cursor of the removed index on a new server: %s, want cursor_stale", code)
	}
	// The index removed and not rebuilt: no index, as for a server started without one.
	if err := os.RemoveAll(hist); err != nil {
		t.Fatal(err)
	}
	if n := hits(s, "lynx"); n != 0 {
		t.Errorf("with the index removed the server finds %d hits", n)
	}
}

// indexGeneration is the generation of the index in dir, as JSON decodes it (a float64).
func indexGeneration(t *testing.T, dir string) float64 {
	t.Helper()
	st := history.Inspect(context.Background(), dir)
	if st.Err != nil || st.Generation < 1 {
		t.Fatalf("the index in %s: generation %d, %v", dir, st.Generation, st.Err)
	}
	return float64(st.Generation)
}
