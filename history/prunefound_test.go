package history

import (
	"context"
	"os"
	"testing"
)

// PruneMissingFound takes the sources discovery found as present and lstats only the recorded sources the
// walk did not find (one stat per file for a refresh with nothing new: bench/README.md "Twelfth round").
// A file deleted after the walk that found it is therefore kept by this call; one the walk did not find
// (deleted before it) is forgotten, as is one whose walk lstat failed.
func TestPruneMissingFoundSkipsFoundSources(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ix := openTestIndex(t)
	a := writeClaude(t, root, "-a", "sess-a", rec("a1", "user", "/w", `"apricot"`))
	b := writeClaude(t, root, "-b", "sess-b", rec("b1", "user", "/w", `"blueberry"`))
	c := writeClaude(t, root, "-c", "sess-c", rec("c1", "user", "/w", `"cherry"`))
	if _, err := ix.Import(ctx, []Source{a, b, c}); err != nil {
		t.Fatal(err)
	}
	// b is gone before the walk; the walk finds a and c, then both are deleted.
	if err := os.Remove(b.Path); err != nil {
		t.Fatal(err)
	}
	found, err := Discover(ctx, ClaudeCode, root, false)
	if err != nil || len(found) != 2 {
		t.Fatalf("discover: %d sources, %v", len(found), err)
	}
	for i := range found {
		if found[i].Path == c.Path {
			found[i].stat.ok = false // as a walk whose lstat of c failed: c is lstat'ed again here
		}
	}
	for _, s := range []Source{a, c} {
		if err := os.Remove(s.Path); err != nil {
			t.Fatal(err)
		}
	}
	n, err := ix.PruneMissingFound(ctx, []string{root}, found)
	if err != nil || n != 2 {
		t.Fatalf("prune: %d forgotten (want b and c), %v", n, err)
	}
	if r, err := ix.loadSource(ctx, a.Path); err != nil || r == nil {
		t.Fatalf("a, found by the walk, was lstat'ed again and forgotten: %+v %v", r, err)
	}
	for _, s := range []Source{b, c} {
		if r, err := ix.loadSource(ctx, s.Path); err != nil || r != nil {
			t.Fatalf("%s kept: %+v %v", s.Path, r, err)
		}
	}
	// Without the found sources (PruneMissing) every recorded file is lstat'ed: a goes too.
	if n, err := ix.PruneMissing(ctx, []string{root}); err != nil || n != 1 {
		t.Fatalf("prune without found sources: %d %v", n, err)
	}
}

// PruneMissing reads the recorded sources from the source snapshot and the rows changed since it was
// packed: a deleted file recorded in the snapshot, and one imported after it was packed, are forgotten;
// a row the snapshot holds but sources no longer does (deleted since) is not visited.
func TestPruneMissingFromSnapshot(t *testing.T) {
	withBulkState(t)
	ctx := context.Background()
	root := t.TempDir()
	ix := openTestIndex(t)
	a := writeClaude(t, root, "-a", "sess-a", rec("a1", "user", "/w", `"apricot"`))
	b := writeClaude(t, root, "-b", "sess-b", rec("b1", "user", "/w", `"blueberry"`))
	c := writeClaude(t, root, "-c", "sess-c", rec("c1", "user", "/w", `"cherry"`))
	if _, err := ix.Import(ctx, []Source{a, b}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := ix.readSnapshot(ctx); !ok {
		t.Fatal("no snapshot packed")
	}
	if _, err := ix.ImportSource(ctx, c); err != nil { // c: a changed row, not in the snapshot
		t.Fatal(err)
	}
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sources_dirty`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("changed rows: %d %v", n, err)
	}
	for _, s := range []Source{a, c} {
		if err := os.Remove(s.Path); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := ix.PruneMissing(ctx, []string{root}); err != nil || n != 2 {
		t.Fatalf("prune: %d forgotten (want a and c), %v", n, err)
	}
	if r, err := ix.loadSource(ctx, b.Path); err != nil || r == nil {
		t.Fatalf("b forgotten: %+v %v", r, err)
	}
	// a and c are now changed rows deleted from sources: a second prune visits neither.
	if n, err := ix.PruneMissing(ctx, []string{root}); err != nil || n != 0 {
		t.Fatalf("second prune: %d %v", n, err)
	}
	var keys []string
	if err := ix.eachRecorded(ctx, func(key, _, _ string) { keys = append(keys, key) }); err != nil || len(keys) != 1 || keys[0] != b.Path {
		t.Fatalf("recorded: %v %v", keys, err)
	}
}
