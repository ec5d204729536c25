package store

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
)

// entriesByDir groups the entries as one map append per entry did: folders whose files are interleaved
// with a sub-folder's, entries that name no file (in no folder), files at the top.
func TestEntriesByDir(t *testing.T) {
	paths := []string{"a.md", "knowledge/a.md", "knowledge/b.md", "knowledge/sub/c.md", "knowledge/sub/d.md",
		"knowledge/x/../y.md", "knowledge/z.md", "manifest.json", "skills/s/SKILL.md", "zz.md"}
	var entries []indexEntry
	for _, p := range paths {
		entries = append(entries, indexEntry{path: p, noFile: checkPath(p) != nil || join(path.Dir(p), path.Base(p)) != p})
	}
	slices.SortFunc(entries, func(a, b indexEntry) int { return strings.Compare(a.path, b.path) })
	want := map[string][]int{}
	for i, e := range entries {
		if !e.noFile {
			want[path.Dir(e.path)] = append(want[path.Dir(e.path)], i)
		}
	}
	got := entriesByDir(entries)
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("entriesByDir = %v; want %v", got, want)
	}
	if l := got["knowledge"]; len(l) != cap(l) {
		t.Errorf("knowledge's list has cap %d for %d entries; want it made at its size", cap(l), len(l))
	}
	for _, e := range entries {
		if !e.noFile && (dirName(e.path) != path.Dir(e.path) || baseName(e.path) != path.Base(e.path)) {
			t.Errorf("%s: dirName %q baseName %q; path gives %q %q", e.path, dirName(e.path), baseName(e.path), path.Dir(e.path), path.Base(e.path))
		}
	}
}

// lstatName answers as lstatIn for a regular file, a folder, a symbolic link (not followed), a pipe and a
// missing name, reusing its buffer, and refuses a name with a NUL byte instead of cutting it short.
func TestLstatName(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := r.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf []byte
	for _, name := range []string{"file", "folder", "link", "pipe", "missing", "a-much-longer-name-than-the-others"} {
		typ, st, err := lstatName(r, f, name, &buf)
		wtyp, wst, werr := lstatIn(r, f, name)
		if typ != wtyp || st != wst || (err == nil) != (werr == nil) || errors.Is(err, fs.ErrNotExist) != errors.Is(werr, fs.ErrNotExist) {
			t.Errorf("%s: lstatName = %v %+v %v; lstatIn = %v %+v %v", name, typ, st, err, wtyp, wst, werr)
		}
	}
	if typ, _, _ := lstatName(r, f, "link", &buf); typ != fs.ModeSymlink {
		t.Errorf("link: type %v; want a symbolic link, not followed", typ)
	}
	if _, _, err := lstatName(r, f, "file\x00x", &buf); !errors.Is(err, errNameNUL) {
		t.Errorf("a name with a NUL byte: %v; want errNameNUL", err)
	}
}

// The index read by readStatusIndex (its names substrings of the read buffer) is the index decodeIndex
// gives from a copy.
func TestDecodeIndexOwned(t *testing.T) {
	x := &statusIndex{stamp: 42, commits: map[Scope]string{Public: "c1"}, countNames: []string{"knowledge"}, countVals: []int{2},
		entries: []indexEntry{
			{path: "knowledge/a.md", scope: Public, blob: gitstore.NewHash("0123456789012345678901234567890123456789"), hasStat: true,
				st: FileStat{Size: 3, Mtime: 5, Ctime: 6, Ino: 7}},
			{path: "knowledge/b.md", scope: Private},
		},
		dirs: []indexDir{{path: ".", extras: []string{"knowledge"}}, {path: "knowledge"}}}
	b := x.encode()
	copied, err := decodeIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	owned, err := decodeIndexIn(slices.Clone(b), true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(copied, owned) || copied.entries[0].path != "knowledge/a.md" || copied.countVals[0] != 2 {
		t.Fatalf("owned %+v\ncopied %+v", owned, copied)
	}
	b[len(b)-1] ^= 1
	if _, err := decodeIndexIn(b, true); !errors.Is(err, errIndexDamaged) {
		t.Errorf("a damaged index: %v", err)
	}
}

// A cancelled scan stops checking files: every answer left carries the context's error, which the scan
// returns.
func TestCheckRangeCancelled(t *testing.T) {
	dir := t.TempDir()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := r.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := &statusIndex{entries: make([]indexEntry, 600)}
	idx := make([]int, len(x.entries))
	for i := range idx {
		x.entries[i].path = "f"
		idx[i] = i
	}
	out := make([]fileCheck, len(idx))
	sc := &scan{ctx: ctx, x: x}
	sc.checkRange(r, f, idx, out)
	for i, c := range out {
		if !errors.Is(c.err, context.Canceled) || c.read {
			t.Fatalf("answer %d: %+v; want the context's error", i, c)
		}
	}
}
