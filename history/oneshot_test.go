package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
)

// mmapOf is the PRAGMA mmap_size of a connection of ix's pool.
func mmapOf(t *testing.T, ix *Index) int64 {
	t.Helper()
	var n int64
	if err := ix.db.QueryRowContext(context.Background(), `PRAGMA mmap_size`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOpenOneShotSearchesAlike: the same index opened by OpenOneShot (the whole file mapped, as a CLI
// search opens it) and by Open (a server's bounded map) gives the same search results, byte for byte
// in JSON, for common and rare words, every scope, dense and grouped, with and without a filter; the
// one-shot map is SQLite's cap (above Open's), and an import through a one-shot index (which writes
// without the map) gives its connection that map back.
func TestOpenOneShotSearchesAlike(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	one, err := OpenOneShot(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	importCorpus(t, one)
	var conns []*sql.Conn // every idle connection of the pool, the import's among them, at once
	for range 4 {
		c, err := one.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var got int64
		if err := c.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got <= mmapSize {
			t.Fatalf("OpenOneShot after an import: a connection's mmap_size is %d, want more than Open's %d", got, mmapSize)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := mmapOf(t, ix); got != mmapSize {
		t.Fatalf("Open: mmap_size %d, want %d", got, mmapSize)
	}
	compared := 0
	for _, text := range []string{"the", "error", "test", "git commit", "README", "npm run build", "apply_patch", "zzznomatch", "session meta"} {
		for _, q := range []Query{
			{Text: text}, {Text: text, Scope: ScopeTranscript}, {Text: text, Scope: ScopeCalls}, {Text: text, Scope: ScopeOutputs},
			{Text: text, Dense: true, Limit: 50}, {Text: text, Providers: []Provider{ClaudeCode, Codex}, Limit: 50},
		} {
			a, err := ix.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			b, err := one.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Errorf("%+v: Open and OpenOneShot differ:\n%s\n%s", q, ja, jb)
			}
			compared += len(a.Hits)
		}
	}
	if compared == 0 {
		t.Fatal("no hit compared")
	}
}
