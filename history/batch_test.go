package history

import (
	"context"
	"testing"
)

// TestImportTransactionBoundsSameIndex: an import written in transactions of 3 sources and 64 KiB of
// text (many commits, many FTS5 segments) gives the index an import in the default transactions gives:
// the same sessions with the same event counts and roots, the same event ids, the same search hits.
func TestImportTransactionBoundsSameIndex(t *testing.T) {
	ctx := context.Background()
	whole := openTestIndex(t)
	importCorpus(t, whole)

	defer func(s, b int) { batchMaxSources, batchMaxBytes = s, b }(batchMaxSources, batchMaxBytes)
	batchMaxSources, batchMaxBytes = 3, 64<<10
	small := openTestIndex(t)
	st := importCorpus(t, small)
	if st.Imported == 0 || st.Failed != 0 {
		t.Fatalf("import in small transactions: %+v", st)
	}

	rows := func(ix *Index, q string) map[string]string {
		t.Helper()
		r, err := ix.db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		m := map[string]string{}
		for r.Next() {
			var k, v string
			if err := r.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		}
		return m
	}
	for _, q := range []string{
		`SELECT id, event_count || ' ' || root_id || ' ' || scope FROM sessions`,
		`SELECT id, session_id || ' ' || seq || ' ' || type FROM events`,
	} {
		a, b := rows(whole, q), rows(small, q)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: %d rows against %d", q, len(b), len(a))
		}
		for k, v := range a {
			if b[k] != v {
				t.Fatalf("%s: %s is %q in small transactions, %q in one", q, k, b[k], v)
			}
		}
	}
	for _, q := range benchQueries {
		a, err := whole.Search(ctx, Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		b, err := small.Search(ctx, Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Hits) != len(b.Hits) {
			t.Fatalf("search %q: %d hits in small transactions, %d in one", q, len(b.Hits), len(a.Hits))
		}
		for i := range a.Hits {
			x, y := a.Hits[i], b.Hits[i]
			if x.Event.ID != y.Event.ID || x.Score != y.Score || x.More != y.More {
				t.Fatalf("search %q: hit %d is %s (%g, %d more) in small transactions, %s (%g, %d more) in one", q, i,
					y.Event.ID, y.Score, y.More, x.Event.ID, x.Score, x.More)
			}
		}
	}
}

// TestImportSetsFTSHashSize: an import records ftsHashSize in ev_fts's configuration, and an index that
// lacks it (built before the setting) gets it back at its next import that writes.
func TestImportSetsFTSHashSize(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	importCorpus(t, ix)
	hashsize := func() int64 {
		var v int64
		if err := ix.db.QueryRowContext(ctx, `SELECT v FROM ev_fts_config WHERE k='hashsize'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := hashsize(); v != ftsHashSize {
		t.Fatalf("hashsize %d after an import, want %d", v, ftsHashSize)
	}
	if _, err := ix.db.ExecContext(ctx, `DELETE FROM ev_fts_config WHERE k='hashsize'`); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.db.ExecContext(ctx, `UPDATE sources SET parser_rev = 0`); err != nil { // every source is re-imported
		t.Fatal(err)
	}
	if st := importCorpus(t, ix); st.Imported == 0 {
		t.Fatalf("nothing re-imported: %+v", st)
	}
	if v := hashsize(); v != ftsHashSize {
		t.Fatalf("hashsize %d after the next import, want %d", v, ftsHashSize)
	}
}
