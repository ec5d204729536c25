package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCodexMCPToolCalls: Codex states in mcp_tool_call_end that a call went to an MCP server; the call
// and its output are marked protocol "mcp" with the server, also when the output arrives in a later
// incremental read, and other calls are not; a hostile server name marks nothing.
func TestCodexMCPToolCalls(t *testing.T) {
	const head = `{"timestamp":"2026-02-01T10:00:00Z","type":"session_meta","payload":{"id":"mcp-thread","cwd":"/w/app"}}
{"timestamp":"2026-02-01T10:00:01Z","type":"response_item","payload":{"type":"function_call","name":"github__create_issue","arguments":"{\"title\":\"zanzibar\"}","call_id":"c1"}}
{"timestamp":"2026-02-01T10:00:02Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c1","invocation":{"server":"github","tool":"create_issue","arguments":{}},"result":{"Ok":{"content":[]}}}}
{"timestamp":"2026-02-01T10:00:03Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"c2"}}
{"timestamp":"2026-02-01T10:00:04Z","type":"response_item","payload":{"type":"function_call","name":"evil__x","arguments":"{}","call_id":"c3"}}
{"timestamp":"2026-02-01T10:00:05Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c3","invocation":{"server":"a\u001b]52;b","tool":"x"}}}
`
	const tail = `{"timestamp":"2026-02-01T10:00:06Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"the issue is created"}}
{"timestamp":"2026-02-01T10:00:07Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Process exited with code 0\nREADME"}}
`
	path := filepath.Join(t.TempDir(), "sessions", "2026", "02", "01", "rollout-2026-02-01T10-00-00-mcp-thread.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	src := Source{Provider: Codex, Format: FormatCodex, Path: path}
	r := importOne(t, ix, src)
	// The output comes in a later read: the pending call carries the server.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(tail); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if r2 := importOne(t, ix, src); r2.Action != "appended" {
		t.Fatalf("second import: %+v", r2)
	}
	evs, err := ix.Events(context.Background(), r.SessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	byCall := map[string][]*Tool{}
	for _, e := range evs {
		if e.Tool != nil {
			byCall[e.Tool.CallID] = append(byCall[e.Tool.CallID], e.Tool)
		}
	}
	if len(byCall["c1"]) != 2 || len(byCall["c2"]) != 2 || len(byCall["c3"]) != 1 {
		t.Fatalf("events by call: %v", byCall)
	}
	for _, tl := range byCall["c1"] {
		if tl.Protocol != "mcp" || tl.Server != "github" {
			t.Errorf("c1: %+v", tl)
		}
	}
	for _, tl := range append(byCall["c2"], byCall["c3"]...) {
		if tl.Protocol != "" || tl.Server != "" {
			t.Errorf("%s marked: %+v", tl.CallID, tl)
		}
	}
}

// TestFiltersOnNonASCIIPaths: the repo, file-prefix and source-directory filters compare by characters,
// as SQLite's substr counts them, so directories with non-ASCII names match.
func TestFiltersOnNonASCIIPaths(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sauvegardé")
	ix := openTestIndex(t)
	src := writeClaude(t, root, "-p", "s1",
		rec("a1", "assistant", "/w/café", `[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/w/café/naïve/x.go","content":"zanzibar"}}]`))
	importOne(t, ix, src)
	for _, q := range []Query{
		{Text: "zanzibar", Repo: "/w/café"},
		{Text: "zanzibar", File: "/w/café/naïve/"},
		{Text: "zanzibar", SourceDirs: []SourceDir{{ClaudeCode, root}}},
	} {
		res, err := ix.Search(context.Background(), q)
		if err != nil || len(res.Hits) != 1 {
			t.Errorf("%+v: %d hits, %v", q, len(res.Hits), err)
		}
	}
	if n, err := ix.SessionsUnder(context.Background(), ClaudeCode, root); n != 1 || err != nil {
		t.Errorf("SessionsUnder: %d %v", n, err)
	}
	evs, err := ix.ListEvents(context.Background(), EventQuery{Repo: "/w/café", File: "/w/café/naïve/"})
	if err != nil || len(evs) != 1 {
		t.Errorf("ListEvents: %d %v", len(evs), err)
	}
}

// TestClaudeMCPToolOutputs: Claude names MCP tools mcp__<server>__<tool> on the call only; the output
// (a tool_result) is marked protocol "mcp" with the call's server and name, as Codex's are.
func TestClaudeMCPToolOutputs(t *testing.T) {
	ix := openTestIndex(t)
	src := writeClaude(t, t.TempDir(), "-p", "s1",
		rec("a1", "assistant", "/w", `[{"type":"tool_use","id":"t1","name":"mcp__ctx__search","input":{"query":"wombat"}}]`),
		rec("u1", "user", "/w", `[{"type":"tool_result","tool_use_id":"t1","content":"wombat results"}]`),
		rec("a2", "assistant", "/w", `[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]`),
		rec("u2", "user", "/w", `[{"type":"tool_result","tool_use_id":"t2","content":"README"}]`))
	r := importOne(t, ix, src)
	evs, err := ix.Events(context.Background(), r.SessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Tool == nil {
			continue
		}
		n++
		mcp := e.Tool.CallID == "t1"
		if mcp && (e.Tool.Protocol != "mcp" || e.Tool.Server != "ctx" || e.Tool.Name != "mcp__ctx__search") ||
			!mcp && (e.Tool.Protocol != "" || e.Tool.Server != "") {
			t.Errorf("%s %s: %+v", e.Type, e.Tool.CallID, e.Tool)
		}
	}
	if n != 4 {
		t.Errorf("%d tool events, want 4", n)
	}
}

// TestCodexMCPToolNameFromEnd: an output whose call is not in the transcript takes the tool name that
// mcp_tool_call_end gives with the server.
func TestCodexMCPToolNameFromEnd(t *testing.T) {
	const lines = `{"timestamp":"2026-02-01T10:00:00Z","type":"session_meta","payload":{"id":"mcp-thread2","cwd":"/w/app"}}
{"timestamp":"2026-02-01T10:00:06Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c9","output":"done"}}
{"timestamp":"2026-02-01T10:00:07Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c9","invocation":{"server":"example","tool":"example_tool","arguments":{}}}}
{"timestamp":"2026-02-01T10:00:08Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c8","output":"done"}}
{"timestamp":"2026-02-01T10:00:09Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c8","invocation":{"server":"example","tool":"bad\u001b]52;x"}}}
`
	path := filepath.Join(t.TempDir(), "sessions", "2026", "02", "01", "rollout-2026-02-01T10-00-00-mcp-thread2.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	r := importOne(t, ix, Source{Provider: Codex, Format: FormatCodex, Path: path})
	evs, err := ix.Events(context.Background(), r.SessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Tool{}
	for _, e := range evs {
		if e.Tool != nil {
			got[e.Tool.CallID] = *e.Tool
		}
	}
	if tl := got["c9"]; tl.Protocol != "mcp" || tl.Server != "example" || tl.Name != "example_tool" {
		t.Errorf("c9: %+v", tl)
	}
	if tl := got["c8"]; tl.Protocol != "mcp" || tl.Name != "" {
		t.Errorf("c8 (hostile tool name): %+v", tl)
	}
}
