package history

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestDeepJSONBadLine: a transcript line nested 200,000 arrays deep (in a Claude message's
// content, or in a Codex function_call's arguments, a JSON string holding JSON) is a bad line, and the
// lines around it import. The decoder recursed once per level and overflowed the goroutine stack (a
// fatal error that ended the process; the stack is lowered here so that the old code dies at this
// depth, as it did at 3,000,000 with Go's 1 GB default).
func TestDeepJSONBadLine(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
	const depth = 200000
	deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	claude := claudeUser("u1", "before") +
		`{"type":"user","uuid":"u2","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w","message":{"role":"user","content":` + deep + `}}` + "\n" +
		claudeUser("u3", "after")
	codex := `{"timestamp":"2026-07-02T00:00:00Z","type":"session_meta","payload":{"id":"codex-deep","cwd":"/w/deep"}}` + "\n" +
		`{"timestamp":"2026-07-02T00:00:01Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":` + deep + `}"}}` + "\n" +
		`{"timestamp":"2026-07-02T00:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"after"}]}}` + "\n"
	dir := t.TempDir()
	ix := openTestIndex(t)
	for _, c := range []struct {
		src    Source
		body   string
		events int
	}{
		{Source{Provider: ClaudeCode, Format: FormatClaude, Path: filepath.Join(dir, "p", "s1.jsonl")}, claude, 2},
		{Source{Provider: Codex, Format: FormatCodex, Path: filepath.Join(dir, "rollout-2026-07-02T00-00-00-deep.jsonl")}, codex, 1},
	} {
		if err := os.MkdirAll(filepath.Dir(c.src.Path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.src.Path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := importOne(t, ix, c.src)
		if r.Action != "imported" || r.BadLines != 1 || r.Events != c.events {
			t.Errorf("%s: %+v, want imported with %d events and 1 bad line", c.src.Path, r, c.events)
		}
	}
	for _, ok := range []string{`[]`, `{"a":[[{"b":"[[[["}]]]}`, strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)} {
		if tooDeep([]byte(ok)) {
			t.Errorf("tooDeep(%.40q) = true", ok)
		}
	}
	if over := strings.Repeat("{\"k\":", maxJSONDepth+1); !tooDeep([]byte(over)) {
		t.Error("tooDeep of 10001 open objects = false")
	}
}
