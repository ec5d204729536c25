package mcp

import (
	"context"
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

// TestBlameCodeReceiptAndPullRequest: over MCP, lines committed by the Claude sample session (its receipt
// names the commit) are proven and the cited event opens with show_event; a forged cursor is
// invalid_cursor; a pull request is not_found until its head ref refs/pull/N/head is fetched, then its
// commits are attributed, paged like the other targets.
func TestBlameCodeReceiptAndPullRequest(t *testing.T) {
	ctx := context.Background()
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte("def hello():\n    return 'Hello, World!'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "hello.py")
	git(t, dir, "commit", "-q", "-m", "Add hello function")
	hello := git(t, dir, "rev-parse", "HEAD")

	text, err := os.ReadFile(filepath.Join(corpusDir(t), "claude-code", "claude-code-transcripts", "sample_session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tr := strings.ReplaceAll(strings.ReplaceAll(string(text), "abc1234", hello[:7]), "/project", dir)
	roots := t.TempDir()
	if err := os.MkdirAll(filepath.Join(roots, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(roots, "proj", "sample.jsonl"), []byte(tr), 0o644); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(t.TempDir(), "index")
	ix, err := history.Open(ctx, hist)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := history.Discover(ctx, history.ClaudeCode, roots, true)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Import(ctx, srcs); err != nil || st.Failed != 0 {
		t.Fatalf("import: %+v %v", st, err)
	}
	ix.Close()
	s := serve(t, st, Options{HistoryDir: hist}, "")

	res := structured(t, "blame file", s.call(t, "blame", map[string]any{"file": "hello.py"}))
	c := obj(list(res, "commits")[0])
	ev := obj(list(c, "evidence")[0])
	if res["outcome"] != "proven" || c["commit"] != hello || ev["kind"] != "receipt" ||
		ev["ctx_session_id"] != history.SessionID(history.ClaudeCode, "sample") {
		t.Fatalf("blame file = %v", res)
	}
	shown := structured(t, "show_event", s.call(t, "show_event", map[string]any{"ctx_event_id": ev["ctx_event_id"], "window": 2}))
	if !strings.Contains(fmt.Sprint(shown), hello[:7]) {
		t.Errorf("show_event of the cited receipt = %v", shown)
	}

	// A forged cursor.
	for _, bad := range []string{"not-a-cursor", "eyJ0b29sIjoiYmxhbWUifQ", strings.Repeat("A", 64)} {
		if code := errorCode(t, "forged", s.call(t, "blame", map[string]any{"file": "hello.py", "cursor": bad})); code != "invalid_cursor" {
			t.Errorf("forged cursor %q: %s", bad, code)
		}
	}

	// A pull request of 10 commits, the first noted by the hook.
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "init", "-q", "--bare", remote)
	git(t, dir, "checkout", "-q", "-b", "feature")
	var first string
	for i := 1; i <= 10; i++ {
		if err := os.WriteFile(filepath.Join(dir, "pr.go"), []byte(fmt.Sprintf("package pr // %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", "pr.go")
		git(t, dir, "commit", "-q", "-m", fmt.Sprintf("pr %d", i))
		if i == 1 {
			first = git(t, dir, "rev-parse", "HEAD")
		}
	}
	git(t, dir, "notes", "--ref=refs/notes/ctx", "add", "-m", blame.NoteText(blame.NoteRecord{Agent: "codex", Session: "pr-thread", Env: "CODEX_THREAD_ID"}), first)
	git(t, dir, "push", "-q", remote, "feature:refs/pull/12/head")
	git(t, dir, "checkout", "-q", "main")
	if code := errorCode(t, "pr without ref", s.call(t, "blame", map[string]any{"pull_request": 12})); code != "not_found" {
		t.Errorf("pull request without its head ref: %s", code)
	}
	if code := errorCode(t, "pr -1", s.call(t, "blame", map[string]any{"pull_request": -1})); code != "invalid_request" {
		t.Errorf("pull request -1: %s", code)
	}
	git(t, dir, "fetch", "-q", remote, "pull/12/head:refs/pull/12/head")
	res = structured(t, "blame pr", s.call(t, "blame", map[string]any{"pull_request": 12}))
	pg := obj(res["pagination"])
	if res["target"] != "pull_request" || res["outcome"] != "proven" || len(list(res, "commits")) != 8 || pg["has_more"] != true ||
		obj(res["coverage"])["proven"] != float64(1) || obj(res["coverage"])["none"] != float64(9) ||
		obj(list(res, "commits")[0])["commit"] != first {
		t.Fatalf("blame pr = %v", res)
	}
	res = structured(t, "blame pr 2", s.call(t, "blame", map[string]any{"pull_request": 12, "cursor": pg["next_cursor"]}))
	if len(list(res, "commits")) != 2 || obj(res["pagination"])["has_more"] != false {
		t.Errorf("second page = %v", res)
	}
	// pagination.limit is the request's; a page still holds at most 8 commits.
	res = structured(t, "blame pr limit 9", s.call(t, "blame", map[string]any{"pull_request": 12, "limit": 9}))
	if pg := obj(res["pagination"]); pg["limit"] != float64(9) || pg["returned"] != float64(8) || len(list(res, "commits")) != 8 {
		t.Errorf("limit 9: pagination %v", pg)
	}
	// A cursor that is not printable ASCII is an argument error, as on the other paged tools.
	if code := errorCode(t, "non-ASCII cursor", s.call(t, "blame", map[string]any{"pull_request": 12, "cursor": "curs\u00e9"})); code != "invalid_request" {
		t.Errorf("non-ASCII cursor: %s", code)
	}
	if code := errorCode(t, "pr cursor on file", s.call(t, "blame", map[string]any{"file": "hello.py", "cursor": pg["next_cursor"]})); code != "cursor_mismatch" {
		t.Errorf("a pull request's cursor for a file: %s", code)
	}
}
