package mcp

import (
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// A read-only tool call past its deadline answers the tool error `timeout` (a bounded, typed answer),
// never a hang; a write tool is not cut short.
func TestToolCallTimeout(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli", Session: "s1"})
	setEntry(t, st, store.KnowledgeKind, "deploy", "# Deploy\nmake release\n")
	s := serve(t, st, Options{}, "")
	old := toolCallTimeout
	toolCallTimeout = 0 // every read-only call is past its deadline when it starts
	t.Cleanup(func() { toolCallTimeout = old })
	res := s.call(t, "search", map[string]any{"query": "deploy"})
	if code := errorCode(t, "search", res); code != codeTimeout {
		t.Errorf("search past its deadline: error_code %q, want %q", code, codeTimeout)
	}
	if res := s.call(t, "context_update_state", map[string]any{"current_task": "later"}); res.IsError {
		t.Errorf("a write tool was cut short: %s", resultText(res))
	}
}
