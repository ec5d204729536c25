package mcp

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestSecretRefusedUnlessAllowed: a tool write that would publish a secret is a tool error that says so,
// names the allow_secret argument and moves no ref; with allow_secret: true, or to the private scope, it
// is written.
func TestSecretRefusedUnlessAllowed(t *testing.T) {
	hermetic(t)
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
