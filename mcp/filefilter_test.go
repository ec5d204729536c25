package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
)

// The file filter of search and query_events (docs/mcp.md "search"): a relative path is taken from the
// repository's top level, and both the filter and the paths the transcripts recorded are cleaned, so
// "pkg/a.go", "./pkg/../pkg/a.go" and the absolute path match a touch recorded as "<repo>/./src/../pkg/a.go"
// or as "./pkg//a.go" from the session's directory (before: none of the relative forms matched, and the
// uncleaned recorded paths matched nothing but themselves).
func TestFileFilterCleansBothSides(t *testing.T) {
	s, dir := smallHistoryServer(t)

	count := func(tool, file string) int {
		t.Helper()
		args := map[string]any{"file": file}
		key := "events"
		if tool == "search" {
			args["query"], args["providers"], key = "zanzibar", []any{"claude-code"}, "results"
		}
		res := structured(t, tool+" "+file, s.call(t, tool, args))
		return len(list(res, key))
	}
	for _, c := range []struct {
		file string
		want int
	}{
		{"pkg/a.go", 1}, {"./pkg/../pkg/a.go", 1}, {dir + "/pkg/a.go", 1}, {dir + "//pkg/./a.go", 1},
		{"pkg/b.go", 1}, {"pkg/", 2}, {"./pkg/", 2}, {"src/../pkg/", 2}, {"src/", 0}, {"pkg/c.go", 0},
		{"../" + filepath.Base(dir) + "/pkg/a.go", 1},
	} {
		if got := count("query_events", c.file); got != c.want {
			t.Errorf("query_events file %q: %d events, want %d", c.file, got, c.want)
		}
	}
	// search: the hits of the matching events.
	for _, c := range []struct {
		file string
		want int
	}{{"pkg/a.go", 1}, {"./pkg/b.go", 1}, {"pkg/", 2}, {"src/", 0}} {
		if got := count("search", c.file); got != c.want {
			t.Errorf("search file %q: %d results, want %d", c.file, got, c.want)
		}
	}
}

// smallHistoryServer is a server over a repository and an index of one Claude Code session in it that
// edits <repo>/./src/../pkg/a.go and writes ./pkg//b.go (paths as an agent may record them).
func smallHistoryServer(t *testing.T) (*session, string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	hist, extra := filepath.Join(t.TempDir(), "history"), t.TempDir()
	tr := `{"type":"user","uuid":"u1","timestamp":"2026-02-01T10:00:00Z","cwd":"` + dir + `","message":{"role":"user","content":"fix the zanzibar parser"}}
{"type":"assistant","uuid":"a1","timestamp":"2026-02-01T10:00:05Z","cwd":"` + dir + `","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"` + dir + `/./src/../pkg/a.go","old_string":"x","new_string":"zanzibar"}}]}}
{"type":"assistant","uuid":"a2","timestamp":"2026-02-01T10:00:06Z","cwd":"` + dir + `","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"./pkg//b.go","content":"zanzibar"}}]}}
`
	proj := filepath.Join(extra, "-w-app")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "s.jsonl"), []byte(tr), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ix, err := history.Open(ctx, hist)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := history.Discover(ctx, history.ClaudeCode, extra, true)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("discover: %v %v", srcs, err)
	}
	if _, err := ix.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	return serve(t, st, Options{HistoryDir: hist}, ""), dir
}

// show_event with an id of no ctx id's form ("--------"; ctx event ids are UUIDs or their 8-hex-digit
// prefixes) is invalid_request, not not_found (before: not_found); a well-formed id the index lacks is
// not_found; show_session falls back to the provider's ids, so an unknown one is not_found.
func TestShowEventMalformedID(t *testing.T) {
	s, _ := smallHistoryServer(t)
	for _, id := range []string{"--------", "zzzzzzzz", "0123456", "01234567-89ab-cdef-0123-456789abcdef0", "0123456789ab"} {
		if code := errorCode(t, "show_event "+id, s.call(t, "show_event", map[string]any{"ctx_event_id": id})); code != "invalid_request" {
			t.Errorf("show_event %q: %s, want invalid_request", id, code)
		}
	}
	for _, id := range []string{"00000000-0000-8000-8000-000000000000", "00000000", "00000000-00"} {
		if code := errorCode(t, "show_event "+id, s.call(t, "show_event", map[string]any{"ctx_event_id": id})); code != "not_found" {
			t.Errorf("show_event %q: %s, want not_found", id, code)
		}
	}
	if code := errorCode(t, "show_session", s.call(t, "show_session", map[string]any{"ctx_session_id": "--------"})); code != "not_found" {
		t.Errorf("show_session --------: %s, want not_found", code)
	}
	// A real event's id and its 8-digit prefix still open it.
	res := structured(t, "query_events", s.call(t, "query_events", nil))
	id := obj(list(res, "events")[0])["ctx_event_id"].(string)
	for _, x := range []string{id, id[:8], strings.ToUpper(id)} {
		if r := s.call(t, "show_event", map[string]any{"ctx_event_id": x}); r.IsError {
			t.Errorf("show_event %q: %s", x, resultText(r))
		}
	}
}
