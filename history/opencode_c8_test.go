//go:build unix

package history

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenCodeListingErrorKept: a database whose sessions discovery could not list is a
// failed source that says why, even when it can be listed by the time it is imported: the import said
// "an OpenCode database source needs a session" (its own listing succeeded, the first error was dropped).
func TestOpenCodeListingErrorKept(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	walDatabase(t, root, false)
	wal := filepath.Join(root, "opencode.db-wal")
	size := fileSize(t, wal)
	if err := os.Truncate(wal, maxProviderWALBytes+1); err != nil {
		t.Fatal(err)
	}
	srcs, err := Discover(ctx, OpenCode, root, false)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("discover: %+v %v", srcs, err)
	}
	if err := os.Truncate(wal, size); err != nil { // readable again when imported
		t.Fatal(err)
	}
	st, err := openTestIndex(t).Import(ctx, srcs)
	if err != nil || st.Failed != 1 || !strings.Contains(st.Results[0].Err, "its -wal is 1073741825 bytes") {
		t.Fatalf("import: %+v %v", st, err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestOpenCodeChangedWhileRead: a database read without SQLite's locks (immutable) that
// a writer changes meanwhile makes SQLite meet pages of two states, "database disk image is malformed":
// the source's error says the database changed while it was read and is read again, not that it is
// corrupt.
func TestOpenCodeChangedWhileRead(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	path := filepath.Join(root, "opencode.db")
	w, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(openCodeTestSchema); err != nil {
		t.Fatal(err)
	}
	w.Close()
	db, err := openProviderDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.stamp == (dbStamp{}) {
		t.Fatal("a rollback-mode database without -journal is not read immutable")
	}
	// The writer: every page past the first (the schema, already read) rewritten.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := int(b[16])<<8 | int(b[17])
	for i := page; i < len(b); i++ {
		b[i] = byte(i*31 + 7)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, raw := openCodeDBFingerprint(ctx, db, "ses_root")
	if raw == nil {
		t.Skip("SQLite read the rewritten pages without an error")
	}
	t.Log("SQLite:", raw)
	if err := db.changedOr(raw); !strings.Contains(err.Error(), "changed while it was read") || strings.Contains(err.Error(), "malformed") {
		t.Fatalf("%v: %v", raw, err)
	}
}

// TestOpenCodeStaleSHMHeaderOnlyWAL: a -wal of its header only beside a -shm an OpenCode
// left is refused with words, not SQLite's "locking protocol (15)", and the folder is left as it was.
func TestOpenCodeStaleSHMHeaderOnlyWAL(t *testing.T) {
	t.Parallel() // SQLite retries the read for 10 s before it gives up
	root := t.TempDir()
	walDatabase(t, root, true)
	if err := os.Truncate(filepath.Join(root, "opencode.db-wal"), 32); err != nil {
		t.Fatal(err)
	}
	before := providerFolder(t, root)
	_, err := openCodeDBSessions(context.Background(), filepath.Join(root, "opencode.db"))
	if err == nil {
		t.Skip("SQLite read it")
	}
	if !strings.Contains(err.Error(), "its -shm does not match its -wal") {
		t.Fatalf("%v", err)
	}
	if after := providerFolder(t, root); len(after) != len(before) {
		t.Fatalf("the folder changed: %v %v", before, after)
	}
}
