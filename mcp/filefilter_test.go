package mcp

import (
	"context"
	"os"
	"path/filepath"
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
	s := serve(t, st, Options{HistoryDir: hist}, "")

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
