package mcp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
)

// corpusDir is the shared corpus of real transcripts; tests that need it skip when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	t.Skip("agent-history corpus not found (set CTX_HISTORY_CORPUS)")
	return ""
}

// mcpTranscript is a Claude Code transcript (one project, one session) whose assistant calls an MCP tool;
// the corpus has none.
const mcpTranscript = `{"type":"user","uuid":"u1","timestamp":"2026-02-01T10:00:00Z","cwd":"/w/app","message":{"role":"user","content":"open an issue about the zanzibar flag"}}
{"type":"assistant","uuid":"a1","timestamp":"2026-02-01T10:00:05Z","cwd":"/w/app","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__github__create_issue","input":{"title":"zanzibar flag"}}]}}
`

// importCorpus imports every provider's part of the corpus, and a Claude transcript with an MCP tool
// call written under extra, into a new index in dir, as `ctx history import --provider P --path DIR`
// does, and closes it.
func importCorpus(t testing.TB, dir, extra string) history.ImportStats {
	t.Helper()
	ctx := context.Background()
	corpus := corpusDir(t)
	if err := os.MkdirAll(filepath.Join(extra, "-w-app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "-w-app", "mcp-session.jsonl"), []byte(mcpTranscript), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := history.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var srcs []history.Source
	for _, p := range history.Providers {
		s, err := history.Discover(ctx, p, filepath.Join(corpus, string(p)), true)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	s, err := history.Discover(ctx, history.ClaudeCode, extra, true)
	if err != nil || len(s) != 1 {
		t.Fatalf("discover the MCP transcript: %v %v", s, err)
	}
	srcs = append(srcs, s...)
	st, err := ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Failed != 0 {
		t.Fatalf("import: %+v", st)
	}
	return st
}

// reimport imports the sources under extra again into the index in dir (a concurrent `ctx history
// import` while the server runs).
func reimport(t testing.TB, dir, extra string) {
	t.Helper()
	ctx := context.Background()
	ix, err := history.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	s, err := history.Discover(ctx, history.ClaudeCode, extra, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Import(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// corpusEnv is the index of the corpus and a server over it and a store.
type corpusEnv struct {
	s           *session
	dir         string
	st          *store.Store
	hist, extra string
}

// corpusServer is a store and a server over it and the imported corpus.
func corpusServer(t *testing.T) *corpusEnv {
	t.Helper()
	t.Setenv("HOME", t.TempDir()) // no provider root of the machine running the test
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	e := &corpusEnv{dir: dir, st: st, hist: filepath.Join(t.TempDir(), "history"), extra: t.TempDir()}
	importCorpus(t, e.hist, e.extra)
	e.s = serve(t, st, Options{HistoryDir: e.hist}, "")
	return e
}

// codexNative is a Codex session of the corpus (codex/codemie/rollout-...-019e1625-....jsonl) that runs
// apply_patch.
const codexNative = "019e1625-789d-76c0-80ab-3724b5ddb799"

func TestAgentHistorySearch(t *testing.T) {
	e := corpusServer(t)
	s := e.s
	codexID := history.SessionID(history.Codex, codexNative)

	res := structured(t, "search apply_patch", s.call(t, "search", map[string]any{"query": "apply_patch", "limit": 5}))
	hits := list(res, "results")
	h := obj(hits[0])
	if len(hits) != 5 || h["provider"] != "codex" || h["native_session_id"] != codexNative || h["ctx_session_id"] != codexID ||
		h["event_type"] != "tool_call" || h["tool"] != "apply_patch" || !strings.HasSuffix(fmt.Sprint(h["source_path"]), codexNative+".jsonl") ||
		obj(res["filters"])["content_scope"] != "all" || res["generation"] != indexGeneration(t, e.hist) || res["hint"] != nil ||
		!strings.Contains(fmt.Sprint(h["snippet"]), "apply_patch") || !strings.HasPrefix(fmt.Sprint(res["content"]), "quoted history") {
		t.Errorf("search apply_patch = %v", res)
	}
	// outputs only: every hit is a tool output, and the scope is reported.
	res = structured(t, "outputs", s.call(t, "search", map[string]any{"query": "apply_patch", "content_scope": "outputs"}))
	if hits := list(res, "results"); len(hits) == 0 || obj(res["filters"])["content_scope"] != "outputs" {
		t.Errorf("outputs = %v", res)
	} else {
		for _, h := range hits {
			if obj(h)["event_type"] != "tool_output" {
				t.Errorf("outputs scope returned %v", h)
			}
		}
	}
	// No hits: an empty array, never null.
	res = structured(t, "no hits", s.call(t, "search", map[string]any{"query": "zzqxjnomatchword"}))
	if hits, ok := res["results"].([]any); !ok || len(hits) != 0 {
		t.Errorf("search with no hits: results = %#v, want []", res["results"])
	}
	// One provider.
	res = structured(t, "cursor only", s.call(t, "search", map[string]any{"query": "the", "providers": []any{"cursor"}, "limit": 50}))
	if hits := list(res, "results"); len(hits) == 0 {
		t.Errorf("providers cursor: no hits")
	} else {
		for _, h := range hits {
			if obj(h)["provider"] != "cursor" {
				t.Errorf("providers cursor returned %v", obj(h)["provider"])
			}
		}
	}
	// The context store is one more source: an entry shares words with a transcript.
	setEntry(t, e.st, store.KnowledgeKind, "zanzibar", "# Zanzibar\nThe zanzibar flag gates the new parser.\n")
	res = structured(t, "zanzibar", s.call(t, "search", map[string]any{"query": "zanzibar flag"}))
	provs := map[string]bool{}
	for _, h := range list(res, "results") {
		provs[fmt.Sprint(obj(h)["provider"])] = true
		if obj(h)["provider"] == "ctx" && obj(h)["kind"] == "knowledge" && obj(h)["uri"] != "context://knowledge/zanzibar" {
			t.Errorf("ctx hit = %v", h)
		}
	}
	if !provs["ctx"] || !provs["claude-code"] {
		t.Errorf("zanzibar: providers %v: %v", provs, res)
	}
	res = structured(t, "zanzibar ctx only", s.call(t, "search", map[string]any{"query": "zanzibar", "providers": []any{"ctx"}}))
	for _, h := range list(res, "results") {
		if obj(h)["provider"] != "ctx" {
			t.Errorf("providers [ctx] returned %v", h)
		}
	}
	if len(list(res, "results")) < 2 { // the entry and the commit that wrote it
		t.Errorf("providers [ctx] = %v", res)
	}
	// include_current_session is accepted and changes nothing.
	a := structured(t, "a", s.call(t, "search", map[string]any{"query": "README"}))
	b := structured(t, "b", s.call(t, "search", map[string]any{"query": "README", "include_current_session": true}))
	if fmt.Sprint(a["results"]) != fmt.Sprint(b["results"]) {
		t.Errorf("include_current_session changed the results")
	}
}

// TestAgentHistorySearchPages: a search pages to exhaustion in the order of one large page, without
// repeats.
func TestAgentHistorySearchPages(t *testing.T) {
	s := corpusServer(t).s
	whole := structured(t, "whole", s.call(t, "search", map[string]any{"query": "test", "limit": 100}))
	var want []string
	for _, h := range list(whole, "results") {
		want = append(want, obj(h)["ctx_event_id"].(string))
	}
	if len(want) < 20 {
		t.Fatalf("only %d hits for test", len(want))
	}
	var got []string
	var cursor any
	for i := 0; ; i++ {
		args := map[string]any{"query": "test", "limit": 7}
		if cursor != nil {
			args["cursor"] = cursor
		}
		res := structured(t, "page", s.call(t, "search", args))
		for _, h := range list(res, "results") {
			got = append(got, obj(h)["ctx_event_id"].(string))
		}
		pg := obj(res["pagination"])
		if pg["has_more"] != true {
			break
		}
		if i > 100 {
			t.Fatal("search does not end")
		}
		cursor = pg["next_cursor"]
	}
	if len(want) == 100 {
		got = got[:min(len(got), 100)]
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paged search:\n got %v\nwant %v", got, want)
	}
}

func TestAgentHistoryShowSession(t *testing.T) {
	e := corpusServer(t)
	s := e.s
	codexID := history.SessionID(history.Codex, codexNative)
	// mode log pages through every event, in order, to exhaustion; a prefix of the id names it.
	var seqs []float64
	var cursor any
	var sess map[string]any
	for i := 0; ; i++ {
		args := map[string]any{"ctx_session_id": codexID[:13], "mode": "log", "limit": 50}
		if cursor != nil {
			args["cursor"] = cursor
		}
		res := structured(t, "log page", s.call(t, "show_session", args))
		sess = obj(res["session"])
		pg := obj(res["pagination"])
		if res["kind"] != "session_transcript" || pg["limit"] != float64(50) || pg["returned"] != float64(len(list(res, "events"))) {
			t.Fatalf("page = %v", pg)
		}
		for _, ev := range list(res, "events") {
			seqs = append(seqs, obj(ev)["seq"].(float64))
		}
		_, hasNext := pg["next_cursor"]
		if pg["has_more"] != hasNext {
			t.Fatalf("has_more %v, next_cursor %v", pg["has_more"], hasNext)
		}
		if !hasNext {
			break
		}
		if i > 50 {
			t.Fatal("show_session does not end")
		}
		cursor = pg["next_cursor"]
	}
	if sess["ctx_session_id"] != codexID || sess["native_session_id"] != codexNative || sess["provider"] != "codex" ||
		float64(len(seqs)) != sess["event_count"].(float64) || len(seqs) < 100 {
		t.Fatalf("session %v with %d events", sess, len(seqs))
	}
	for i, q := range seqs {
		if q != float64(i+1) {
			t.Fatalf("event %d has seq %v", i, q)
		}
	}
	// transcript leaves the tool outputs out; messages keeps messages and summaries only.
	for mode, bad := range map[string][]string{"transcript": {"tool_output"}, "messages": {"tool_output", "tool_call", "reasoning", "notice"}} {
		res := structured(t, mode, s.call(t, "show_session", map[string]any{"ctx_session_id": codexID, "mode": mode, "limit": 4096}))
		evs := list(res, "events")
		if len(evs) == 0 || len(evs) >= len(seqs) || res["mode"] != mode {
			t.Errorf("%s: %d events of %d", mode, len(evs), len(seqs))
		}
		for _, ev := range evs {
			if slices.Contains(bad, obj(ev)["type"].(string)) {
				t.Errorf("%s returned a %s", mode, obj(ev)["type"])
			}
		}
	}

	// Cursors: bound to the session, the mode and the index generation.
	res := structured(t, "first", s.call(t, "show_session", map[string]any{"ctx_session_id": codexID, "limit": 2}))
	c := obj(res["pagination"])["next_cursor"].(string)
	other := history.SessionID(history.Codex, "codex-session-root")
	for _, tc := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"ctx_session_id": other, "cursor": c}, "cursor_mismatch"},
		{map[string]any{"ctx_session_id": codexID, "mode": "log", "cursor": c}, "cursor_mismatch"},
		{map[string]any{"ctx_session_id": codexID, "cursor": tamperCursor(c)}, "invalid_cursor"},
		{map[string]any{"ctx_session_id": codexID, "cursor": "bm90IGEgY3Vyc29y"}, "invalid_cursor"},
		{map[string]any{"ctx_session_id": codexID, "cursor": strings.Repeat("A", 4097)}, "invalid_request"},
		{map[string]any{"ctx_session_id": codexID, "cursor": "caf\u00e9"}, "invalid_request"},
		{map[string]any{"ctx_session_id": codexID, "limit": 4097}, "invalid_request"},
		{map[string]any{"ctx_session_id": codexID, "limit": 1e12}, "invalid_request"},
		{map[string]any{"ctx_session_id": "00000000-0000-8000-8000-000000000000"}, "not_found"},
		{map[string]any{"ctx_session_id": "'; DROP TABLE events; --"}, "not_found"},
	} {
		if code := errorCode(t, "show_session", s.call(t, "show_session", tc.args)); code != tc.code {
			t.Errorf("%v: %s, want %s", tc.args, code, tc.code)
		}
	}
	res = structured(t, "second", s.call(t, "show_session", map[string]any{"ctx_session_id": codexID, "limit": 2, "cursor": c}))
	if ev := list(res, "events"); len(ev) != 2 || obj(ev[0])["seq"].(float64) <= 2 {
		t.Errorf("second page = %v", res)
	}
	// A re-import that changes the index makes the cursor stale.
	growTranscript(t, e.extra)
	reimport(t, e.hist, e.extra)
	if code := errorCode(t, "stale", s.call(t, "show_session", map[string]any{"ctx_session_id": codexID, "limit": 2, "cursor": c})); code != "cursor_stale" {
		t.Errorf("after a re-import: %s, want cursor_stale", code)
	}
}

// growTranscript appends a user message to the MCP transcript under extra.
func growTranscript(t *testing.T, extra string) {
	t.Helper()
	f := filepath.Join(extra, "-w-app", "mcp-session.jsonl")
	line := `{"type":"user","uuid":"u2","timestamp":"2026-02-01T10:01:00Z","cwd":"/w/app","message":{"role":"user","content":"thanks"}}` + "\n"
	if err := os.WriteFile(f, []byte(mcpTranscript+line), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAgentHistoryShowEventAndActivity(t *testing.T) {
	s := corpusServer(t).s
	codexID := history.SessionID(history.Codex, codexNative)
	res := structured(t, "session", s.call(t, "show_session", map[string]any{"ctx_session_id": codexID, "mode": "log", "limit": 20}))
	evs := list(res, "events")
	mid := obj(evs[10])
	res = structured(t, "show_event", s.call(t, "show_event", map[string]any{"ctx_event_id": mid["ctx_event_id"].(string)[:8], "before": 2, "after": 3}))
	ev := obj(res["event"])
	bs, as := list(res, "before"), list(res, "after")
	if ev["ctx_event_id"] != mid["ctx_event_id"] || ev["provider"] != "codex" || obj(res["session"])["native_session_id"] != codexNative ||
		len(bs) != 2 || len(as) != 3 || obj(bs[0])["ctx_event_id"] != obj(evs[8])["ctx_event_id"] ||
		obj(as[2])["ctx_event_id"] != obj(evs[13])["ctx_event_id"] {
		t.Errorf("show_event = %v", res)
	}
	res = structured(t, "window", s.call(t, "show_event", map[string]any{"ctx_event_id": mid["ctx_event_id"], "window": 1}))
	if len(list(res, "before")) != 1 || len(list(res, "after")) != 1 {
		t.Errorf("window 1 = %v", res)
	}
	// The first event has nothing before it.
	res = structured(t, "first", s.call(t, "show_event", map[string]any{"ctx_event_id": obj(evs[0])["ctx_event_id"], "window": 5}))
	if len(list(res, "before")) != 0 || len(list(res, "after")) != 5 {
		t.Errorf("window of the first event = %v", res)
	}
	// The MCP tool call of a transcript carries activity.invocation.
	mcpID := history.SessionID(history.ClaudeCode, "mcp-session")
	res = structured(t, "mcp session", s.call(t, "show_session", map[string]any{"ctx_session_id": mcpID}))
	evs = list(res, "events")
	if len(evs) != 2 {
		t.Fatalf("mcp session = %v", res)
	}
	if inv := obj(obj(obj(evs[1])["activity"])["invocation"]); inv["protocol"] != "mcp" || inv["server"] != "github" || inv["tool"] != "create_issue" || obj(evs[0])["activity"] != nil {
		t.Errorf("activity = %v", evs)
	}
	for _, tc := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"ctx_event_id": "../../etc/passwd"}, "invalid_request"},
		{map[string]any{"ctx_event_id": "ffffffff"}, "not_found"},
		{map[string]any{"ctx_event_id": mid["ctx_event_id"], "before": 51}, "invalid_request"},
		{map[string]any{"ctx_event_id": mid["ctx_event_id"], "window": 1, "before": 1}, "invalid_request"},
	} {
		if code := errorCode(t, "show_event", s.call(t, "show_event", tc.args)); code != tc.code {
			t.Errorf("%v: %s, want %s", tc.args, code, tc.code)
		}
	}
}

func TestAgentHistoryQueryEvents(t *testing.T) {
	e := corpusServer(t)
	s := e.s
	st := structured(t, "status", s.call(t, "status", nil))
	hs := obj(st["history"])
	total := int(hs["events"].(float64))
	if st["read_only"] != true || hs["exists"] != true || hs["sessions"] != float64(24) || total < 900 || obj(hs["sessions_by_provider"])["codex"] != float64(6) {
		t.Fatalf("status = %v", st)
	}
	// Every event, once, in time order, pages of 97.
	seen := map[string]bool{}
	last := ""
	var cursor any
	for i := 0; ; i++ {
		args := map[string]any{"limit": 97, "content": "none"}
		if cursor != nil {
			args["cursor"] = cursor
		}
		res := structured(t, "page", s.call(t, "query_events", args))
		if res["kind"] != "event_range_page" || res["generation"] != indexGeneration(t, e.hist) || obj(res["selection"])["content"] != "none" {
			t.Fatalf("page = %v", res)
		}
		for _, ev := range list(res, "events") {
			id := obj(ev)["ctx_event_id"].(string)
			if seen[id] || obj(ev)["text"] != nil {
				t.Fatalf("event %s twice or with text", id)
			}
			seen[id] = true
			if at, ok := obj(ev)["at"].(string); ok {
				if last != "" && at < last {
					t.Errorf("out of order: %s after %s", at, last)
				}
				last = at
			}
		}
		if res["terminal"] == true {
			if res["next_cursor"] != nil {
				t.Errorf("terminal page with a cursor")
			}
			break
		}
		if i > 100 {
			t.Fatal("query_events does not end")
		}
		cursor = res["next_cursor"]
	}
	if len(seen) != total {
		t.Errorf("query_events paged %d events, the index holds %d", len(seen), total)
	}
	// Filters: one provider's tool calls, newest first, with their text.
	res := structured(t, "codex calls", s.call(t, "query_events", map[string]any{"providers": []any{"codex"},
		"event_types": []any{"tool_call"}, "order": "desc", "content": "text", "limit": 500}))
	evs := list(res, "events")
	if len(evs) < 10 || res["terminal"] != true {
		t.Fatalf("codex calls = %d events", len(evs))
	}
	for i, ev := range evs {
		if obj(ev)["provider"] != "codex" || obj(ev)["type"] != "tool_call" || obj(ev)["tool"] == nil {
			t.Errorf("codex calls returned %v", ev)
		}
		// Events without a time sort as the oldest: last, newest first.
		at, ok := obj(ev)["at"].(string)
		prev, prevOK := obj(evs[max(0, i-1)])["at"].(string)
		if i > 0 && ((ok && !prevOK) || (ok && at > prev)) {
			t.Errorf("desc out of order at %d: %v after %v", i, obj(ev)["at"], obj(evs[i-1])["at"])
		}
	}
	// A cursor of other filters is a mismatch; a cursor of an older generation is stale.
	res = structured(t, "p1", s.call(t, "query_events", map[string]any{"providers": []any{"codex"}, "limit": 5}))
	c := res["next_cursor"].(string)
	if code := errorCode(t, "mismatch", s.call(t, "query_events", map[string]any{"providers": []any{"cursor"}, "limit": 5, "cursor": c})); code != "cursor_mismatch" {
		t.Errorf("other filters: %s", code)
	}
	res = structured(t, "p2", s.call(t, "query_events", map[string]any{"providers": []any{"codex"}, "limit": 50, "cursor": c}))
	if len(list(res, "events")) != 50 {
		t.Errorf("second page with another limit = %d events", len(list(res, "events")))
	}
	growTranscript(t, e.extra)
	reimport(t, e.hist, e.extra)
	if code := errorCode(t, "stale", s.call(t, "query_events", map[string]any{"providers": []any{"codex"}, "limit": 5, "cursor": c})); code != "cursor_stale" {
		t.Errorf("after a re-import: %s", code)
	}
}

// TestAgentHistoryHostileArguments: oversized, malformed and injection-looking arguments are typed tool
// errors or plain (empty) results; the index is intact after them.
func TestAgentHistoryHostileArguments(t *testing.T) {
	s := corpusServer(t).s
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"query": "x", "limit": 1e9}},
		{"search", map[string]any{"query": "x", "limit": -1}},
		{"search", map[string]any{"query": "x", "cursor": strings.Repeat("x", 5000)}},
		{"search", map[string]any{"query": strings.Repeat("a ", 200)}},
		{"search", map[string]any{"query": "x", "source_roots": make([]any, 65)}},
		{"search", map[string]any{"query": "x", "source_roots": []any{strings.Repeat("a", 65)}}},
		{"search", map[string]any{"query": "x", "source_roots": []any{"a/../b"}}},
		{"search", map[string]any{"query": "x", "since": "1 OR 1=1"}},
		{"search", map[string]any{"query": "x", "event_type": "tool_call", "content_scope": "calls"}},
		{"search", map[string]any{"query": "x", "ctx_session_id": strings.Repeat("9", 129)}},
		{"query_events", map[string]any{"limit": 501}},
		{"query_events", map[string]any{"order": "random()"}},
		{"query_events", map[string]any{"content": "all"}},
		{"query_events", map[string]any{"role": "root"}},
		{"query_events", map[string]any{"cursor": "eyJ0b29sIjoicXVlcnlfZXZlbnRzIn0"}},
		{"show_session", map[string]any{"ctx_session_id": "x", "extra": true}},
		{"show_event", map[string]any{"ctx_event_id": "ctx:zz"}},
	} {
		res := s.call(t, tc.tool, tc.args)
		code := errorCode(t, tc.tool, res)
		if code != "invalid_request" && code != "invalid_cursor" {
			t.Errorf("%s %v: %s", tc.tool, tc.args, code)
		}
		if tc.args["source_roots"] != nil && strings.Contains(resultText(res), "a/../b") {
			t.Errorf("%s echoes the rejected selector: %s", tc.tool, resultText(res))
		}
	}
	// FTS5 syntax and SQL in a query are words, never syntax: no error.
	for _, q := range []string{`" OR 1=1; DROP TABLE events; --`, `NEAR(apply patch)`, `apply* AND -test`, `{col}:x ^y`, `"unbalanced`} {
		res := s.call(t, "search", map[string]any{"query": q})
		if res.IsError {
			t.Errorf("search %q: %s", q, resultText(res))
		}
	}
	res := structured(t, "file filter", s.call(t, "search", map[string]any{"query": "apply_patch", "file": "../../../etc/passwd"}))
	if len(list(res, "results")) != 0 {
		t.Errorf("file filter = %v", res)
	}
	res = structured(t, "still intact", s.call(t, "search", map[string]any{"query": "apply_patch"}))
	if len(list(res, "results")) == 0 {
		t.Errorf("the index lost its events")
	}
}

// TestAgentHistoryNoIndex: without an index the tools answer (the context store's part) with the hint to
// import, and ids of agent sessions are not found; the server creates no index.
func TestAgentHistoryNoIndex(t *testing.T) {
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	hist := filepath.Join(t.TempDir(), "none")
	s := serve(t, st, Options{HistoryDir: hist}, "")
	res := structured(t, "query_events", s.call(t, "query_events", nil))
	if len(list(res, "events")) != 0 || res["terminal"] != true || !strings.Contains(fmt.Sprint(res["hint"]), "ctx history import") {
		t.Errorf("query_events = %v", res)
	}
	res = structured(t, "status", s.call(t, "status", nil))
	if obj(res["history"])["exists"] != false || obj(res["history"])["path"] != hist {
		t.Errorf("status = %v", res)
	}
	if code := errorCode(t, "show_session", s.call(t, "show_session", map[string]any{"ctx_session_id": "0b06d37e-b29b-88dd-a22e-dc889b463c87"})); code != "not_found" {
		t.Errorf("show_session: %s", code)
	}
	if _, err := os.Stat(hist); !os.IsNotExist(err) {
		t.Errorf("the server created the index directory: %v", err)
	}
}

// TestAgentHistoryOutputLimit: an event that fits a response once but not with its copy as text comes
// in structuredContent only (show_event, a show_session page of its own), ends the show_session page
// before it early (has_more) and is listed by query_events with content none.
func TestAgentHistoryOutputLimit(t *testing.T) {
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	ctx := context.Background()
	root := t.TempDir()
	big := strings.Repeat("zanzibar ", 80_000) // 720 KB: with its text fallback over 1 MiB
	lines := []string{
		`{"type":"user","uuid":"u1","timestamp":"2026-02-01T10:00:00Z","cwd":"/w","message":{"role":"user","content":"small one"}}`,
		`{"type":"assistant","uuid":"a1","timestamp":"2026-02-01T10:00:01Z","cwd":"/w","message":{"role":"assistant","content":"` + big + `"}}`,
		`{"type":"user","uuid":"u2","timestamp":"2026-02-01T10:00:02Z","cwd":"/w","message":{"role":"user","content":"small two"}}`,
	}
	if err := os.MkdirAll(filepath.Join(root, "-w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "-w", "big.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(t.TempDir(), "history")
	reimport(t, hist, root)
	s := serve(t, st, Options{HistoryDir: hist}, "")
	id := history.SessionID(history.ClaudeCode, "big")

	res := structured(t, "page 1", s.call(t, "show_session", map[string]any{"ctx_session_id": id, "limit": 3}))
	pg := obj(res["pagination"])
	if len(list(res, "events")) != 1 || pg["returned"] != float64(1) || pg["has_more"] != true {
		t.Fatalf("page 1 = %v", pg)
	}
	// The big event fits once, not with its copy as text: it comes in structuredContent only.
	page2 := s.call(t, "show_session", map[string]any{"ctx_session_id": id, "limit": 3, "cursor": pg["next_cursor"]})
	res = structured(t, "page 2", page2)
	if evs := list(res, "events"); len(evs) != 1 || obj(evs[0])["text"] != big {
		t.Errorf("page 2 starting at the big event: %d events", len(evs))
	}
	if txt := resultText(page2); !strings.Contains(txt, "structuredContent only") {
		t.Errorf("page 2's text block: %.200q", txt)
	}
	evs, err := func() ([]history.Event, error) {
		ix, err := history.Open(ctx, hist)
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		return ix.Events(ctx, id, 0, 0)
	}()
	if err != nil || len(evs) != 3 {
		t.Fatalf("events: %v %v", len(evs), err)
	}
	one := s.call(t, "show_event", map[string]any{"ctx_event_id": evs[1].ID})
	if res := structured(t, "show_event of the big event", one); obj(res["event"])["text"] != big {
		t.Errorf("show_event of the big event: %.200v", res)
	}
	if txt := resultText(one); !strings.Contains(txt, "structuredContent only") {
		t.Errorf("show_event's text block: %.200q", txt)
	}
	res = structured(t, "neighbour", s.call(t, "show_event", map[string]any{"ctx_event_id": evs[2].ID}))
	if obj(res["event"])["text"] != "small two" {
		t.Errorf("show_event = %v", res)
	}
	res = structured(t, "none", s.call(t, "query_events", map[string]any{"ctx_session_id": id, "content": "none"}))
	if len(list(res, "events")) != 3 || res["terminal"] != true {
		t.Errorf("query_events content none = %v", res)
	}
	res = structured(t, "text", s.call(t, "query_events", map[string]any{"ctx_session_id": id, "content": "text"}))
	if len(list(res, "events")) != 1 || res["truncated"] != true || res["terminal"] != false {
		t.Errorf("query_events content text: %d events, truncated %v", len(list(res, "events")), res["truncated"])
	}
}

// TestAgentHistoryDamagedIndex: an index damaged after the server opened it makes the read tools fail
// with a JSON-RPC error (nothing the model can repair) whose message names the user's remedy.
func TestAgentHistoryDamagedIndex(t *testing.T) {
	e := corpusServer(t)
	db := filepath.Join(e.hist, "index.db")
	if err := os.WriteFile(db, bytes.Repeat([]byte("not sqlite "), 4000), 0o600); err != nil {
		t.Fatal(err)
	}
	// A tool error the agent can read and relay (it was a JSON-RPC -32603).
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"search", map[string]any{"query": "apply_patch"}}, {"query_events", map[string]any{}}} {
		res, err := e.s.callErr(c.tool, c.args)
		if err != nil {
			t.Fatalf("%s of a damaged index: a protocol error %v", c.tool, err)
		}
		if code := errorCode(t, c.tool, res); code != "index_damaged" || !strings.Contains(resultText(res), "ctx history import rebuilds it") {
			t.Errorf("%s of a damaged index: %s %s", c.tool, code, resultText(res))
		}
	}
	// status and sources answer: the index's problem and its remedy are in their history and index parts.
	checkIndexProblem(t, e.s, "not a database", "ctx history import rebuilds it")
}

// checkIndexProblem: the status and sources tools answer (no protocol error) over an index that cannot
// be read, naming the problem and the remedy in their history (status) and index (sources) parts.
func checkIndexProblem(t *testing.T, s *session, problem, remedy string) {
	t.Helper()
	for _, c := range []struct{ tool, part string }{{"status", "history"}, {"sources", "index"}} {
		res, err := s.callErr(c.tool, nil)
		if err != nil {
			t.Errorf("%s over an unreadable index: %v", c.tool, err)
			continue
		}
		h := obj(structured(t, c.tool, res)[c.part])
		if !strings.Contains(fmt.Sprint(h["error"]), problem) || !strings.Contains(fmt.Sprint(h["hint"]), remedy) || h["exists"] != true {
			t.Errorf("%s: %s = %v, want the error %q and the remedy %q", c.tool, c.part, h, problem, remedy)
		}
	}
}

// TestAgentHistoryNewerIndex: an index written by a newer ctx (a higher schema version) is left alone; status
// and sources say so, with the remedy.
func TestAgentHistoryNewerIndex(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	hist := filepath.Join(t.TempDir(), "history")
	ix, err := history.Open(context.Background(), hist)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	db, err := sql.Open("sqlite", filepath.Join(hist, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := serve(t, st, Options{HistoryDir: hist}, "")
	checkIndexProblem(t, s, "newer ctx", "use that ctx, or remove")
	// The read tools answer a tool error with the code of an index this ctx cannot read (it was
	// a JSON-RPC -32603), naming the cause and the remedy.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"search", map[string]any{"query": "hello"}}, {"show_session", map[string]any{"ctx_session_id": "sample_session"}},
		{"query_events", map[string]any{}}, {"show_event", map[string]any{"ctx_event_id": "0123456789abcdef"}}} {
		res, err := s.callErr(c.tool, c.args)
		if err != nil {
			t.Errorf("%s over a newer index: a protocol error %v", c.tool, err)
			continue
		}
		if code := errorCode(t, c.tool, res); code != "index_damaged" || !strings.Contains(resultText(res), "newer ctx") ||
			!strings.Contains(resultText(res), "use that ctx, or remove") {
			t.Errorf("%s over a newer index: %s %s", c.tool, code, resultText(res))
		}
	}
}

// rawCursor is a cursor of body j as the server encodes one (JSON and its CRC-32): what anyone can forge.
func rawCursor(j []byte) string {
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint32(append([]byte(nil), j...), crc32.ChecksumIEEE(j)))
}

// TestForgedCursors: a cursor rebuilt with a valid checksum but an offset that names no event of the
// session, or a query_events position with missing or impossible fields, is invalid_cursor, never an
// empty last page or a silent restart; the genuine cursors still page.
func TestForgedCursors(t *testing.T) {
	s := corpusServer(t).s
	codexID := history.SessionID(history.Codex, codexNative)
	args := map[string]any{"ctx_session_id": codexID, "mode": "log", "limit": 2}
	res := structured(t, "session", s.call(t, "show_session", args))
	c, ok := decodeCursor(obj(res["pagination"])["next_cursor"].(string))
	if !ok {
		t.Fatal("the server's cursor does not decode")
	}
	n := len(list(structured(t, "all", s.call(t, "show_session", map[string]any{"ctx_session_id": codexID, "mode": "log", "limit": 4096})), "events"))
	for _, off := range []int{c.Offset + 1e6, 1e9, 1<<63 - 1} {
		f := c
		f.Offset = off
		args["cursor"] = encodeCursor(f)
		if code := errorCode(t, "forged offset", s.call(t, "show_session", args)); code != "invalid_cursor" {
			t.Errorf("show_session offset %d (session of %d log events): %s", off, n, code)
		}
	}
	// Every member present with its type (a cursor without "tip" was cursor_stale, a null
	// offset the first page): a forged cursor is invalid_cursor before any staleness check.
	j, _ := json.Marshal(c)
	var members map[string]json.RawMessage
	if err := json.Unmarshal(j, &members); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tool", "args", "tip", "offset"} {
		for _, v := range []string{"", "null", "true", "{}", "[]", `"2"`, "2"} {
			forged := map[string]json.RawMessage{}
			for mk, mv := range members {
				if mk != k {
					forged[mk] = mv
				}
			}
			if v != "" {
				forged[k] = json.RawMessage(v)
			}
			if k == "offset" && v == "2" || k != "offset" && v == `"2"` {
				continue // a value of the member's type
			}
			fj, _ := json.Marshal(forged)
			args["cursor"] = rawCursor(fj)
			if code := errorCode(t, "forged member", s.call(t, "show_session", args)); code != "invalid_cursor" {
				t.Errorf("show_session cursor %s: %s", fj, code)
			}
		}
	}
	f := c
	f.Offset = 4
	args["cursor"] = encodeCursor(f)
	if got := list(structured(t, "offset 4", s.call(t, "show_session", args)), "events"); len(got) != 2 || obj(got[0])["seq"] != float64(5) {
		t.Errorf("a cursor naming event 4: %v", got)
	}

	qargs := map[string]any{"content": "none", "limit": 2}
	res = structured(t, "query_events", s.call(t, "query_events", qargs))
	qc, ok := decodeCursor(res["next_cursor"].(string))
	if !ok || qc.Pos == nil {
		t.Fatalf("query_events cursor %v", res["next_cursor"])
	}
	qc.Pos = nil
	j, _ = json.Marshal(qc)
	base := strings.TrimSuffix(string(j), "}")
	for _, pos := range []string{`null`, `[]`, `{}`, `{"at":0}`, `{"row":3}`, `{"at":null,"row":null}`, `{"at":0,"row":-5}`, `{"at":-9223372036854775807,"row":1}`, `{"at":"x","row":1}`} {
		qargs["cursor"] = rawCursor([]byte(base + `,"pos":` + pos + `}`))
		if code := errorCode(t, "forged pos", s.call(t, "query_events", qargs)); code != "invalid_cursor" {
			t.Errorf("query_events pos %s: %s", pos, code)
		}
	}
	qargs["cursor"] = res["next_cursor"]
	if got := list(structured(t, "page 2", s.call(t, "query_events", qargs)), "events"); len(got) != 2 {
		t.Errorf("genuine cursor: %v", got)
	}
}

// TestSourcesIndexedPerRoot: indexed_sessions counts the sessions under each row's root, not the
// provider's: the corpus imported from elsewhere is under none of the (empty) providers' roots.
func TestSourcesIndexedPerRoot(t *testing.T) {
	e := corpusServer(t)
	res := structured(t, "sources", e.s.call(t, "sources", nil))
	byProvider := obj(obj(res["index"])["sessions_by_provider"])
	if byProvider["claude-code"] == nil || byProvider["claude-code"].(float64) == 0 {
		t.Fatalf("the corpus has no claude-code session: %v", byProvider)
	}
	for _, r := range list(res, "sources") {
		if row := obj(r); row["provider"] != "ctx" && row["indexed_sessions"] != float64(0) {
			t.Errorf("%v under %v: %v sessions, want 0", row["provider"], row["root"], row["indexed_sessions"])
		}
	}
}

// TestSearchSessionResolves: search's ctx_session_id takes what show_session and query_events take (a
// ctx id, a unique prefix of it, the provider's own id) and an unknown id is not_found, not 0 results.
func TestSearchSessionResolves(t *testing.T) {
	e := corpusServer(t)
	codexID := history.SessionID(history.Codex, codexNative)
	for _, id := range []string{codexID, codexID[:8], codexNative} {
		res := structured(t, "search", e.s.call(t, "search", map[string]any{"query": "apply_patch", "ctx_session_id": id}))
		hits := list(res, "results")
		if len(hits) == 0 {
			t.Errorf("ctx_session_id %q: no result", id)
		}
		for _, h := range hits {
			if obj(h)["ctx_session_id"] != codexID {
				t.Errorf("ctx_session_id %q: a hit of %v", id, obj(h)["ctx_session_id"])
			}
		}
	}
	if code := errorCode(t, "unknown", e.s.call(t, "search", map[string]any{"query": "apply_patch", "ctx_session_id": "deadbeefdeadbeef"})); code != "not_found" {
		t.Errorf("an unknown session: %s, want not_found", code)
	}
}

// TestSearchReportsRankWindow: a word in more events than a search ranks (20,000) gives results that
// say so (ranked_window), and their scores, small for so common a word, are not rounded to 0.
func TestSearchReportsRankWindow(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	hist := filepath.Join(t.TempDir(), "history")
	root := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"timestamp":"2026-03-01T03:00:00Z","type":"session_meta","payload":{"id":"019fdddd-0000-7000-8000-0000000000aa"}}` + "\n")
	for i := range 20001 {
		fmt.Fprintf(&b, `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"alpha %d%s"}]}}`+"\n", i, strings.Repeat(" beta", i%7))
	}
	p := filepath.Join(root, "rollout-2026-03-01T03-00-00-w.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := history.Open(context.Background(), hist)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Import(context.Background(), []history.Source{{Provider: history.Codex, Format: history.FormatCodex, Path: p}}); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	s := serve(t, st, Options{HistoryDir: hist}, "")
	res := structured(t, "search", s.call(t, "search", map[string]any{"query": "alpha", "limit": 20}))
	if res["ranked_window"] != float64(20000) {
		t.Errorf("ranked_window = %v, want 20000", res["ranked_window"])
	}
	for _, h := range list(res, "results") {
		sc, _ := obj(h)["score"].(float64)
		if sc == 0 {
			t.Errorf("a hit of score 0: %v", h)
		}
	}
	res = structured(t, "search", s.call(t, "search", map[string]any{"query": "beta"}))
	if res["ranked_window"] != nil {
		t.Errorf("ranked_window of a search within the window: %v", res["ranked_window"])
	}
}
