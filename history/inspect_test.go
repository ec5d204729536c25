package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInspectReadsOnly: Inspect reports a missing index without creating anything, a current index's
// version, generation and the time of its last changing import (Freshness the same), and an index of an
// older schema as it is, without rebuilding it (Open would).
func TestInspectReadsOnly(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	if st := Inspect(ctx, dir); st.Exists || st.Err != nil || st.Current() {
		t.Fatalf("missing index: %+v", st)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Inspect created %s: %v", dir, err)
	}
	before := time.Now().Add(-time.Second)
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	importCorpus(t, ix)
	gen, changed, err := ix.Freshness(ctx)
	if err != nil || gen < 1 || changed.Before(before) || changed.After(time.Now().Add(time.Second)) {
		t.Fatalf("Freshness = %d %v %v", gen, changed, err)
	}
	st := Inspect(ctx, dir)
	if !st.Current() || st.SchemaVersion != SchemaVersion || st.Generation != gen || !st.ChangedAt.Equal(changed) {
		t.Fatalf("Inspect = %+v, want version %d, generation %d, changed %v", st, SchemaVersion, gen, changed)
	}
	events, _ := ix.Stats(ctx)
	if _, err := ix.db.ExecContext(ctx, `PRAGMA user_version = 3`); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if st := Inspect(ctx, dir); st.Current() || st.SchemaVersion != 3 || st.Generation != gen {
		t.Fatalf("Inspect of a version 3 index = %+v", st)
	}
	// Inspecting it again finds it unchanged: it was not rebuilt.
	if st := Inspect(ctx, dir); st.SchemaVersion != 3 {
		t.Fatalf("the version 3 index was changed: %+v", st)
	}
	ix, err = Open(ctx, dir) // an import's Open rebuilds it
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if st := Inspect(ctx, dir); !st.Current() || st.Generation <= gen || events.Events == 0 { // moved past gen (nextGenerationSQL)
		t.Fatalf("after Open: %+v", st)
	}
	// A file that is not a database is damaged.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.MkdirAll(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "index.db"), []byte("not a database at all, just text........................................................................................"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := Inspect(ctx, bad); !st.Exists || st.Current() || (!st.Damaged && st.Err == nil) {
		t.Fatalf("Inspect of text = %+v", st)
	}
}
