package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadSourcesMatchesLoadSource: the bulk read gives each source, in any order, the recorded state
// loadSource reads for its key (the columns it reads), nil for a source never imported, the same row to
// a source named twice, and ignores recorded sources that are not asked for.
func TestLoadSourcesMatchesLoadSource(t *testing.T) {
	corpus := corpusDir(t)
	ctx := context.Background()
	ix := openTestIndex(t)
	dir := t.TempDir()
	var srcs []Source
	for i := range 6 {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%3), fmt.Sprintf("rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-00000000000%d.jsonl", i))
		copyFile(t, filepath.Join(corpus, "codex/codemie-incremental", "turn-1.jsonl"), p)
		srcs = append(srcs, Source{Provider: Codex, Format: FormatCodex, Path: p})
	}
	if st, err := ix.Import(ctx, srcs); err != nil || st.Imported != len(srcs) {
		t.Fatalf("import: %+v %v", st, err)
	}
	// Asked: in reverse order, two never imported (one sorting first, one last), one twice; srcs[0] and
	// srcs[3] are recorded but not asked.
	ask := []Source{srcs[5], {Provider: Codex, Format: FormatCodex, Path: filepath.Join(dir, "zz.jsonl")}, srcs[4], srcs[2], srcs[1],
		{Provider: Codex, Format: FormatCodex, Path: filepath.Join(dir, "a.jsonl")}, srcs[2]}
	got, err := ix.loadSources(ctx, ask)
	if err != nil || len(got) != len(ask) {
		t.Fatalf("loadSources: %d rows, %v", len(got), err)
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
	}
	if got[3] == got[6] {
		t.Errorf("a source named twice shares its row (prepareFrom must not see another's changes)")
	}
}

// TestStatterSameAsLstat: the statter's answer is os.Lstat's for files of one directory and the next,
// back to an earlier directory, a symbolic link (not followed), a directory, a missing file, a file
// under a missing directory and a file reached through a symbolic link to its directory (followed, as
// lstat follows the elements before the last).
func TestStatterSameAsLstat(t *testing.T) {
	dir := t.TempDir()
	write := func(p string, n int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a1, a2, b1 := filepath.Join(dir, "a", "1.jsonl"), filepath.Join(dir, "a", "2.jsonl"), filepath.Join(dir, "b", "1.jsonl")
	write(a1, 10)
	write(a2, 2000)
	write(b1, 0)
	link := filepath.Join(dir, "a", "link.jsonl")
	if err := os.Symlink(a2, link); err != nil {
		t.Fatal(err)
	}
	dirLink := filepath.Join(dir, "c")
	if err := os.Symlink(filepath.Join(dir, "b"), dirLink); err != nil {
		t.Fatal(err)
	}
	paths := []string{a1, a2, link, b1, filepath.Join(dir, "b"), a1, filepath.Join(dir, "a", "gone.jsonl"),
		filepath.Join(dir, "none", "x.jsonl"), filepath.Join(dirLink, "1.jsonl"), b1}
	var st statter
	defer st.close()
	for _, p := range paths {
		got := st.lstat(p)
		fi, err := os.Lstat(p)
		if got.ok != (err == nil) {
			t.Fatalf("%s: ok %v, lstat error %v", p, got.ok, err)
		}
		if err != nil {
			continue
		}
		if want := statOf(fi); got != want {
			t.Errorf("%s: statter %+v, lstat %+v", p, got, want)
		}
	}
}
