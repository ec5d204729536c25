package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestSessionByPrintedID: a native id holding a newline and an escape sequence (a Codex
// session_meta.id) is found by `show session` as ctx prints it (searchpage.OneLine writes the newline as
// \n, the sanitizer the ESC as \u001b), as by its raw bytes; an escaped form of nothing stays not found.
func TestSessionByPrintedID(t *testing.T) {
	ctx := context.Background()
	codex := t.TempDir()
	if err := os.WriteFile(filepath.Join(codex, "rollout-2025-12-24T10-00-00-x.jsonl"), []byte(
		`{"timestamp":"2025-12-24T10:00:00.000Z","type":"session_meta","payload":{"id":"line\nbreak\u001b[31m\ttab","cwd":"/w"}}`+"\n"+
			`{"timestamp":"2025-12-24T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	srcs, err := Discover(ctx, Codex, codex, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	sessions, err := ix.Sessions(ctx, Codex, 0)
	if err != nil || len(sessions) != 1 || sessions[0].NativeID != "line\nbreak\x1b[31m\ttab" {
		t.Fatalf("sessions %+v, %v", sessions, err)
	}
	want := sessions[0].ID
	for _, given := range []string{"line\nbreak\x1b[31m\ttab", `line\nbreak\u001b[31m\ttab`, `line\nbreak\u001B[31m\x09tab`} {
		if got, err := ix.Session(ctx, given); err != nil || got.ID != want {
			t.Errorf("Session(%q) = %q, %v; want %s", given, got.ID, err, want)
		}
	}
	for _, given := range []string{`line\nbreak\u001b[32m\ttab`, `line\nbreak\u001b[31m\q`} {
		if _, err := ix.Session(ctx, given); err == nil {
			t.Errorf("Session(%q) found a session", given)
		}
	}
}
