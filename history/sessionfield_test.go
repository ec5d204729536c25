package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeTitleClipped: a Claude custom-title of 3 MB is cut at import to MaxSessionField
// bytes with the marker naming its length, so the session (and every search hit, show_session and
// show_event over MCP) fits a response; the session's events stay whole.
func TestHugeTitleClipped(t *testing.T) {
	ix := openTestIndex(t)
	path := filepath.Join(t.TempDir(), "p", "aaaaaaaa-2222-3333-4444-555555555555.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	title := "hugetitle " + strings.Repeat("H ", 1_500_000)
	line, _ := json.Marshal(map[string]any{"type": "custom-title", "sessionId": "aaaaaaaa-2222-3333-4444-555555555555", "customTitle": title})
	if err := os.WriteFile(path, append(append(line, '\n'), claudeUser("u1", "titletest hugetitle")...), 0o644); err != nil {
		t.Fatal(err)
	}
	r := importOne(t, ix, Source{Provider: ClaudeCode, Format: FormatClaude, Path: path})
	s, err := ix.Session(context.Background(), r.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Title) > MaxSessionField || !strings.HasPrefix(s.Title, "hugetitle H H") || !strings.HasSuffix(s.Title, "… [cut: 3000010 bytes]") {
		t.Fatalf("title of %d bytes: ...%q", len(s.Title), s.Title[max(0, len(s.Title)-40):])
	}
	var stored int
	if err := ix.db.QueryRow(`SELECT length(CAST(title AS BLOB)) FROM sessions WHERE id=?`, r.SessionID).Scan(&stored); err != nil || stored > MaxSessionField {
		t.Fatalf("stored title: %d bytes, %v", stored, err)
	}
	if got := ClipSessionField("short"); got != "short" {
		t.Fatalf("a short field changed: %q", got)
	}
}
