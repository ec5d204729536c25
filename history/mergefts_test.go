package history

import (
	"context"
	"testing"
)

// ftsSegments is the number of ev_fts's segments (FTS5 keeps a row of ev_fts_idx per leaf of each).
func ftsSegments(t *testing.T, ix *Index) int {
	t.Helper()
	var n int
	if err := ix.db.QueryRowContext(context.Background(), `SELECT count(DISTINCT segid) FROM ev_fts_idx`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An import that makes most of the index merges the full-text index into one segment; a small one
// after it does not (its segment stays beside); a search finds the same either way.
func TestImportMergesFTSWhenLarge(t *testing.T) {
	ctx := context.Background()
	dir := corpusDir(t)
	var srcs []Source
	for _, p := range Providers {
		s, err := Discover(ctx, p, dir+"/"+string(p), true)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	whole := openTestIndex(t)
	if _, err := whole.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	// The smallest source with events, imported last and alone.
	probe := openTestIndex(t)
	small, fewest := -1, 0
	for i, s := range srcs {
		st, err := probe.Import(ctx, []Source{s})
		if err != nil {
			t.Fatal(err)
		}
		if st.Events > 0 && (small < 0 || st.Events < fewest) {
			small, fewest = i, st.Events
		}
	}
	if small < 0 {
		t.Fatal("no source with events in the corpus")
	}
	rest := append(append([]Source{}, srcs[:small]...), srcs[small+1:]...)
	ix := openTestIndex(t)
	if _, err := ix.Import(ctx, rest); err != nil {
		t.Fatal(err)
	}
	var events int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if fewest*mergeShare >= events {
		t.Fatalf("the smallest source (%d events) is not a small share of %d", fewest, events)
	}
	if n := ftsSegments(t, ix); n != 1 {
		t.Fatalf("after the import of most of the corpus: %d segments, want 1", n)
	}
	st, err := ix.Import(ctx, srcs[small:small+1])
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != fewest {
		t.Fatalf("the small import added %d events, want %d", st.Events, fewest)
	}
	if n := ftsSegments(t, ix); n != 2 {
		t.Fatalf("after a small import: %d segments, want 2 (not merged)", n)
	}
	if n := ftsSegments(t, whole); n != 1 {
		t.Fatalf("after a first import: %d segments, want 1", n)
	}
	// Merged or not, a search finds the same hits with the same scores (the rows and their ids stay).
	queries := []string{"README", "git commit", "the", "error", "apply_patch", "hello function", "zzznomatch"}
	before := make([]Result, len(queries))
	for i, q := range queries {
		if before[i], err = ix.Search(ctx, Query{Text: q, Limit: 50}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.mergeFTS(ctx, ix.db, events); err != nil {
		t.Fatal(err)
	}
	if n := ftsSegments(t, ix); n != 1 {
		t.Fatalf("after mergeFTS of a large share: %d segments, want 1", n)
	}
	for i, q := range queries {
		after, err := ix.Search(ctx, Query{Text: q, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		a, b := before[i], after
		if len(a.Hits) != len(b.Hits) || (q != "zzznomatch" && len(a.Hits) == 0) {
			t.Fatalf("%q: %d hits before the merge, %d after", q, len(a.Hits), len(b.Hits))
		}
		for k := range a.Hits {
			if a.Hits[k].Event.ID != b.Hits[k].Event.ID || a.Hits[k].Score != b.Hits[k].Score || a.Hits[k].More != b.Hits[k].More {
				t.Fatalf("%q: hit %d differs: %s %v / %s %v", q, k, a.Hits[k].Event.ID, a.Hits[k].Score, b.Hits[k].Event.ID, b.Hits[k].Score)
			}
		}
	}
}
