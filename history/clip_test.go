package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipWithinBound: a cut text, its "[… N bytes omitted]" note included, is at most MaxTextBytes
// (docs/history.md "Limits": at most 1 MiB; 1 MiB plus the note, which no MCP view could then
// show), cut at a rune boundary, and the note counts the bytes left out.
func TestClipWithinBound(t *testing.T) {
	for _, n := range []int{MaxTextBytes, MaxTextBytes + 1, MaxTextBytes + 100, 2_250_000, 10 * MaxTextBytes} {
		for _, unit := range []string{"x", "é", "日", "🙂"} {
			s := strings.Repeat(unit, n/len(unit)+1)
			got := clip(s)
			if len(s) <= MaxTextBytes {
				if got != s {
					t.Errorf("%d bytes of %q: cut", len(s), unit)
				}
				continue
			}
			i := strings.LastIndex(got, "\n[… ")
			var omitted int
			if len(got) > MaxTextBytes || !utf8.ValidString(got) || i < 0 || !strings.HasPrefix(s, got[:i]) {
				t.Errorf("%d bytes of %q: %d bytes kept, valid %v", len(s), unit, len(got), utf8.ValidString(got))
			} else if _, err := fmt.Sscanf(got[i:], "\n[… %d bytes omitted]", &omitted); err != nil || i+omitted != len(s) {
				t.Errorf("%d bytes of %q: note %q (%v), %d kept", len(s), unit, got[i:], err, i)
			}
		}
	}
}

// TestImportCutEventWithinBound: an imported message of 2.25 MB is stored cut to at most MaxTextBytes.
func TestImportCutEventWithinBound(t *testing.T) {
	body := strings.Repeat("y", 2_250_000)
	p := filepath.Join(t.TempDir(), "codex", "sessions", "2026", "06", "23", "rollout-2026-06-23T15-00-00-big.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	data := `{"timestamp":"2026-06-23T15:00:00.000Z","type":"session_meta","payload":{"id":"codex-big","cwd":"/repo/app"}}` + "\n" +
		`{"timestamp":"2026-06-23T15:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + body + `"}]}}` + "\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	if r := importOne(t, ix, Source{Provider: Codex, Format: FormatCodex, Path: p}); r.Action != "imported" || r.Events < 1 {
		t.Fatalf("import: %+v", r)
	}
	s, err := ix.Session(context.Background(), "codex-big")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := ix.Events(context.Background(), s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cut := false
	for _, e := range evs {
		if strings.Contains(e.Text, "bytes omitted]") {
			cut = true
			if len(e.Text) > MaxTextBytes {
				t.Errorf("event %s: text of %d bytes, over %d", e.ID, len(e.Text), MaxTextBytes)
			}
		}
	}
	if !cut {
		t.Error("no event was cut")
	}
}
