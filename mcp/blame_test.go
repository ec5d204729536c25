package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/blame"
	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
)

// TestBlameCode: blame on a file of the user's repository (10 lines from 10 commits, two of them noted by
// ctx's post-commit hook) pages commits by at most 8 with a cursor bound to the arguments and HEAD; a
// commit target is proven from its note; bad targets are invalid_request.
func TestBlameCode(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	var text strings.Builder
	var commits []string
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&text, "line %d of the engine\n", i)
		if err := os.WriteFile(filepath.Join(dir, "engine.go"), []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", "engine.go")
		git(t, dir, "commit", "-q", "-m", fmt.Sprintf("line %d", i))
		commits = append(commits, git(t, dir, "rev-parse", "HEAD"))
	}
	for _, i := range []int{2, 9} {
		rec := blame.NoteRecord{Agent: "codex", Session: fmt.Sprintf("thread-%d", i), Env: "CODEX_THREAD_ID"}
		git(t, dir, "notes", "--ref=refs/notes/ctx", "add", "-m", blame.NoteText(rec), commits[i-1])
	}
	s := serve(t, st, Options{}, "")

	var seen []string
	proven := 0
	var cursor any
	for page := 0; page < 3; page++ {
		args := map[string]any{"file": "engine.go"}
		if cursor != nil {
			args["cursor"] = cursor
		}
		res := structured(t, "blame file", s.call(t, "blame", args))
		if res["target"] != "file" || obj(res["coverage"])["lines"] != float64(10) || obj(res["coverage"])["proven"] != float64(2) ||
			len(list(res, "ranges")) != 10 || !strings.Contains(res["provenance"].(string), "untrusted") {
			t.Fatalf("blame file = %v", res)
		}
		for _, c := range list(res, "commits") {
			seen = append(seen, obj(c)["commit"].(string))
			if obj(c)["outcome"] == "proven" {
				proven++
			}
		}
		pg := obj(res["pagination"])
		if page == 0 && (len(list(res, "commits")) != 8 || pg["has_more"] != true) {
			t.Fatalf("first page: %v", pg)
		}
		if pg["has_more"] != true {
			break
		}
		cursor = pg["next_cursor"]
	}
	if len(seen) != 10 || proven != 2 {
		t.Errorf("commits %d, proven %d", len(seen), proven)
	}

	res := structured(t, "blame commit", s.call(t, "blame", map[string]any{"commit": commits[8][:10]}))
	if res["outcome"] != "proven" || res["commit"] != commits[8] ||
		obj(list(res, "evidence")[0])["ctx_session_id"] != history.SessionID(history.Codex, "thread-9") {
		t.Errorf("blame commit = %v", res)
	}
	res = structured(t, "blame lines", s.call(t, "blame", map[string]any{"file": "engine.go", "start_line": 3, "end_line": 4}))
	if obj(res["coverage"])["none"] != float64(2) || res["outcome"] != "none" {
		t.Errorf("blame lines = %v", res)
	}

	// The cursor is bound to the arguments and to HEAD.
	first := structured(t, "blame file", s.call(t, "blame", map[string]any{"file": "engine.go"}))
	cur := obj(first["pagination"])["next_cursor"]
	if code := errorCode(t, "other args", s.call(t, "blame", map[string]any{"file": "engine.go", "start_line": 2, "cursor": cur})); code != "cursor_mismatch" {
		t.Errorf("cursor with other arguments: %s", code)
	}
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "moves HEAD")
	if code := errorCode(t, "moved", s.call(t, "blame", map[string]any{"file": "engine.go", "cursor": cur})); code != "cursor_stale" {
		t.Errorf("cursor after HEAD moved: %s", code)
	}

	for _, args := range []map[string]any{
		{"file": "../outside.go"}, {"file": "/etc/passwd"}, {"file": "missing.go"}, {"file": "engine.go", "start_line": 5, "end_line": 2},
		{"file": "engine.go", "start_line": 50}, {"commit": "nope"}, {"commit": "--output=/tmp/x"}, {"path": "knowledge/x.md", "file": "engine.go"},
		{"commit": "HEAD", "start_line": 2},
	} {
		if code := errorCode(t, fmt.Sprint(args), s.call(t, "blame", args)); code != "invalid_request" {
			t.Errorf("%v: %s", args, code)
		}
	}
}
