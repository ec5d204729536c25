package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRefreshStatPath: an import of many sources tells unchanged append-only logs by lstat alone, and
// still sees every change lstat shows: an append, a touch (recorded, nothing added), a log replaced by a
// symbolic link to a copy of it (failed, never followed), a removed file (failed), a new file.
func TestRefreshStatPath(t *testing.T) {
	withBulkState(t)
	corpus := corpusDir(t)
	ctx := context.Background()
	ix := openTestIndex(t)
	dir := t.TempDir()
	turn1 := filepath.Join(corpus, "codex/codemie-incremental", "turn-1.jsonl")
	turn2 := filepath.Join(corpus, "codex/codemie-incremental", "turn-2.jsonl")
	names := []string{"grow", "touch", "link", "gone", "same"}
	var srcs []Source
	for i, n := range names {
		p := filepath.Join(dir, "sessions", n, "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-00000000000"+string(rune('1'+i))+".jsonl")
		copyFile(t, turn1, p)
		srcs = append(srcs, Source{Provider: Codex, Format: FormatCodex, Path: p})
	}
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Imported != len(srcs) {
		t.Fatalf("first import: %+v %v", st, err)
	}
	st, err = ix.Import(ctx, srcs)
	if err != nil || st.Unchanged != len(srcs) {
		t.Fatalf("second import: %+v %v", st, err)
	}

	copyFile(t, turn2, srcs[0].Path) // grow
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(srcs[1].Path, later, later); err != nil { // touch
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "copy.jsonl")
	copyFile(t, srcs[2].Path, cp)
	fi, _ := os.Stat(srcs[2].Path)
	if err := os.Remove(srcs[2].Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cp, srcs[2].Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(cp, fi.ModTime(), fi.ModTime()); err != nil { // same size and mtime as recorded
		t.Fatal(err)
	}
	if err := os.Remove(srcs[3].Path); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "sessions", "new", "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000009.jsonl")
	copyFile(t, turn1, fresh)
	srcs = append(srcs, Source{Provider: Codex, Format: FormatCodex, Path: fresh})

	st, err = ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"appended", "unchanged", "failed", "failed", "unchanged", "imported"}
	for i, r := range st.Results {
		if r.Action != want[i] {
			t.Errorf("%s: %s (%s), want %s", filepath.Base(filepath.Dir(r.Source.Path)), r.Action, r.Err, want[i])
		}
	}
	if st.Results[0].Events == 0 {
		t.Error("the append added no event")
	}
	// The touch was recorded: the next import finds it unchanged by lstat.
	row, err := ix.loadSource(ctx, srcs[1].key())
	if err != nil || row == nil || row.mtime != later.UnixNano() {
		t.Fatalf("touched source: %+v %v", row, err)
	}
}

// TestOpenRebuildsVersion3: an index of schema version 3 (ev_fts rowids without the body's length) is
// emptied by Open (its generation bumped) and rebuilt by the next import, which ranks as before.
func TestOpenRebuildsVersion3(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	importCorpus(t, ix)
	before, _ := ix.Stats(ctx)
	gen, _ := ix.Generation(ctx)
	queries := []string{"error", "session meta", "the"}
	var want []Result
	for _, q := range queries {
		res, err := ix.Search(ctx, Query{Text: q, Limit: 50})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("%s: %+v %v", q, res, err)
		}
		want = append(want, res)
	}
	if _, err := ix.db.ExecContext(ctx, `PRAGMA user_version = 3`); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var v int
	if err := ix.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version %d %v", v, err)
	}
	emptied, _ := ix.Stats(ctx)
	gen2, _ := ix.Generation(ctx)
	if emptied.Events != 0 || emptied.Sources != 0 || gen2 <= gen { // moved past gen (nextGenerationSQL)
		t.Fatalf("after Open of a version 3 index: %+v gen %d, was gen %d", emptied, gen2, gen)
	}
	importCorpus(t, ix)
	after, _ := ix.Stats(ctx)
	if after.Events != before.Events || after.Sources != before.Sources {
		t.Fatalf("rebuilt: %+v, was %+v", after, before)
	}
	for i, q := range queries {
		res, err := ix.Search(ctx, Query{Text: q, Limit: 50})
		if err != nil || len(res.Hits) != len(want[i].Hits) {
			t.Fatalf("%s after the rebuild: %d hits, was %d (%v)", q, len(res.Hits), len(want[i].Hits), err)
		}
		for j, h := range res.Hits {
			if w := want[i].Hits[j]; h.Event.ID != w.Event.ID || h.Score != w.Score {
				t.Errorf("%s, hit %d: %s %v, was %s %v", q, j, h.Event.ID, h.Score, w.Event.ID, w.Score)
			}
		}
	}
}
