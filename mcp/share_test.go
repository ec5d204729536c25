package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/redact/redacttest"
	"github.com/ctx-dev/ctx/store/tokens"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// shareFixture is a repository with a commit made by a Claude session (its transcript imported into an
// index of its own) that also printed a planted secret.
func shareFixture(t *testing.T) (dir string, st *store.Store, hist, sid, secret string) {
	t.Helper()
	dir, st = newRepo(t, store.Actor{Machine: "testbox"})
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "hello.py")
	git(t, dir, "commit", "-q", "-m", "Add hello")
	short := git(t, dir, "rev-parse", "--short=7", "HEAD")
	secret = redacttest.Plants()[3].Secret
	line := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return string(b) + "\n"
	}
	text := `{"type":"summary","summary":"Hello added (summary of the shared session)","leafUuid":"x"}` + "\n" +
		line(map[string]any{"type": "user", "uuid": "u1", "timestamp": "2026-11-30T10:00:00Z", "cwd": dir,
			"message": map[string]any{"role": "user", "content": "commit hello.py; the token is " + secret}}) +
		line(map[string]any{"type": "assistant", "uuid": "a1", "timestamp": "2026-11-30T10:00:05Z", "cwd": dir,
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash",
				"input": map[string]any{"command": "git commit -am 'Add hello'"}}}}}) +
		line(map[string]any{"type": "user", "uuid": "u2", "timestamp": "2026-11-30T10:00:06Z", "cwd": dir,
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1",
				"content": "[main " + short + "] Add hello\n 1 file changed"}}}})
	extra := t.TempDir()
	if err := os.MkdirAll(filepath.Join(extra, "-p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "-p", "share-me.jsonl"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	hist = filepath.Join(t.TempDir(), "history")
	reimport(t, hist, extra)
	return dir, st, hist, history.SessionID(history.ClaudeCode, "share-me"), secret
}

// TestShareSession: share_session's dry run returns the redacted record and commits nothing; the share
// commits it with the receipt resolved to the full commit id; an unknown session is not_found, an argument
// that is no id invalid_request.
func TestShareSession(t *testing.T) {
	dir, st, hist, sid, secret := shareFixture(t)
	s := serve(t, st, Options{HistoryDir: hist}, "")
	before := refsOf(t, dir)
	res := structured(t, "dry run", s.call(t, "share_session", map[string]any{"ctx_session_id": sid[:8], "dry_run": true}))
	rec := strings.Join(func() []string {
		var out []string
		for _, l := range list(res, "record") {
			out = append(out, l.(string))
		}
		return out
	}(), "\n")
	if res["dry_run"] != true || res["added"] != float64(5) || !strings.Contains(rec, "[REDACTED:github-pat]") || strings.Contains(rec, secret) {
		t.Fatalf("dry run: %v", res)
	}
	if refsOf(t, dir) != before {
		t.Fatalf("the dry run committed")
	}
	// Summaries only: by argument, or by the repository's history.share.
	res = structured(t, "summary only", s.call(t, "share_session", map[string]any{"ctx_session_id": sid, "dry_run": true, "summary_only": true}))
	if res["events"] != float64(1) || res["summary_only"] != true || len(list(res, "record")) != 2 ||
		!strings.Contains(list(res, "record")[1].(string), "summary of the shared session") {
		t.Errorf("summary only: %v", res)
	}
	// `ctx config history.share summaries` in another process while the server runs.
	other, err := store.Open(context.Background(), dir, store.Actor{Agent: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := other.Config()
	cfg.HistoryShare = "summaries"
	if err := other.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if res := structured(t, "config summaries", s.call(t, "share_session", map[string]any{"ctx_session_id": sid, "dry_run": true})); res["events"] != float64(1) || res["summary_only"] != true {
		t.Errorf("history.share = summaries: %v", res)
	}
	cfg.HistoryShare = ""
	if err := other.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	res = structured(t, "share", s.call(t, "share_session", map[string]any{"ctx_session_id": sid}))
	head := git(t, dir, "rev-parse", "HEAD")
	path, _ := res["path"].(string)
	onBranch := git(t, dir, "show", "refs/heads/ctx:"+path)
	if res["commit"] == "" || res["resolved_commits"] != float64(1) || !strings.Contains(onBranch, `"value":"`+head+`"`) ||
		strings.Contains(onBranch, secret) || res["record"] != nil {
		t.Fatalf("share: %v\n%s", res, onBranch)
	}
	if msg := git(t, dir, "log", "-1", "--format=%B", "refs/heads/ctx"); !strings.Contains(msg, "Ctx-Op: transcript.share") {
		t.Errorf("commit message: %s", msg)
	}
	for _, tc := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"ctx_session_id": "deadbeefdeadbeef"}, "not_found"},
		{map[string]any{"ctx_session_id": "../../etc/passwd"}, "invalid_request"},
		{map[string]any{"ctx_session_id": sid, "extra": true}, "invalid_request"},
	} {
		if code := errorCode(t, "share_session", s.call(t, "share_session", tc.args)); code != tc.code {
			t.Errorf("%v: %s, want %s", tc.args, code, tc.code)
		}
	}
}

// TestShareSessionNotOverHTTP: a token holder over HTTP can neither see (read-only token) nor run
// (read-write token) share_session: it publishes the serving machine's agent history.
func TestShareSessionNotOverHTTP(t *testing.T) {
	dir, st, hist, sid, _ := shareFixture(t)
	h := startHTTP(t, st, Options{HistoryDir: hist}, HTTPOptions{})
	ro := h.connect(t, h.token(t, tokens.Spec{Member: "Carol", ReadOnly: true}), "", "x")
	rw := h.connect(t, h.token(t, tokens.Spec{Member: "Dave", Email: "dave@example.com"}), "", "x")
	before := refsOf(t, dir)
	tl, err := ro.c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tl.Tools {
		if tool.Name == "share_session" {
			t.Errorf("a read-only token sees share_session")
		}
	}
	for _, s := range []*session{ro, rw} {
		if res, err := s.callErr("share_session", map[string]any{"ctx_session_id": sid}); err == nil && (res == nil || !res.IsError) {
			t.Errorf("share_session over HTTP answered: %s", resultText(res))
		}
	}
	if refsOf(t, dir) != before {
		t.Errorf("share_session over HTTP committed")
	}
}
