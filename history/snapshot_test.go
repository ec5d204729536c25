package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// checkKnownMatches fails unless loadKnown's answer for ask is, source by source, loadSource's (the
// columns the bulk read carries), nil for a source never imported, and a row of its own for each.
func checkKnownMatches(t *testing.T, ix *Index, ask []Source) {
	t.Helper()
	ctx := context.Background()
	got, _, err := ix.loadKnown(ctx, ask)
	if err != nil || len(got) != len(ask) {
		t.Fatalf("loadKnown: %d rows, %v", len(got), err)
	}
	for i, s := range ask {
		want, err := ix.loadSource(ctx, s.key())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == nil && got[i] == nil:
		case want == nil || got[i] == nil:
			t.Errorf("%s: got %+v, want %+v", s.Path, got[i], want)
		case !got[i].partial || got[i].format != want.format || got[i].rev != want.rev || got[i].size != want.size ||
			got[i].mtime != want.mtime || got[i].offset != want.offset || got[i].sessionID != want.sessionID || want.sessionID == "":
			t.Errorf("%s: got %+v, want %+v", s.Path, got[i], want)
		}
		for j := range i {
			if got[i] != nil && got[i] == got[j] {
				t.Errorf("sources %d and %d share a row", j, i)
			}
		}
	}
}

// TestSnapshotMatchesSources: the source snapshot is packed by an import of many sources; what a
// refresh reads from it (with the rows changed since, through the triggers: appended, re-imported,
// deleted, new) is what sources holds; after an import that changes more rows than snapRepackLimit it
// is packed again (no changed rows left); a snapshot whose triggers were dropped, of another version or
// malformed is not read (the refresh reads sources, and the next import packs a new one).
func TestSnapshotMatchesSources(t *testing.T) {
	withBulkState(t)
	oldMin := snapRepackMin
	snapRepackMin = 3
	t.Cleanup(func() { snapRepackMin = oldMin })
	corpus := corpusDir(t)
	ctx := context.Background()
	ix := openTestIndex(t)
	dir := t.TempDir()
	var srcs []Source
	for i := range 8 {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%3), fmt.Sprintf("rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-00000000000%d.jsonl", i))
		copyFile(t, filepath.Join(corpus, "codex/codemie-incremental", "turn-1.jsonl"), p)
		srcs = append(srcs, Source{Provider: Codex, Format: FormatCodex, Path: p})
	}
	if st, err := ix.Import(ctx, srcs[:6]); err != nil || st.Imported != 6 {
		t.Fatalf("import: %+v %v", st, err)
	}
	dirtyRows := func() int {
		t.Helper()
		var n int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sources_dirty`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, _, ok := ix.readSnapshot(ctx); !ok || dirtyRows() != 0 {
		t.Fatalf("no snapshot packed after the first import (%d changed rows)", dirtyRows())
	}
	missing := Source{Provider: Codex, Format: FormatCodex, Path: filepath.Join(dir, "zz.jsonl")}
	ask := append([]Source{srcs[5], missing, srcs[2]}, append(srcs, srcs[2])...)
	checkKnownMatches(t, ix, ask)

	// Changes the snapshot does not hold: srcs[0] appended, srcs[1] deleted from sources by hand, srcs[6]
	// new. Three changed rows: not above the limit, so the snapshot is kept and its changes read.
	copyFile(t, filepath.Join(corpus, "codex/codemie-incremental", "turn-2.jsonl"), srcs[0].Path)
	if st, err := ix.Import(ctx, []Source{srcs[0], srcs[6]}); err != nil || st.Appended+st.Imported != 2 {
		t.Fatalf("import: %+v %v", st, err)
	}
	if _, err := ix.db.ExecContext(ctx, `DELETE FROM sources WHERE path = ?`, srcs[1].key()); err != nil {
		t.Fatal(err)
	}
	if n := dirtyRows(); n != 3 {
		t.Fatalf("%d changed rows, want 3", n)
	}
	checkKnownMatches(t, ix, ask)
	if _, repack, _ := ix.loadKnown(ctx, ask); repack {
		t.Errorf("repack asked with 3 changed rows (limit %d)", snapRepackLimit(len(ask)))
	}

	// An import that changes more rows than the limit packs it again.
	for _, s := range srcs[2:5] {
		if err := os.Chtimes(s.Path, mustMtime(t, s.Path).Add(5e9), mustMtime(t, s.Path).Add(5e9)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ix.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	if n := dirtyRows(); n != 0 {
		t.Errorf("%d changed rows after an import that changed 5: the snapshot was not packed again", n)
	}
	checkKnownMatches(t, ix, ask)

	// Damaged or outdated snapshots are not read.
	for name, damage := range map[string]string{
		"triggers dropped": `DROP TRIGGER sources_dirty_upd`,
		"other version":    `UPDATE sources_snap SET data = x'02'`,
		"truncated":        `UPDATE sources_snap SET data = substr(data, 1, length(data) - 3)`,
		"bad prefix":       `UPDATE sources_snap SET data = x'0101ff01'`,
	} {
		if _, err := ix.db.ExecContext(ctx, damage); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if data, dirty, ok := ix.readSnapshot(ctx); ok {
			keys, order := sortedKeys(ask)
			if _, ok := loadSnapshot(data, dirty, keys, order); ok && name != "other version" {
				t.Errorf("%s: the snapshot was read", name)
			}
		}
		checkKnownMatches(t, ix, ask)
		if _, repack, _ := ix.loadKnown(ctx, ask); !repack {
			t.Errorf("%s: no repack asked", name)
		}
		if _, err := ix.Import(ctx, srcs); err != nil { // nothing new: packs it again
			t.Fatal(err)
		}
		if _, _, ok := ix.readSnapshot(ctx); !ok {
			t.Errorf("%s: not packed again by the next import", name)
		}
		checkKnownMatches(t, ix, ask)
	}
}

// TestSnapshotCodecRoundTrip: rows packed in key order (shared prefixes, empty and long strings, negative
// and large numbers) decode to the same values, and every truncation of the packed bytes either stops
// early with an error or decodes a prefix of the rows, never past the end.
func TestSnapshotCodecRoundTrip(t *testing.T) {
	type row struct {
		key, format, session                 string
		rev, size, mtime, ctime, ino, offset int64
	}
	rows := []row{
		{"", "f", "", 0, 0, 0, 0, 0, 0},
		{"/a/b/c.jsonl", "codex_jsonl", "s1", 3, 1 << 40, -1, 1764547200123456780, 1 << 63 >> 1, 7},
		{"/a/b/c.jsonl#x", "opencode_sqlite", "s2", 1, 5, 1764547200123456789, -5, -1 << 63, -1 << 62},
		{"/a/b/d" + string(make([]byte, 300)), "", "long", 2, 9, 9, 9, 9, 9},
		{"/z", "claude_jsonl", string(make([]byte, 200)), 3, 1, 2, 4, 5, 3},
	}
	var enc snapEncoder
	for _, r := range rows {
		enc.add(r.key, r.format, r.rev, r.size, r.mtime, r.ctime, r.ino, r.offset, r.session)
	}
	data := enc.bytes()
	d, ok := newSnapDecoder(data)
	if !ok || d.count != uint64(len(rows)) {
		t.Fatalf("row count %d, want %d", d.count, len(rows))
	}
	var r snapRow
	for i, want := range rows {
		if !d.next(&r) {
			t.Fatalf("row %d: %v", i, d.err)
		}
		got := row{string(r.key), string(r.format), string(r.session), r.rev, r.size, r.mtime, r.ctime, r.ino, r.offset}
		if got != want {
			t.Errorf("row %d: got %+v, want %+v", i, got, want)
		}
	}
	if d.next(&r) || d.err != nil {
		t.Errorf("after the last row: %v", d.err)
	}
	// Every truncation is refused by loadSnapshot (a row cut or a row missing), never read past the end.
	keys, order := sortedKeys([]Source{{Path: "/a/b/c.jsonl"}, {Path: "/z"}})
	for n := 1; n < len(data); n++ {
		if _, ok := loadSnapshot(data[:n], nil, keys, order); ok {
			t.Errorf("a snapshot cut to %d of %d bytes was read", n, len(data))
		}
	}
	if got, ok := loadSnapshot(data, nil, keys, order); !ok || got[0] == nil || got[0].sessionID != "s1" || got[1] == nil || got[1].mtime != 2 {
		t.Errorf("whole snapshot: %v %+v", ok, got)
	}
	// eachSnapshot likewise, calling fn for no row of a snapshot it refuses.
	calls := 0
	count := func(key, format, session string) { calls++ }
	for n := 1; n < len(data); n++ {
		if eachSnapshot(data[:n], nil, count) || calls != 0 {
			t.Fatalf("a snapshot cut to %d of %d bytes was read (%d rows)", n, len(data), calls)
		}
	}
	if !eachSnapshot(data, nil, count) || calls != len(rows) {
		t.Errorf("whole snapshot: %d rows, want %d", calls, len(rows))
	}
}

func mustMtime(t *testing.T, p string) time.Time {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}
