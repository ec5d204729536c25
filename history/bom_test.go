package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestLeadingBOMIgnored: a transcript saved with a UTF-8 byte-order mark (a Windows editor's) imports as
// the same file without it: the first JSONL record (a Codex rollout's session_meta, which names the
// session) and a whole Gemini JSON document are read, with no bad line, and the session keeps its
// provider's id and cwd. A BOM anywhere else is content, as before.
func TestLeadingBOMIgnored(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	codex := `{"timestamp":"2026-06-23T15:00:00.000Z","type":"session_meta","payload":{"id":"codex-bom-root","timestamp":"2026-06-23T15:00:00.000Z","cwd":"/repo/app","originator":"codex-cli","cli_version":"0.200.0","source":"cli","model_provider":"openai"}}
{"timestamp":"2026-06-23T15:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the onboarding flow"}]}}
`
	gemini := `{"kind":"chat","startTime":"2025-12-16T23:47:00.000Z","sessionId":"gemini-bom-session","messages":[{"id":"m1","timestamp":"2025-12-16T23:47:01.000Z","type":"user","content":"Run a command"}]}`
	root := t.TempDir()
	write := func(rel, body string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ix := openTestIndex(t)
	for _, c := range []struct {
		src    Source
		native string
		cwd    string
	}{
		{Source{Provider: Codex, Format: FormatCodex, Path: write("codex/sessions/2026/06/23/rollout-2026-06-23T15-00-00-bom.jsonl", bom+codex)}, "codex-bom-root", "/repo/app"},
		{Source{Provider: GeminiCLI, Format: FormatGeminiJSON, Path: write("gemini/abc/chats/session-2025-12-16T23-47-bom.json", bom+gemini)}, "gemini-bom-session", ""},
	} {
		r := importOne(t, ix, c.src)
		if r.Action != "imported" || r.BadLines != 0 || len(r.Errors) != 0 {
			t.Errorf("%s: %+v", c.src.Path, r)
			continue
		}
		s, err := ix.Session(context.Background(), c.native)
		if err != nil {
			t.Errorf("%s: session %s: %v", c.src.Path, c.native, err)
			continue
		}
		if s.NativeID != c.native || s.CWD != c.cwd {
			t.Errorf("%s: session %+v, want native id %q, cwd %q", c.src.Path, s, c.native, c.cwd)
		}
	}
	// A BOM inside a line is text, not removed: the second record is still a message holding it.
	p := write("codex/sessions/2026/06/24/rollout-2026-06-24T15-00-00-mid.jsonl",
		`{"timestamp":"2026-06-24T15:00:00.000Z","type":"session_meta","payload":{"id":"codex-mid","cwd":"/repo/app"}}`+"\n"+bom+`{"timestamp":"2026-06-24T15:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}}`+"\n")
	if r := importOne(t, ix, Source{Provider: Codex, Format: FormatCodex, Path: p}); r.BadLines != 1 {
		t.Errorf("a BOM on line 2: %+v, want 1 bad line", r)
	}
}
