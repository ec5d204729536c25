package history

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// editKeepingStat replaces old by new (the same length) in place in the file at path, then sets its
// mtime back as `touch -r` does: size and mtime are as they were, only the ctime moved.
func editKeepingStat(t *testing.T, path, old, new string) {
	t.Helper()
	ref := path + ".ref"
	touch := func(from, to string) {
		t.Helper()
		if out, err := exec.Command("touch", "-r", from, to).CombinedOutput(); err != nil {
			t.Fatalf("touch -r: %v: %s", err, out)
		}
	}
	touch(path, ref)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), old)
	if i < 0 || len(old) != len(new) {
		t.Fatalf("%s: no %q to replace by %q", path, old, new)
	}
	before, _ := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(new), int64(i)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	touch(ref, path)
	if err := os.Remove(ref); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) || !os.SameFile(before, after) {
		t.Fatalf("the edit moved the size or mtime, or replaced the file")
	}
}

// TestSameStatEditSeen: a transcript edited in place without changing its size, its mtime set back
// (touch -r), is read again by the next import: the ctime (and inode) recorded with the source tell it
// changed, as git's index does. An append-only log (Claude) and a whole-file source (Gemini's JSON).
func TestSameStatEditSeen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ctime and inode are recorded on Linux")
	}
	if _, err := exec.LookPath("touch"); err != nil {
		t.Skip("no touch")
	}
	ctx := context.Background()
	root := t.TempDir()
	claude := writeClaude(t, root, "claude/-p", "sess-stat", rec("u1", "user", "/w", `"the kumquat harvest"`), rec("u2", "user", "/w", `"second line"`))
	gem := filepath.Join(root, "gemini", "abc", "chats", "session-2026-01-01T00-00-stat.json")
	if err := os.MkdirAll(filepath.Dir(gem), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gem, []byte(`{"kind":"chat","startTime":"2026-01-01T00:00:00.000Z","sessionId":"gem-stat","messages":[{"id":"m1","timestamp":"2026-01-01T00:00:01.000Z","type":"user","content":"a loquat tree"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	imp := func() ImportStats {
		t.Helper()
		cs, err := Discover(ctx, ClaudeCode, filepath.Join(root, "claude"), true)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := Discover(ctx, GeminiCLI, filepath.Join(root, "gemini"), true)
		if err != nil {
			t.Fatal(err)
		}
		st, err := ix.Import(ctx, append(cs, gs...))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	hits := func(word string) int {
		t.Helper()
		res, err := ix.Search(ctx, Query{Text: word})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Hits)
	}
	imp()
	if st := imp(); st.Unchanged != 2 {
		t.Fatalf("second import: %+v, want both unchanged", st)
	}
	editKeepingStat(t, claude.Path, "kumquat", "rhubarb")
	editKeepingStat(t, gem, "loquat", "durian")
	st := imp()
	if st.Unchanged != 0 {
		t.Errorf("after same-size edits with the mtime set back: %+v, want both read again", st)
	}
	for word, want := range map[string]int{"kumquat": 0, "rhubarb": 1, "loquat": 0, "durian": 1} {
		if got := hits(word); got != want {
			t.Errorf("%s: %d hits, want %d", word, got, want)
		}
	}
	if st := imp(); st.Unchanged != 2 {
		t.Errorf("import after: %+v, want both unchanged", st)
	}
}

// TestStatColumnsMigration: an index of schema 6 (sources without ctime and ino) is brought to 7 in place
// when opened: its rows and generation kept, the columns added (0) and the covering index rebuilt with
// them; the next import finds the files unchanged (their bytes are) and records their stat, and an edit
// that keeps size and mtime is seen after.
func TestStatColumnsMigration(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ctime and inode are recorded on Linux")
	}
	ctx := context.Background()
	root := t.TempDir()
	claude := writeClaude(t, root, "-p", "sess-mig", rec("u1", "user", "/w", `"the kumquat harvest"`))
	dir := filepath.Join(t.TempDir(), "history")
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	imp := func() ImportStats {
		t.Helper()
		srcs, err := Discover(ctx, ClaudeCode, root, true)
		if err != nil {
			t.Fatal(err)
		}
		st, err := ix.Import(ctx, srcs)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	imp()
	for _, q := range []string{`DROP INDEX sources_stamp`, `ALTER TABLE sources DROP COLUMN ctime`, `ALTER TABLE sources DROP COLUMN ino`,
		`CREATE INDEX sources_stamp ON sources(path, format, parser_rev, size, mtime, offset, session_id)`, `PRAGMA user_version = 6`} {
		if _, err := ix.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	gen, _ := ix.Generation(ctx)
	ix.Close()
	if ix, err = Open(ctx, dir); err != nil {
		t.Fatal(err)
	}
	defer func() { ix.Close() }()
	if gen2, _ := ix.Generation(ctx); gen2 != gen {
		t.Errorf("the migration moved the generation: %d, was %d", gen2, gen)
	}
	var ctime, ino int64
	if err := ix.db.QueryRowContext(ctx, `SELECT ctime, ino FROM sources WHERE path = ?`, claude.Path).Scan(&ctime, &ino); err != nil || ctime != 0 || ino != 0 {
		t.Fatalf("migrated row: ctime %d ino %d %v", ctime, ino, err)
	}
	rows, err := ix.db.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT path, format, parser_rev, size, mtime, ctime, ino, offset, session_id FROM sources ORDER BY path`)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	rows.Close()
	if p := strings.Join(plan, "; "); !strings.Contains(p, "COVERING INDEX sources_stamp") {
		t.Errorf("loadSources' query is not covered by sources_stamp: %s", p)
	}
	if st := imp(); st.Unchanged != 1 || st.Events != 0 {
		t.Errorf("first import after the migration: %+v, want unchanged", st)
	}
	if err := ix.db.QueryRowContext(ctx, `SELECT ctime, ino FROM sources WHERE path = ?`, claude.Path).Scan(&ctime, &ino); err != nil || ctime == 0 || ino == 0 {
		t.Errorf("stat not recorded: ctime %d ino %d %v", ctime, ino, err)
	}
	editKeepingStat(t, claude.Path, "kumquat", "rhubarb")
	if st := imp(); st.Unchanged != 0 {
		t.Errorf("after a same-size edit: %+v, want it read again", st)
	}
}
