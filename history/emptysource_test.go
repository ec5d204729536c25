package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestEmptyAndPartialSourcesUnchanged: an empty transcript (Claude, Codex rollout, Copilot events.jsonl,
// Gemini .jsonl, Cursor) and one holding only a first line not yet whole are recorded by their first
// import and found unchanged by the next ones, which write nothing and leave the generation where it
// was, through one source's import and through the bulk read of many; once the line is whole, it is
// imported.
func TestEmptyAndPartialSourcesUnchanged(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(map[bool]string{false: "one", true: "bulk"}[bulk], func(t *testing.T) {
			if bulk {
				withBulkState(t)
			}
			ctx := context.Background()
			root := t.TempDir()
			file := func(rel, body string) string {
				p := filepath.Join(root, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				return p
			}
			partial := file("claude/-w/33333333-0000-4000-8000-000000000004.jsonl", `{"type":"user"`)
			srcs := []Source{
				{Provider: ClaudeCode, Format: FormatClaude, Path: file("claude/-w/33333333-0000-4000-8000-000000000003.jsonl", "")},
				{Provider: ClaudeCode, Format: FormatClaude, Path: partial},
				{Provider: Codex, Format: FormatCodex, Path: file("codex/sessions/2026/03/03/rollout-2026-03-03T00-00-00-55555555-0000-4000-8000-000000000005.jsonl", "")},
				{Provider: CopilotCLI, Format: FormatCopilot, Path: file("copilot/session-state/44444444-0000-4000-8000-000000000004/events.jsonl", "")},
				{Provider: GeminiCLI, Format: FormatGeminiJSONL, Path: file("gemini/abc/chats/session-2026-03-03T00-00-66666666.jsonl", "")},
				{Provider: Cursor, Format: FormatCursor, Path: file("cursor/w/agent-transcripts/77777777-0000-4000-8000-000000000007.jsonl", "")},
			}
			ix, err := Open(ctx, filepath.Join(t.TempDir(), "history"))
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			st, err := ix.Import(ctx, srcs)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range st.Results {
				if r.Action != "imported" {
					t.Fatalf("first import of %s: %+v", r.Source.Path, r)
				}
			}
			gen, err := ix.Generation(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 2 {
				st, err := ix.Import(ctx, srcs)
				if err != nil {
					t.Fatal(err)
				}
				if st.Unchanged != len(srcs) {
					t.Fatalf("import %d: %d of %d unchanged: %+v", round+2, st.Unchanged, len(srcs), st.Results)
				}
				for _, s := range srcs {
					if r := importOne(t, ix, s); r.Action != "unchanged" {
						t.Fatalf("ImportSource of %s: %+v", s.Path, r)
					}
				}
				if g, err := ix.Generation(ctx); err != nil || g != gen {
					t.Fatalf("import %d moved the generation %d → %d (%v)", round+2, gen, g, err)
				}
			}
			f, err := os.OpenFile(partial, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(`,"uuid":"u1","message":{"role":"user","content":"now whole"}}` + "\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			st, err = ix.Import(ctx, srcs)
			if err != nil {
				t.Fatal(err)
			}
			if st.Imported != 1 || st.Events != 1 || st.BadLines != 0 {
				t.Fatalf("import of the completed line: %+v", st.Results)
			}
		})
	}
}
