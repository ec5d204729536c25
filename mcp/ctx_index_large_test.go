package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/mcp/storesearch"
	"github.com/ctx-dev/ctx/store"
)

// largeEntries sets n knowledge entries of size bytes of base64 (random) each, plus one small entry.
func largeEntries(t *testing.T, st *store.Store, n, size int) {
	t.Helper()
	raw := make([]byte, size*3/4)
	for i := range n {
		if _, err := rand.Read(raw); err != nil {
			t.Fatal(err)
		}
		body := "# Blob\nhunter\n" + base64.StdEncoding.EncodeToString(raw) + "\ntailword\n"
		setEntry(t, st, store.KnowledgeKind, "blob"+string(rune('a'+i)), body)
	}
	setEntry(t, st, store.KnowledgeKind, "small", "# Small\nthe needle is here\n")
}

// A search of a store with large entries, nothing changed since the copy was made, reads the rows of its
// words only and the bodies of its hits only: not the entries' text (version 2 read and tokenised every
// entry's whole text on every search). A word past the first maxSearchText bytes of an entry is not
// searched (docs/mcp.md "search").
func TestCtxIndexLargeEntriesBounded(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli", Session: "s1"})
	largeEntries(t, st, 4, 600<<10)
	hist := filepath.Join(t.TempDir(), "history")
	args := map[string]any{"query": "needle", "providers": []any{"ctx"}}
	if got := searchJSON(t, st, hist, args); !strings.Contains(got, `"key":"small"`) { // builds the copy
		t.Fatalf("needle not found: %s", got)
	}
	terms, bodies := storesearch.TermsRead.Load(), storesearch.BodiesRead.Load()
	built := ctxIndexStats.built.Load() + ctxIndexStats.updated.Load()
	got := searchJSON(t, st, hist, args)
	if !strings.Contains(got, `"key":"small"`) || strings.Count(got, `"provider":"ctx"`) != 1 {
		t.Fatalf("second search: %s", got)
	}
	if n := ctxIndexStats.built.Load() + ctxIndexStats.updated.Load(); n != built {
		t.Errorf("nothing changed, yet the copy was updated %d times", n-built)
	}
	if n := storesearch.TermsRead.Load() - terms; n != 1 {
		t.Errorf("the search read %d rows of words, want 1 (the one document holding it)", n)
	}
	if n := storesearch.BodiesRead.Load() - bodies; n != 1 {
		t.Errorf("the search loaded %d bodies, want 1 (its hit's)", n)
	}
	// The rule: the first maxSearchText bytes of an entry are searched, not the rest.
	if got := searchJSON(t, st, hist, map[string]any{"query": "hunter", "providers": []any{"ctx"}}); strings.Count(got, `"provider":"ctx"`) != 4 {
		t.Errorf("a word at the start of each large entry: %s", got)
	}
	if got := searchJSON(t, st, hist, map[string]any{"query": "tailword", "providers": []any{"ctx"}}); strings.Contains(got, `"key":"blob`) {
		t.Errorf("a word past %d bytes of an entry was searched: %s", maxSearchText, got)
	}
	// The direct read (public-only callers) follows the same rule.
	ctxIndexDisabled = true
	t.Cleanup(func() { ctxIndexDisabled = false })
	if got := searchJSON(t, st, hist, map[string]any{"query": "tailword", "providers": []any{"ctx"}}); strings.Contains(got, `"key":"blob`) {
		t.Errorf("direct read: a word past %d bytes of an entry was searched: %s", maxSearchText, got)
	}
}

// A search whose context is cancelled returns the context's error, not results (a cancelled CLI or
// MCP request stops: docs/mcp.md "search").
func TestCtxSearchCancelled(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli", Session: "s1"})
	largeEntries(t, st, 2, 100<<10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Search(ctx, st, Options{HistoryDir: filepath.Join(t.TempDir(), "history")}, map[string]any{"query": "needle"})
	if err == nil {
		t.Fatal("a cancelled search returned no error")
	}
}
