package history

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

func pageSize(t *testing.T, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (size int, mode string) {
	t.Helper()
	ctx := context.Background()
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return size, mode
}

// A new index file is created with indexPageSize pages in WAL mode; an index file created with
// SQLite's default pages (an earlier ctx's) keeps them, and is opened, imported into and searched as
// before.
func TestIndexPageSize(t *testing.T) {
	ix := openTestIndex(t)
	if size, mode := pageSize(t, ix.db); size != indexPageSize || mode != "wal" {
		t.Fatalf("a new index: page size %d, journal mode %s; want %d and wal", size, mode, indexPageSize)
	}
	importCorpus(t, ix)
	if size, _ := pageSize(t, ix.db); size != indexPageSize {
		t.Fatalf("after an import: page size %d, want %d", size, indexPageSize)
	}

	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "index.db")+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `CREATE TABLE t(a); DROP TABLE t`); err != nil {
		t.Fatal(err)
	}
	if size, mode := pageSize(t, old); size != 4096 || mode != "wal" {
		t.Fatalf("SQLite's default: page size %d, journal mode %s", size, mode)
	}
	old.Close()
	prev, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer prev.Close()
	if size, _ := pageSize(t, prev.db); size != 4096 {
		t.Fatalf("an index of 4096-byte pages opened: page size %d", size)
	}
	importCorpus(t, prev)
	if size, _ := pageSize(t, prev.db); size != 4096 {
		t.Fatalf("an index of 4096-byte pages after an import: page size %d", size)
	}
	for _, q := range []string{"README", "error", "apply_patch"} {
		a, err := ix.Search(ctx, Query{Text: q, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		b, err := prev.Search(ctx, Query{Text: q, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Hits) == 0 || len(a.Hits) != len(b.Hits) {
			t.Fatalf("%q: %d hits, %d in the index of 4096-byte pages", q, len(a.Hits), len(b.Hits))
		}
		for k := range a.Hits {
			if a.Hits[k].Event.ID != b.Hits[k].Event.ID || a.Hits[k].Score != b.Hits[k].Score {
				t.Fatalf("%q: hit %d differs: %s %v / %s %v", q, k, a.Hits[k].Event.ID, a.Hits[k].Score, b.Hits[k].Event.ID, b.Hits[k].Score)
			}
		}
	}
}
