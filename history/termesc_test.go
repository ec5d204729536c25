package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTerminalEscapesNotIndexed: a tool's coloured output (ESC [ 1;33m panicked, an OSC 8
// link around a word) is found by its words: the escape sequences are left out of the search body, where
// "33mpanicked" was the word indexed and a search for panicked found nothing. The event's text keeps them.
func TestTerminalEscapesNotIndexed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p", "s1.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	body := claudeUser("u1", `thread main \u001b[1;33mpanicked\u001b[0m at src/main.rs, see \u001b]8;;http://x\u001b\\wombatlink\u001b]8;;\u001b\\ now`)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	if r := importOne(t, ix, Source{Provider: ClaudeCode, Format: FormatClaude, Path: path}); r.Events != 1 || r.BadLines != 0 {
		t.Fatalf("import: %+v", r)
	}
	for _, q := range []string{"panicked", "wombatlink"} {
		res, err := ix.Search(ctx, Query{Text: q})
		if err != nil || len(res.Hits) != 1 {
			t.Fatalf("search %s: %+v %v", q, res.Hits, err)
		}
		if res.Hits[0].Event.Text != "thread main \x1b[1;33mpanicked\x1b[0m at src/main.rs, see \x1b]8;;http://x\x1b\\wombatlink\x1b]8;;\x1b\\ now" {
			t.Fatalf("the event's text changed: %q", res.Hits[0].Event.Text)
		}
	}
}
