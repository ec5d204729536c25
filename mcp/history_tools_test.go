package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// writer opens a second store on dir as another agent (another process writing the context branch).
func writer(t *testing.T, dir, agent, session string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dir, store.Actor{Agent: agent, Session: session, Machine: "testbox"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func setEntry(t *testing.T, st *store.Store, k store.Kind, key, content string) string {
	t.Helper()
	c, err := st.SetEntry(context.Background(), k, store.SetEntry{Key: key, Content: content})
	if err != nil {
		t.Fatalf("SetEntry %s: %v", key, err)
	}
	return firstCommit(c)
}

// errorCode checks that a result is a typed tool error and returns its error_code.
func errorCode(t *testing.T, what string, res *mcpgo.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: no tool error: %s", what, resultText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["error_code"] == nil || m["message"] == nil {
		t.Fatalf("%s: structuredContent %s is not {error_code, message}", what, b)
	}
	return m["error_code"].(string)
}

func list(m map[string]any, key string) []any {
	v, _ := m[key].([]any)
	return v
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func TestHistoryToolsHappyPath(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	ctx := context.Background()
	a := writer(t, dir, "claude-code", "sess-1")
	b := writer(t, dir, "codex", "sess-2")
	setEntry(t, a, store.KnowledgeKind, "arch", "# Architecture\nline one\nline two\nline three\n")
	if _, _, err := a.AppendSession(ctx, store.SessionUpdate{ID: "sess-1", Summary: "wired the NATS bus"}); err != nil {
		t.Fatal(err)
	}
	codexCommit := setEntry(t, b, store.KnowledgeKind, "arch", "# Architecture\nline one\nline TWO by codex\nline three\nline four\n")
	setEntry(t, b, store.ConventionKind, "naming", "Subjects of NATS are snake_case.\n")
	if _, _, err := a.AddDecision(ctx, store.NewDecision{Title: "Use NATS", Context: "We need a bus.", Decision: "NATS."}); err != nil {
		t.Fatal(err)
	}
	tip := git(t, dir, "rev-parse", "refs/heads/ctx")
	s := serve(t, st, Options{}, "")

	res := structured(t, "status", s.call(t, "status", nil))
	if res["read_only"] != true || res["branch"] != "ctx" || res["tip"] != tip || obj(res["counts"])["knowledge"] != float64(1) {
		t.Errorf("status = %v", res)
	}

	res = structured(t, "sources", s.call(t, "sources", nil))
	srcs := list(res, "sources")
	ctxSrc := obj(srcs[len(srcs)-1])
	refs := list(ctxSrc, "refs")
	if len(srcs) != 7 || ctxSrc["provider"] != "ctx" || len(refs) != 4 || obj(refs[0])["kind"] != "branch" || obj(refs[0])["tip"] != tip ||
		obj(refs[1])["kind"] != "private" || obj(refs[1])["tip"] != nil ||
		obj(refs[3])["kind"] != "remote_tracking" || obj(refs[3])["ref"] != "refs/remotes/origin/ctx" ||
		res["automatic_discovery"] != true || obj(res["index"])["exists"] != false {
		t.Errorf("sources = %v", res)
	}

	// Without an agent history index, search serves the context store (provider ctx) with a hint.
	res = structured(t, "search", s.call(t, "search", map[string]any{"query": "NATS"}))
	hits := list(res, "results")
	kinds := map[string]int{}
	for _, h := range hits {
		kinds[fmt.Sprint(obj(h)["kind"])]++
		if obj(h)["provider"] != "ctx" {
			t.Errorf("hit of provider %v", obj(h)["provider"])
		}
	}
	for _, h := range hits {
		if obj(h)["kind"] == "session" && obj(h)["ctx_session_id"] != "ctx:sess-1" {
			t.Errorf("session hit = %v", h)
		}
		// Every at of the history tools has milliseconds, a commit's too ("...:43Z").
		if at, ok := obj(h)["at"].(string); ok {
			if p, err := time.Parse(atFormat, at); err != nil || p.Format(atFormat) != at || !strings.HasSuffix(at, "Z") {
				t.Errorf("%v hit: at %q is not RFC 3339 UTC with milliseconds", obj(h)["kind"], at)
			}
		} else if obj(h)["kind"] == "commit" {
			t.Errorf("commit hit without at: %v", h)
		}
	}
	if kinds["decision"] != 1 || kinds["convention"] != 1 || kinds["session"] != 1 || kinds["commit"] < 1 ||
		!strings.Contains(fmt.Sprint(res["hint"]), "ctx history import") || obj(res["filters"])["content_scope"] != "all" {
		t.Errorf("search NATS = %v", res)
	}
	res = structured(t, "search snake", s.call(t, "search", map[string]any{"query": "nats snake", "content_scope": "transcript"}))
	if hits := list(res, "results"); len(hits) != 1 || obj(hits[0])["key"] != "naming" || obj(hits[0])["uri"] != "context://conventions/naming" {
		t.Errorf("search nats snake = %v", res)
	}
	res = structured(t, "search calls", s.call(t, "search", map[string]any{"query": "nats", "content_scope": "calls"}))
	if hits := list(res, "results"); len(hits) != 0 {
		t.Errorf("search calls over the context store = %v", res)
	}
	res = structured(t, "search page", s.call(t, "search", map[string]any{"query": "nats", "limit": 2}))
	pg := obj(res["pagination"])
	if pg["has_more"] != true || pg["returned"] != float64(2) {
		t.Fatalf("search page 1 = %v", res)
	}
	n := 2
	for pg["has_more"] == true {
		res = structured(t, "search page 2", s.call(t, "search", map[string]any{"query": "nats", "limit": 2, "cursor": pg["next_cursor"]}))
		pg = obj(res["pagination"])
		n += len(list(res, "results"))
	}
	if n != len(hits) {
		t.Errorf("search paged %d results, want %d", n, len(hits))
	}

	res = structured(t, "show_event", s.call(t, "show_event", map[string]any{"ctx_event_id": "ctx:" + codexCommit[:8], "before": 1, "after": 5}))
	ev := obj(res["event"])
	files := list(ev, "files")
	if ev["commit"] != codexCommit || ev["agent"] != "codex" || len(files) != 1 ||
		obj(files[0])["change"] != "modified" || !strings.Contains(obj(files[0])["diff"].(string), "+line TWO by codex\n") ||
		len(list(res, "before")) != 1 || obj(list(res, "before")[0])["key"] != "sess-1" || len(list(res, "after")) != 2 ||
		obj(list(res, "after")[1])["op"] != "decision.add" {
		t.Errorf("show_event = %v", res)
	}
	// Commits carry teammates' text: the result is labelled quoted history, with the commit's session
	// record (none kept for sess-2; sess-1's below).
	if sess, ok := res["session"]; !ok || sess != nil || !strings.HasPrefix(fmt.Sprint(res["content"]), "quoted history") {
		t.Errorf("show_event session/content = %v / %v", res["session"], res["content"])
	}
	res = structured(t, "show_event sess-1", s.call(t, "show_event", map[string]any{"ctx_event_id": "ctx:" + fmt.Sprint(obj(list(res, "before")[0])["commit"])}))
	if obj(res["session"])["summary"] != "wired the NATS bus" {
		t.Errorf("show_event of a sess-1 commit: session %v", res["session"])
	}

	res = structured(t, "show_session", s.call(t, "show_session", map[string]any{"ctx_session_id": "ctx:sess-1"}))
	if obj(res["session"])["summary"] != "wired the NATS bus" || len(list(res, "events")) != 3 ||
		obj(list(res, "events")[0])["op"] != "knowledge.set" || obj(res["pagination"])["has_more"] != false {
		t.Errorf("show_session = %v", res)
	}
	if gen, ok := res["generation"]; !ok || gen != float64(0) || !strings.HasPrefix(fmt.Sprint(res["content"]), "quoted history") {
		t.Errorf("show_session generation/content = %v / %v", res["generation"], res["content"])
	}
	if code := errorCode(t, "show_session unknown", s.call(t, "show_session", map[string]any{"ctx_session_id": "ctx:nope"})); code != "not_found" {
		t.Errorf("show_session unknown: %s", code)
	}

	res = structured(t, "blame", s.call(t, "blame", map[string]any{"path": "knowledge/arch.md"}))
	lines := list(res, "lines")
	// The file has front matter written by the store; find the body lines.
	agents := map[string]string{}
	for _, l := range lines {
		agents[obj(l)["text"].(string)] = fmt.Sprint(obj(l)["agent"])
	}
	want := map[string]string{"# Architecture": "claude-code", "line one": "claude-code", "line TWO by codex": "codex",
		"line three": "claude-code", "line four": "codex"}
	for text, agent := range want {
		if agents[text] != agent {
			t.Errorf("blame %q = %q, want %q (%v)", text, agents[text], agent, res)
		}
	}
	if _, ok := res["limit_reached"]; ok || res["scope"] != "public" {
		t.Errorf("blame = %v", res)
	}
	if code := errorCode(t, "blame missing", s.call(t, "blame", map[string]any{"path": "knowledge/none.md"})); code != "not_found" {
		t.Errorf("blame missing: %s", code)
	}
}

func TestHistoryPagingAndCursors(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	ctx := context.Background()
	w := writer(t, dir, "claude-code", "sess-p")
	if _, _, err := w.AppendSession(ctx, store.SessionUpdate{ID: "sess-p", Summary: "paging"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		setEntry(t, w, store.KnowledgeKind, fmt.Sprintf("k%d", i), fmt.Sprintf("fact %d\n", i))
	}
	o := writer(t, dir, "codex", "sess-q")
	setEntry(t, o, store.KnowledgeKind, "other", "other\n")
	s := serve(t, st, Options{}, "")

	// show_session: 8 events in pages of 3, oldest first.
	var got []string
	var cursor any
	for page := 0; ; page++ {
		args := map[string]any{"ctx_session_id": "ctx:sess-p", "limit": 3}
		if cursor != nil {
			args["cursor"] = cursor
		}
		res := structured(t, "show_session page", s.call(t, "show_session", args))
		pg := obj(res["pagination"])
		for _, e := range list(res, "events") {
			got = append(got, obj(e)["commit"].(string))
		}
		if pg["returned"] != float64(len(list(res, "events"))) || pg["limit"] != float64(3) {
			t.Errorf("pagination = %v", pg)
		}
		_, hasNext := pg["next_cursor"]
		if pg["has_more"] != hasNext {
			t.Errorf("next_cursor present %v, has_more %v", hasNext, pg["has_more"])
		}
		if pg["has_more"] != true {
			break
		}
		if page > 5 {
			t.Fatal("show_session does not end")
		}
		cursor = pg["next_cursor"]
	}
	if len(got) != 8 {
		t.Fatalf("show_session paged %d events, want 8", len(got))
	}

	// Cursor errors.
	res := structured(t, "first page", s.call(t, "show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "limit": 2}))
	c1 := obj(res["pagination"])["next_cursor"].(string)
	if code := errorCode(t, "other session", s.call(t, "show_session", map[string]any{"ctx_session_id": "ctx:sess-q", "cursor": c1})); code != "cursor_mismatch" {
		t.Errorf("cursor of another session: %s", code)
	}
	if code := errorCode(t, "other tool", s.call(t, "search", map[string]any{"query": "fact", "cursor": c1})); code != "cursor_mismatch" {
		t.Errorf("show_session cursor to search: %s", code)
	}
	for _, bad := range []string{"garbage!!", "eyJ0b29sIjoic2hvd19zZXNzaW9uIn0", tamperCursor(c1)} {
		if code := errorCode(t, "garbage", s.call(t, "show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "cursor": bad})); code != "invalid_cursor" {
			t.Errorf("cursor %q: %s", bad, code)
		}
	}
	// Another limit keeps the cursor valid.
	structured(t, "other limit", s.call(t, "show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "limit": 5, "cursor": c1}))
	res = structured(t, "search first page", s.call(t, "search", map[string]any{"query": "fact", "limit": 1}))
	c2 := obj(res["pagination"])["next_cursor"].(string)
	setEntry(t, o, store.KnowledgeKind, "later", "a write between pages\n")
	if code := errorCode(t, "stale", s.call(t, "show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "limit": 2, "cursor": c1})); code != "cursor_stale" {
		t.Errorf("show_session after a write: %s", code)
	}
	if code := errorCode(t, "stale", s.call(t, "search", map[string]any{"query": "fact", "limit": 1, "cursor": c2})); code != "cursor_stale" {
		t.Errorf("search after a write: %s", code)
	}

	// invalid_request for bad arguments.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"show_session", map[string]any{}},
		{"show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "limit": 0}},
		{"show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "mode": "everything"}},
		{"show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "limit": 4097}},
		{"show_session", map[string]any{"ctx_session_id": "ctx:../x"}},
		{"query_events", map[string]any{"since": "yesterday"}},
		{"query_events", map[string]any{"since": "2025-01-02T00:00:00Z", "until": "2025-01-01T00:00:00Z"}},
		{"query_events", map[string]any{"limit": 501}},
		{"query_events", map[string]any{"bogus": 1}},
		{"show_event", map[string]any{"ctx_event_id": "ctx:xyz"}},
		{"show_event", map[string]any{"ctx_event_id": "ctx:abcdef"}},
		{"show_event", map[string]any{"ctx_event_id": "ctx:abcdef0", "after": 51}},
		{"show_event", map[string]any{"ctx_event_id": "ctx:abcdef0", "after": 1, "window": 2}},
		{"search", map[string]any{"query": "   "}},
		{"search", map[string]any{"query": "x", "providers": []any{"memo"}}},
		{"search", map[string]any{"query": "x", "content_scope": "all", "event_type": "message"}},
		{"search", map[string]any{"query": "x", "source_roots": []any{"bad root!"}}},
		{"search", map[string]any{"query": "x", "source_groups": []any{"team-a"}}},
		{"search", map[string]any{"query": strings.Repeat("x", 257)}},
		{"blame", map[string]any{"path": "../etc/passwd"}},
		{"blame", map[string]any{}},
		{"show_session", map[string]any{"ctx_session_id": "ctx:sess-p", "cursor": ""}},
	} {
		if code := errorCode(t, c.tool, s.call(t, c.tool, c.args)); code != "invalid_request" {
			t.Errorf("%s %v: %s, want invalid_request", c.tool, c.args, code)
		}
	}
	if code := errorCode(t, "unknown commit", s.call(t, "show_event", map[string]any{"ctx_event_id": "ctx:abcdef0"})); code != "not_found" {
		t.Errorf("show_event unknown commit: %s", code)
	}
}

func TestShowEventOutputLimit(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	w := writer(t, dir, "claude-code", "sess-big")
	var sb strings.Builder
	for sb.Len() < 1536*1024 {
		fmt.Fprintf(&sb, "line %06d of a very large knowledge entry, padded to be long enough\n", sb.Len()/70)
	}
	big := setEntry(t, w, store.KnowledgeKind, "big", sb.String())
	small := setEntry(t, w, store.KnowledgeKind, "small", "small\n")
	s := serve(t, st, Options{}, "")

	if code := errorCode(t, "big event", s.call(t, "show_event", map[string]any{"ctx_event_id": "ctx:" + big})); code != "output_limit_exceeded" {
		t.Errorf("show_event of a 1.5 MiB entry: %s", code)
	}
	res := structured(t, "big event without diff", s.call(t, "show_event", map[string]any{"ctx_event_id": "ctx:" + big, "diff": false}))
	if files := list(obj(res["event"]), "files"); len(files) != 1 || obj(files[0])["diff"] != nil {
		t.Errorf("show_event diff:false = %v", res)
	}
	structured(t, "small event", s.call(t, "show_event", map[string]any{"ctx_event_id": "ctx:" + small, "before": 1}))

	// blame pages a file too large for one response instead of failing.
	res = structured(t, "blame big", s.call(t, "blame", map[string]any{"path": "knowledge/big.md", "limit": 10000}))
	pg := obj(res["pagination"])
	if pg["has_more"] != true || pg["returned"].(float64) >= 10000 || pg["returned"].(float64) < 1000 {
		t.Errorf("blame of a large file: pagination %v", pg)
	}
}

// TestTextFallbackEscapesTerminalControls: the text copy of a result writes the characters that would
// drive a terminal (a bidirectional override, a C1 control, DEL) as \uXXXX, as the CLI does; the JSON
// means the same and structuredContent keeps the characters.
func TestTextFallbackEscapesTerminalControls(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	w := writer(t, dir, "claude-code", "sess-b")
	setEntry(t, w, store.KnowledgeKind, "bidi", "zorblax \u202egnp.exe\u202c \u009b31m \u007f done\n")
	s := serve(t, st, Options{}, "")
	res := s.call(t, "search", map[string]any{"query": "zorblax"})
	text := resultText(res)
	if strings.ContainsAny(text, "\u202e\u202c\u009b\u007f") || !strings.Contains(text, `\u202e`) || !strings.Contains(text, `\u009b`) {
		t.Errorf("text fallback %q", text)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(text), &back); err != nil {
		t.Fatalf("text fallback is not JSON: %v", err)
	}
	sc := structured(t, "search", res)
	if fmt.Sprint(back) != fmt.Sprint(sc) || !strings.Contains(fmt.Sprint(sc), "\u202e") {
		t.Errorf("text %v\nstructured %v", back, sc)
	}
}

// tamperCursor returns c with its last two characters changed to others of the base64url alphabet, so the
// result always differs from c (a fixed replacement such as "AA" is c itself when c already ends so).
func tamperCursor(c string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := []byte(c)
	for i := len(b) - 2; i < len(b); i++ {
		b[i] = alphabet[(strings.IndexByte(alphabet, b[i])+1+len(alphabet))%len(alphabet)]
	}
	return string(b)
}
