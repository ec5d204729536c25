package history

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestImportKilledMidTransaction: a `ctx history import` process killed (SIGKILL) in the middle of a
// write transaction, after earlier transactions committed, leaves an index that SQLite finds intact and
// that holds only whole sources; the next import completes it to exactly what an uninterrupted import
// gives (the same events, ids and sources), and a third one has nothing to do.
func TestImportKilledMidTransaction(t *testing.T) {
	if dir := os.Getenv("CTX_TEST_CRASH_INDEX"); dir != "" {
		crashChild(t, dir)
		return
	}
	corpusDir(t) // skip without the corpus
	dir := filepath.Join(t.TempDir(), "history")
	marker := filepath.Join(t.TempDir(), "marker")
	cmd := exec.Command(os.Args[0], "-test.run=^TestImportKilledMidTransaction$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CTX_TEST_CRASH_INDEX="+dir, "CTX_TEST_CRASH_MARKER="+marker)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the importing child never reached its third transaction")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	ctx := context.Background()
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var check string
	if err := ix.db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check after the kill: %q %v", check, err)
	}
	partial, _ := ix.Stats(ctx)
	// Every recorded source has its session's events: transactions hold whole sources.
	var orphans int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sources s WHERE s.session_id != '' AND s.offset > 0
		AND NOT EXISTS (SELECT 1 FROM sessions WHERE id = s.session_id)`).Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("%d recorded sources without their session (%v)", orphans, err)
	}

	clean := openTestIndex(t)
	importCorpus(t, clean)
	want, _ := clean.Stats(ctx)
	if partial.Sources == 0 || partial.Sources >= want.Sources {
		t.Fatalf("the kill left %d of %d sources: not in the middle", partial.Sources, want.Sources)
	}
	st := importCorpus(t, ix)
	if st.Unchanged != partial.Sources || st.Imported != want.Sources-partial.Sources {
		t.Fatalf("completing import: %d unchanged, %d imported; want %d and %d", st.Unchanged, st.Imported, partial.Sources, want.Sources-partial.Sources)
	}
	got, _ := ix.Stats(ctx)
	if got.Sources != want.Sources || got.Sessions != want.Sessions || got.Events != want.Events {
		t.Fatalf("after the completing import %+v, want %+v", got, want)
	}
	ids := func(ix *Index) map[string]bool {
		rows, err := ix.db.QueryContext(ctx, `SELECT id FROM events`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			m[id] = true
		}
		return m
	}
	a, b := ids(ix), ids(clean)
	for id := range b {
		if !a[id] {
			t.Fatalf("event %s missing after the completing import", id)
		}
	}
	if again := importCorpus(t, ix); again.Unchanged != again.Sources {
		t.Fatalf("third import: %+v", again)
	}
}

// crashChild imports the corpus in transactions of 4 sources and, inside the third transaction, writes
// the marker and waits to be killed.
func crashChild(t *testing.T, dir string) {
	batchMaxSources = 4
	n := 0
	testHookWritten = func() {
		n++
		if n == 2*batchMaxSources+2 {
			if err := os.WriteFile(os.Getenv("CTX_TEST_CRASH_MARKER"), []byte(strconv.Itoa(n)), 0o600); err != nil {
				panic(err)
			}
			time.Sleep(time.Minute) // killed here
		}
	}
	ix, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	importCorpus(t, ix)
	t.Fatal("the child's import finished: it should have been killed")
}
