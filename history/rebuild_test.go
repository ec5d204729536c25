package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRebuiltIndexNewGeneration: an index removed and imported again (what `ctx history import` does
// with a damaged one) never repeats a generation of the index it replaces, so that a cursor bound to
// the old one is stale (docs/history.md "The index"); and an Index open on the old file says it was
// replaced, while a file rewritten in place or imported into again is not.
func TestRebuiltIndexNewGeneration(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	root := t.TempDir()
	src := writeClaude(t, root, "-a", "s1", rec("u1", "user", "/w", `"first words"`))
	build := func() (*Index, int64) {
		t.Helper()
		ix, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Import(ctx, []Source{src}); err != nil {
			t.Fatal(err)
		}
		gen, err := ix.Generation(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ix, gen
	}
	old, gen1 := build()
	defer old.Close()
	if old.Replaced() {
		t.Fatal("a freshly opened index says it was replaced")
	}
	// Another import into the same file moves the generation on; the file is the same.
	writeClaude(t, root, "-a", "s1", rec("u1", "user", "/w", `"first words"`), rec("u2", "user", "/w", `"more"`))
	other, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	gen2, err := old.Generation(ctx)
	if err != nil || gen2 <= gen1 {
		t.Fatalf("generation after a second import %d (%v), before %d", gen2, err, gen1)
	}
	if old.Replaced() {
		t.Fatal("an import into the same file reads as a replaced index")
	}

	for _, f := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if !old.Replaced() {
		t.Error("a removed index does not read as replaced")
	}
	rebuilt, gen3 := build()
	defer rebuilt.Close()
	if gen3 <= gen2 {
		t.Errorf("the rebuilt index's generation is %d, the removed one's was %d: a cursor of the old one would "+
			"be taken for the new", gen3, gen2)
	}
	if !old.Replaced() || rebuilt.Replaced() {
		t.Errorf("replaced: the old Index %v, the new one %v", old.Replaced(), rebuilt.Replaced())
	}
}

// TestNULSeparatesWords: an escaped NUL in a transcript's text becomes U+FFFD, never nothing: the words on
// both sides stay two words, each found by search (docs/history.md "Events").
func TestNULSeparatesWords(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	src := writeClaude(t, t.TempDir(), "-a", "s1", rec("u1", "user", "/w", `"alpha\u0000bravo charlie"`))
	if _, err := ix.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"alpha", "bravo", "charlie"} {
		res, err := ix.Search(ctx, Query{Text: w})
		if err != nil || len(res.Hits) != 1 {
			t.Fatalf("search %s: %d hits, %v", w, len(res.Hits), err)
		}
		if got := res.Hits[0].Event.Text; got != "alpha\uFFFDbravo charlie" {
			t.Errorf("text %q", got)
		}
	}
}
