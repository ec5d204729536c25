package storesearch

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/mcp/searchpage"
)

func TestWordsAndTerms(t *testing.T) {
	if got, want := Words("parseSessionMeta, README-2 ünïCödé"), []string{"parsesessionmeta", "parse", "session", "meta", "readme", "2", "ünïcödé", "ünï", "cödé"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
	// a word repeating the one before it counts once; further apart, twice (as ranked since version 1)
	if got, want := Terms("test test error test"), []string{"test", "error", "test"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

// TestRank: documents with every word first; else any word (several words); scores rounded, weights
// applied, ties in the documents' order, snippets around the phrase.
func TestRank(t *testing.T) {
	entry := func(key, text string) Doc {
		return Doc{Res: searchpage.Result{Provider: Provider, Kind: "knowledge", Key: key}, Text: text, Body: text, Weight: 1}
	}
	docs := []Doc{entry("a", "the onboarding guide"), entry("b", "README and onboarding"), entry("c", "nothing here"),
		CommitDoc("abc", "b", "README: onboarding", "set", "agent", "s1", time.Unix(0, 0))}
	got, err := Rank(context.Background(), docs, "README onboarding", Terms("README onboarding"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != "b" || got[1].Kind != "commit" || !got[0].Rep {
		t.Fatalf("Rank = %+v", got)
	}
	if got[0].Score <= got[1].Score || got[0].Score != searchpage.Round(got[0].Score) {
		t.Errorf("scores %v, %v", got[0].Score, got[1].Score)
	}
	// none has both words: any word
	got, _ = Rank(context.Background(), docs, "guide nothing", Terms("guide nothing"))
	if len(got) != 2 {
		t.Errorf("relaxed: %+v", got)
	}
	long := strings.Repeat("x ", 100) + "needle" + strings.Repeat(" y", 100)
	if s := Snippet(long, long, "needle", []string{"needle"}); !strings.HasPrefix(s, "…") || !strings.Contains(s, "needle") || !strings.HasSuffix(s, "…") {
		t.Errorf("Snippet = %q", s)
	}
}

// TestMergeHits: the index's representatives and the store's hits by score, then the index's other hits.
func TestMergeHits(t *testing.T) {
	ix := []searchpage.Result{{Key: "r1", Score: 1, Rep: true}, {Key: "m1", Score: 5}, {Key: "r2", Score: 3, Rep: true}}
	got := MergeHits(ix, []searchpage.Result{{Key: "c", Score: 2, Rep: true}})
	var keys []string
	for _, h := range got {
		keys = append(keys, h.Key)
	}
	if want := []string{"r2", "c", "r1", "m1"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("MergeHits order %q, want %q", keys, want)
	}
}

// TestOpenReadRefuses: no file, not a regular file, not SQLite: errors, nothing created.
func TestOpenReadRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenRead(context.Background(), dir); err == nil {
		t.Error("no copy: opened")
	}
}
