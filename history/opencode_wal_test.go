//go:build unix

package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// providerFile is what a provider's file is: its bytes' hash, size, mtime, inode, link count and ctime.
type providerFile struct {
	hash                         [32]byte
	size, mtime, ino, nlink, ctm int64
}

// providerFolder reads every file of dir (and the extra files named), as providerFile by name.
func providerFolder(t *testing.T, dir string, extra ...string) map[string]providerFile {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := extra
	for _, e := range ents {
		names = append(names, filepath.Join(dir, e.Name()))
	}
	out := map[string]providerFile{}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		f := providerFile{hash: sha256.Sum256(b), size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: int64(st.Ino), nlink: int64(st.Nlink)} //nolint:gosec // compared only
		// SQLite run as root fchowns the -wal and -shm it opens to their owner, which moves their ctime
		// only (docs/history.md "OpenCode"): as root, their ctime is not compared.
		if os.Geteuid() != 0 || !(strings.HasSuffix(name, "-wal") || strings.HasSuffix(name, "-shm") || slices.Contains(extra, name)) {
			f.ctm = st.Ctim.Nano()
		}
		out[name] = f
	}
	return out
}

// walDatabase writes a WAL-mode opencode.db whose last commit (the part "numbat in the wal") is only in
// its -wal, and copies it into dir as a copied root would hold it: opencode.db and opencode.db-wal, and
// with shm the -shm its writer left.
func walDatabase(t *testing.T, dir string, shm bool) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "opencode.db")
	w, err := sql.Open("sqlite", "file:"+src+"?_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec("PRAGMA journal_mode=WAL;" + openCodeTestSchema +
		`INSERT INTO part VALUES ('prt_6','msg_3','ses_child',1755000180000,1755000180000,'{"type":"text","text":"numbat in the wal"}')`); err != nil {
		t.Fatal(err)
	}
	suffixes := []string{"", "-wal"}
	if shm {
		suffixes = append(suffixes, "-shm")
	}
	for _, suffix := range suffixes {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "opencode.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// importNumbat imports the OpenCode database in root twice and checks that the -wal's commit was read.
func importNumbat(t *testing.T, root string) {
	t.Helper()
	ctx := context.Background()
	ix := openTestIndex(t)
	for i := 0; i < 2; i++ {
		srcs, err := Discover(ctx, OpenCode, root, false)
		if err != nil || len(srcs) != 2 {
			t.Fatalf("discover: %+v %v", srcs, err)
		}
		if st, err := ix.Import(ctx, srcs); err != nil || st.Failed != 0 || st.Imported+st.Unchanged != 2 {
			t.Fatalf("import %d: %+v %v", i+1, st, err)
		}
	}
	res, err := ix.Search(ctx, Query{Text: "numbat", Providers: []Provider{OpenCode}})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("the -wal's commit was not read: %+v %v", res.Hits, err)
	}
}

// TestOpenCodeProviderFolderUntouched: importing a WAL-mode opencode.db reads its -wal's
// commits and writes nothing in OpenCode's folder: every file there (and the file a hard-linked -shm
// shares its bytes with) has the same bytes, size, mtime, inode and link count after two imports. SQLite,
// as the first connection to a -shm, truncated and initialised it: a -shm hard-linked to a user's file
// destroyed that file, a writer's stale -shm was rewritten.
func TestOpenCodeProviderFolderUntouched(t *testing.T) {
	t.Run("hard-linked -shm", func(t *testing.T) {
		root := t.TempDir()
		walDatabase(t, root, false)
		victim := filepath.Join(t.TempDir(), "victim.txt")
		if err := os.WriteFile(victim, []byte(strings.Repeat("precious user data\n", 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(victim, filepath.Join(root, "opencode.db-shm")); err != nil {
			t.Skip("no hard links here:", err)
		}
		before := providerFolder(t, root, victim)
		importNumbat(t, root)
		if after := providerFolder(t, root, victim); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("the import changed OpenCode's folder:\n%v\n%v", before, after)
		}
	})
	t.Run("stale -shm", func(t *testing.T) {
		root := t.TempDir()
		walDatabase(t, root, true)
		before := providerFolder(t, root)
		importNumbat(t, root)
		if after := providerFolder(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("the import changed OpenCode's folder:\n%v\n%v", before, after)
		}
	})
	t.Run("no -shm", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		root := t.TempDir()
		walDatabase(t, root, false)
		before := providerFolder(t, root)
		importNumbat(t, root)
		if after := providerFolder(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("the import changed OpenCode's folder:\n%v\n%v", before, after)
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Fatalf("the import wrote into $TMPDIR: %v", ents)
		}
	})
	t.Run("WAL database and a -journal", func(t *testing.T) {
		// Read with SQLite's locks, not immutable, a WAL-mode database with no -wal but a -journal made
		// SQLite create opencode.db-wal and -shm beside it.
		root := t.TempDir()
		db := walModeDatabase(t, root)
		if err := os.WriteFile(db+"-journal", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		before := providerFolder(t, root)
		srcs, err := Discover(context.Background(), OpenCode, root, false)
		if err != nil || len(srcs) != 2 {
			t.Fatalf("discover: %+v %v", srcs, err)
		}
		if st, err := openTestIndex(t).Import(context.Background(), srcs); err != nil || st.Imported != 2 {
			t.Fatalf("import: %+v %v", st, err)
		}
		if after := providerFolder(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("the import changed OpenCode's folder:\n%v\n%v", before, after)
		}
	})
	t.Run("live writer", func(t *testing.T) {
		// OpenCode running: another process holds the database open, with a commit in its -wal.
		root := t.TempDir()
		db := walModeDatabase(t, root)
		ready := filepath.Join(t.TempDir(), "ready")
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenCodeWriterChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CTX_TEST_OC_WRITER="+db, "CTX_TEST_OC_READY="+ready)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { stdin.Close(); _ = cmd.Wait() }()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the writer never committed")
			}
		}
		before := providerFolder(t, root)
		importNumbat(t, root)
		if after := providerFolder(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("the import changed OpenCode's folder while OpenCode ran:\n%v\n%v", before, after)
		}
	})
}

// TestOpenCodeWriterChild is the OpenCode of TestOpenCodeProviderFolderUntouched: it commits a part to the
// database it is given, keeps it open (the commit in the -wal) and exits when its standard input closes.
func TestOpenCodeWriterChild(t *testing.T) {
	db := os.Getenv("CTX_TEST_OC_WRITER")
	if db == "" {
		t.Skip("run by TestOpenCodeProviderFolderUntouched")
	}
	w, err := sql.Open("sqlite", "file:"+db+"?_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`INSERT INTO part VALUES ('prt_6','msg_3','ses_child',1755000180000,1755000180000,'{"type":"text","text":"numbat in the wal"}')`); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("CTX_TEST_OC_READY"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _ = os.Stdin.Read(make([]byte, 1))
	w.Close()
}

// TestOpenCodeWALBounds: a -wal larger than maxProviderWALBytes (a sparse file of a copied
// root) fails its source at once with an error that says so, without reading or copying it; an empty
// database beside a -wal (whose -wal SQLite would delete) fails too, the -wal kept; and a database read
// without SQLite's locks that changes while it is read fails its source, read again by the next import.
func TestOpenCodeWALBounds(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	root := t.TempDir()
	walDatabase(t, root, false)
	wal := filepath.Join(root, "opencode.db-wal")
	if err := os.Truncate(wal, maxProviderWALBytes+1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	srcs, err := Discover(ctx, OpenCode, root, false)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("discover: %+v %v", srcs, err)
	}
	ix := openTestIndex(t)
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Failed != 1 || !strings.Contains(st.Results[0].Err, "its -wal is 1073741825 bytes, more than the 1024 MiB ctx reads") {
		t.Fatalf("import of a database with a huge -wal: %+v %v", st, err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("the import wrote into $TMPDIR: %v", ents)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Logf("slow: %v", d) // not asserted: the machine may be loaded
	}

	empty := t.TempDir()
	walDatabase(t, empty, false)
	if err := os.Truncate(filepath.Join(empty, "opencode.db"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := openProviderDB(ctx, filepath.Join(empty, "opencode.db")); err == nil || !strings.Contains(err.Error(), "an empty file beside a -wal") {
		t.Fatalf("an empty database beside a -wal: %v", err)
	}
	if _, err := os.Stat(filepath.Join(empty, "opencode.db-wal")); err != nil {
		t.Fatalf("the -wal: %v", err)
	}

	moving := t.TempDir()
	walDatabase(t, moving, false)
	db, err := openProviderDB(ctx, filepath.Join(moving, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.unchanged(); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(filepath.Join(moving, "opencode.db-wal"), later, later); err != nil {
		t.Fatal(err)
	}
	if err := db.unchanged(); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("a -wal that moved while read: %v", err)
	}
}

// TestStaleProviderCopiesRemoved: the private copies an earlier ctx left in $TMPDIR when it
// was killed are removed once they are an hour old; a recent one (an earlier ctx may still read it) and a
// folder holding anything else are kept.
func TestStaleProviderCopiesRemoved(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	mk := func(name string, files []string, at time.Time) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(dir, f)
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, at, at); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, at, at); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stale := mk("ctx-provider-db-1", []string{"provider.db", "provider.db-wal"}, old)
	recent := mk("ctx-provider-db-2", []string{"provider.db", "provider.db-wal"}, time.Now())
	other := mk("ctx-provider-db-3", []string{"provider.db", "notes.txt"}, old)
	before := time.Now().Add(-time.Hour)
	if !staleProviderCopy(stale, before) || staleProviderCopy(recent, before) || staleProviderCopy(other, before) {
		t.Fatal("staleProviderCopy")
	}
	t.Setenv("TMPDIR", tmp)
	staleCopiesOnce = sync.Once{}
	removeStaleProviderCopies()
	for dir, want := range map[string]bool{stale: false, recent: true, other: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s kept %v, want %v", dir, err == nil, want)
		}
	}
}

// walModeDatabase creates OpenCode's database in root in WAL mode, with the test schema and no rows, and
// closes it (SQLite removes its -wal and -shm): its path.
func walModeDatabase(t *testing.T, root string) string {
	t.Helper()
	db := filepath.Join(root, "opencode.db")
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec("PRAGMA journal_mode=WAL;" + openCodeTestSchema); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestOpenCodeInvalidWALKept: a WAL-mode opencode.db beside a -wal that holds no valid
// frame (garbage, or a 32-byte header only) and no -shm is read from the database alone, and nothing in
// OpenCode's folder changes: listing its sessions (ctx history sources) and importing it. SQLite, reading it
// without locks in exclusive mode, found the -wal held nothing, checkpointed nothing and unlinked it.
func TestOpenCodeInvalidWALKept(t *testing.T) {
	ctx := context.Background()
	valid := filepath.Join(t.TempDir(), "valid.db")
	walDatabase(t, filepath.Dir(valid), false)
	header, err := os.ReadFile(filepath.Join(filepath.Dir(valid), "opencode.db-wal"))
	if err != nil || len(header) < 32 {
		t.Fatalf("the -wal: %d bytes, %v", len(header), err)
	}
	garbage := make([]byte, 5000)
	for i := range garbage {
		garbage[i] = byte(i*7 + i/13)
	}
	for name, wal := range map[string][]byte{"garbage": garbage, "header only": header[:32]} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			db := filepath.Join(root, "opencode.db")
			w, err := sql.Open("sqlite", "file:"+db)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Exec("PRAGMA journal_mode=WAL;" + openCodeTestSchema); err != nil {
				t.Fatal(err)
			}
			w.Close() // checkpointed: the database holds everything, its -wal is gone
			if err := os.WriteFile(db+"-wal", wal, 0o600); err != nil {
				t.Fatal(err)
			}
			before := providerFolder(t, root)
			if srcs, err := openCodeDBSessions(ctx, db); err != nil || len(srcs) != 2 {
				t.Fatalf("sessions: %+v %v", srcs, err)
			}
			if after := providerFolder(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("listing the sessions changed OpenCode's folder:\n%v\n%v", before, after)
			}
			srcs, err := Discover(ctx, OpenCode, root, false)
			if err != nil || len(srcs) != 2 {
				t.Fatalf("discover: %+v %v", srcs, err)
			}
			if st, err := openTestIndex(t).Import(ctx, srcs); err != nil || st.Imported != 2 {
				t.Fatalf("import: %+v %v", st, err)
			}
			if after := providerFolder(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("the import changed OpenCode's folder:\n%v\n%v", before, after)
			}
		})
	}
}
