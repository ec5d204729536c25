package history

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLongNativeIDBounded: a Codex session_meta.id of 200 KB is kept as its first 128 bytes,
// "…" and its SHA-256 (the same on every machine, so the ctx session id is too); a second import of the
// unchanged file finds it unchanged, and a session id under the bound is kept as it is.
func TestLongNativeIDBounded(t *testing.T) {
	long := "é" + strings.Repeat("x", 200<<10)
	path := filepath.Join(t.TempDir(), "rollout-2026-07-02T00-00-00-long.jsonl")
	body := `{"timestamp":"2026-07-02T00:00:00Z","type":"session_meta","payload":{"id":"` + long + `","cwd":"/w"}}` + "\n" +
		`{"timestamp":"2026-07-02T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	src := Source{Provider: Codex, Format: FormatCodex, Path: path}
	r := importOne(t, ix, src)
	want := boundNativeID(long)
	if r.Action != "imported" || r.SessionID != SessionID(Codex, want) {
		t.Fatalf("import: %+v", r)
	}
	s, err := ix.Session(context.Background(), r.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if s.NativeID != want || len(want) > MaxNativeID || !utf8.ValidString(want) ||
		want != long[:128]+"…"+fmt.Sprintf("%x", sha256.Sum256([]byte(long))) {
		t.Fatalf("native id %q (%d bytes)", s.NativeID, len(s.NativeID))
	}
	if r := importOne(t, ix, src); r.Action != "unchanged" {
		t.Fatalf("second import: %+v", r)
	}
	if got := boundNativeID("019e1625-789d-76c0-80ab-cccccccccccc"); got != "019e1625-789d-76c0-80ab-cccccccccccc" {
		t.Fatalf("a short id changed: %q", got)
	}
}
