package history

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSnippetWordBoundaries: a snippet cut from a long text starts and ends between words
// (it cut "alphabet" into "habet"), keeps its match, and stays valid UTF-8; a text without spaces is cut
// where the bound falls, at a rune boundary.
func TestSnippetWordBoundaries(t *testing.T) {
	words := strings.Fields(strings.Repeat("alphabet ünïcödé omega ", 40))
	text := strings.Join(words[:60], " ") + " needle " + strings.Join(words[60:], " ")
	s := snippet(text, []string{"needle"})
	if !strings.Contains(s, "needle") || !utf8.ValidString(s) {
		t.Fatalf("snippet %q", s)
	}
	core := strings.TrimSuffix(strings.TrimPrefix(s, "…"), "…")
	for _, w := range strings.Fields(core) {
		if w != "alphabet" && w != "ünïcödé" && w != "omega" && w != "needle" {
			t.Errorf("snippet %q holds a cut word %q", s, w)
		}
	}
	long := strings.Repeat("é", 300) + "needle" + strings.Repeat("ü", 300)
	if s := snippet(long, []string{"needle"}); !utf8.ValidString(s) || !strings.Contains(s, "needle") {
		t.Errorf("snippet of a text without spaces: %q", s)
	}
}
