package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestSecretRefusedUnlessAllowed: a tool write that would publish a secret is a tool error that says so,
// names the allow_secret argument and moves no ref; with allow_secret: true, or to the private scope, it
// is written.
func TestSecretRefusedUnlessAllowed(t *testing.T) {
	repoIdentity(t)
	dir, st := newRepo(t, store.Actor{})
	s := serve(t, st, Options{Agent: "claude-code"}, "")
	tok := "AKIA" + "QZ7XV2KPMW3RT5YU" // an AWS access key id shape, built so no source line holds one
	tip := git(t, dir, "rev-parse", "ctx")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"context_add_knowledge", map[string]any{"key": "aws", "content": "key " + tok}},
		{"context_add_convention", map[string]any{"key": "aws", "content": "key " + tok}},
		{"context_record_decision", map[string]any{"title": "Use AWS", "context": "key " + tok}},
		{"context_update_state", map[string]any{"current_task": "rotate " + tok}},
		{"context_append_session", map[string]any{"session_id": "s-1", "agent": "claude-code", "summary": "pasted " + tok}},
	} {
		res := s.call(t, c.tool, c.args)
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, "secret") || !strings.Contains(text, "allow_secret") || strings.Contains(text, tok) {
			t.Errorf("%s: isError %v, %q; want a tool error naming allow_secret, without the key", c.tool, res.IsError, text)
		}
	}
	if got := git(t, dir, "rev-parse", "ctx"); got != tip {
		t.Fatalf("refused writes moved the context branch")
	}
	res := structured(t, "private", s.call(t, "context_add_knowledge", map[string]any{"key": "aws", "content": "key " + tok, "scope": "private"}))
	if res["scope"] != "private" {
		t.Errorf("private write = %v", res)
	}
	res = structured(t, "allowed", s.call(t, "context_add_knowledge", map[string]any{"key": "aws-public", "content": "key " + tok, "allow_secret": true}))
	if res["scope"] != "public" || res["commit"] != git(t, dir, "rev-parse", "ctx") {
		t.Errorf("allow_secret write = %v", res)
	}
}

// TestInvalidUTF8Refused: a request holding bytes that are not UTF-8, or an unpaired surrogate escape,
// gets a JSON-RPC invalid-params error that says so, instead of being stored with U+FFFD in their place
// (Go's JSON decoding would replace them silently); the CLI refuses the same input (store.ValidText).
func TestInvalidUTF8Refused(t *testing.T) {
	repoIdentity(t)
	dir, st := newRepo(t, store.Actor{})
	tip := git(t, dir, "rev-parse", "ctx")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"k","content":"caf` + "\xff" + `"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"k","content":"a\ud800b"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"k","content":"ok \ud83d\ude00 \\ud800 \\\\"}}}`,
	}, "\n") + "\n"
	var out syncBuffer
	if err := ServeStdio(t.Context(), st, strings.NewReader(in), &out, Options{}); err != nil {
		t.Fatal(err)
	}
	resp := map[float64]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("response %q: %v", line, err)
		}
		if id, ok := m["id"].(float64); ok {
			resp[id] = m
		}
	}
	for id, want := range map[float64]string{1: "byte 0xFF at offset", 2: `unpaired surrogate \ud800`} {
		e, _ := resp[id]["error"].(map[string]any)
		if e == nil || e["code"].(float64) != -32602 || !strings.Contains(e["message"].(string), want) {
			t.Errorf("request %v: response %v, want an invalid-params error with %q", id, resp[id], want)
		}
	}
	// a valid pair and an escaped backslash before "u" are text, not errors
	if e, ok := resp[3]["error"].(map[string]any); ok && strings.Contains(fmt.Sprint(e["message"]), "UTF-8") {
		t.Errorf("request 3 refused: %v", e)
	}
	if got := git(t, dir, "show", "ctx:knowledge/k.md"); strings.Contains(got, "\uFFFD") || !strings.Contains(got, "ok \U0001F600 \\ud800 \\") {
		t.Errorf("knowledge/k.md:\n%s", got)
	}
	if n := git(t, dir, "rev-list", "--count", tip+"..ctx"); n != "1" {
		t.Errorf("%s commits, want 1 (request 3 only)", n)
	}
}
