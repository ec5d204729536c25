package objread_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func hash(t *testing.T, s string) objread.Hash {
	t.Helper()
	var h objread.Hash
	if len(s) != 40 {
		t.Fatalf("not an object name: %q", s)
	}
	for i := range h {
		var b byte
		for _, c := range s[2*i : 2*i+2] {
			b <<= 4
			switch {
			case c >= '0' && c <= '9':
				b |= byte(c - '0')
			default:
				b |= byte(c-'a') + 10
			}
		}
		h[i] = b
	}
	return h
}

// The blob limit of NewReader: a blob over it is ErrMissing, packed or loose, and read whole under a
// larger one; trees and commits have no such limit.
func TestBlobLimit(t *testing.T) {
	dir := testenv.NewRepo(t)
	big := strings.Repeat("a line of a large blob\n", 100000) // 2.3 MB
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "big.txt")
	testenv.Git(t, dir, "commit", "-q", "-m", "big")
	blob := hash(t, testenv.Git(t, dir, "rev-parse", "HEAD:big.txt"))
	tree := hash(t, testenv.Git(t, dir, "rev-parse", "HEAD^{tree}"))
	objs := filepath.Join(dir, ".git", "objects")
	for _, packed := range []bool{false, true} {
		if packed {
			testenv.Git(t, dir, "gc", "-q")
		}
		small := objread.NewReader(1<<20, objs)
		if _, _, err := small.Read(blob); !errors.Is(err, objread.ErrMissing) {
			t.Errorf("packed %v: a blob over the limit: %v, want ErrMissing", packed, err)
		}
		if typ, _, err := small.Read(tree); err != nil || typ != objread.Tree {
			t.Errorf("packed %v: the tree: %v %v", packed, typ, err)
		}
		small.Close()
		large := objread.NewReader(8<<20, objs)
		typ, data, err := large.Read(blob)
		if err != nil || typ != objread.Blob || !bytes.Equal(data, []byte(big)) {
			t.Errorf("packed %v: the blob under a larger limit: %v %d bytes %v", packed, typ, len(data), err)
		}
		e, found, err := findIn(large, tree, "big.txt")
		if err != nil || !found || e.Hash != blob || e.Mode != objread.ModeRegular {
			t.Errorf("packed %v: tree entry %+v %v %v", packed, e, found, err)
		}
		large.Close()
	}
}

func findIn(r *objread.Reader, tree objread.Hash, name string) (objread.Entry, bool, error) {
	if e, found, handled, err := r.TreeEntry(tree, name); handled {
		return e, found, err
	}
	_, raw, err := r.Read(tree)
	if err != nil {
		return objread.Entry{}, false, err
	}
	return objread.FindTreeEntry(raw, name)
}

// ReadRef follows symbolic refs, reads packed-refs, and gives the zero Hash for a missing ref; Discover
// finds the git dir from a subdirectory and from a linked worktree, whose CommonDir is the main one.
func TestRefsAndDiscovery(t *testing.T) {
	dir := testenv.NewRepo(t)
	head := hash(t, testenv.Git(t, dir, "rev-parse", "HEAD"))
	gd := filepath.Join(dir, ".git")
	if h, err := objread.ReadRef(gd, "HEAD"); err != nil || h != head {
		t.Errorf("HEAD: %v %v", h, err)
	}
	testenv.Git(t, dir, "tag", "v1")
	testenv.Git(t, dir, "pack-refs", "--all")
	if h, err := objread.ReadRef(gd, "refs/tags/v1"); err != nil || h != head {
		t.Errorf("packed tag: %v %v", h, err)
	}
	if h, err := objread.ReadRef(gd, "refs/heads/none"); err != nil || !h.IsZero() {
		t.Errorf("missing ref: %v %v", h, err)
	}
	if err := os.WriteFile(filepath.Join(gd, "refs", "heads", "bad"), []byte("not a hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := objread.ReadRef(gd, "refs/heads/bad"); err == nil {
		t.Error("a loose ref holding no object name: no error")
	}
	// ReadRefs: ReadRef of each, in order (loose, symbolic, packed, missing), packed-refs read once; an
	// error of any one is the error of all.
	testenv.Git(t, dir, "symbolic-ref", "refs/heads/sym", "refs/tags/v1")
	hs, err := objread.ReadRefs(gd, "refs/heads/none", "HEAD", "refs/tags/v1", "refs/heads/sym", "refs/heads/none2")
	if err != nil || len(hs) != 5 || !hs[0].IsZero() || hs[1] != head || hs[2] != head || hs[3] != head || !hs[4].IsZero() {
		t.Errorf("ReadRefs: %v %v", hs, err)
	}
	if _, err := objread.ReadRefs(gd, "refs/tags/v1", "refs/heads/bad"); err == nil {
		t.Error("ReadRefs with a loose ref holding no object name: no error")
	}
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if g, wt, err := objread.Discover(sub); err != nil || g != gd || wt != dir {
		t.Errorf("from a subdirectory: %q %q %v", g, wt, err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, dir, "worktree", "add", "-q", wt)
	g, w, err := objread.Discover(wt)
	if err != nil || w != wt || objread.CommonDir(g) != gd {
		t.Errorf("linked worktree: %q %q %v (common %q)", g, w, err, objread.CommonDir(g))
	}
	if _, _, err := objread.Discover(t.TempDir()); !errors.Is(err, objread.ErrNotRepository) {
		t.Errorf("outside a repository: %v", err)
	}
}

// Deep delta chains of a big tree (what git gc leaves of a folder that changes and adds an entry per commit): every
// version reads back as git's bytes, in every order, with one Reader for all reads (its cache of bases and
// its scratch buffers in play) and a fresh one per read (the whole chain applied each time).
func TestDeepDeltaChains(t *testing.T) {
	dir := testenv.NewRepo(t)
	const entries, versions = 3000, 80
	var fi strings.Builder
	blob := func(s string) { fmt.Fprintf(&fi, "data %d\n%s\n", len(s), s) }
	for v := 0; v < versions; v++ {
		fmt.Fprintf(&fi, "commit refs/heads/deep\ncommitter T <t@example.com> %d +0000\n", 1700000000+v)
		blob(fmt.Sprintf("version %d", v))
		if v == 0 {
			for i := 0; i < entries; i++ {
				fmt.Fprintf(&fi, "M 100644 inline folder/entry-with-a-longish-name-%05d.md\n", i)
				blob(fmt.Sprintf("entry %d", i))
			}
			continue
		}
		fmt.Fprintf(&fi, "M 100644 inline folder/entry-with-a-longish-name-%05d.md\n", (v*37)%entries)
		blob(fmt.Sprintf("entry %d version %d", (v*37)%entries, v))
		// A new entry near the start: each version's bytes shift against the last one's.
		fmt.Fprintf(&fi, "M 100644 inline folder/added-%05d.md\n", versions-v)
		blob(fmt.Sprintf("added %d", v))
	}
	testenv.GitIn(t, dir, fi.String(), "fast-import", "--quiet")
	testenv.Git(t, dir, "repack", "-adfq", "--depth=100", "--window=250")

	var trees []string
	for v := 0; v < versions; v++ {
		trees = append(trees, strings.TrimSpace(testenv.Git(t, dir, "rev-parse", fmt.Sprintf("deep~%d:folder", v))))
	}
	depth := 0
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	for _, l := range strings.Split(testenv.Git(t, dir, append([]string{"verify-pack", "-v"}, packs...)...), "\n") {
		f := strings.Fields(l)
		if len(f) >= 7 && f[1] == "tree" {
			if d, err := strconv.Atoi(f[5]); err == nil && d > depth {
				depth = d
			}
		}
	}
	if depth < 40 {
		t.Fatalf("the deepest tree delta is %d deep: the case does not test long chains", depth)
	}
	want := map[string]string{}
	for _, h := range trees {
		want[h] = testenv.Git(t, dir, "cat-file", "tree", h)
	}
	objs := filepath.Join(dir, ".git", "objects")
	check := func(r *objread.Reader, h, order string) {
		t.Helper()
		typ, data, err := r.Read(hash(t, h))
		if err != nil || typ != objread.Tree || string(data) != want[h] {
			t.Fatalf("%s: tree %s: %v %v, %d bytes (want %d)", order, h, typ, err, len(data), len(want[h]))
		}
	}
	orders := map[string][]string{"newest first": trees, "oldest first": make([]string, 0, versions), "shuffled": make([]string, 0, versions)}
	for i := versions - 1; i >= 0; i-- {
		orders["oldest first"] = append(orders["oldest first"], trees[i])
	}
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(versions) {
		orders["shuffled"] = append(orders["shuffled"], trees[i])
	}
	for name, order := range orders {
		shared := objread.NewReader(1<<20, objs)
		for _, h := range order {
			check(shared, h, name)
			check(shared, h, name+", again")
		}
		shared.Close()
	}
	for _, h := range trees[:10] {
		fresh := objread.NewReader(1<<20, objs)
		check(fresh, h, "fresh reader")
		fresh.Close()
	}
}

// TestReadFileAsOS: ReadFile returns os.ReadFile's bytes for an empty, a small and a big file, and fails
// as it does for a missing file (fs.ErrNotExist) and a folder.
func TestReadFileAsOS(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"empty": 0, "small": 41, "edge": 512, "big": 3<<20 + 7} {
		p := filepath.Join(dir, name)
		data := bytes.Repeat([]byte("0123456789abcdef\n"), size/17+1)[:size]
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := objread.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes, err %v, want %d bytes", name, len(got), err, size)
		}
	}
	if _, err := objread.ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := objread.ReadFile(dir); err == nil {
		t.Error("a folder read without error")
	}
}

// TestLooseReadsOneBuffer: one Reader reads loose objects of sizes around and past its read buffer (64
// KiB) one after the other, each read through the buffer the previous one used, and gets git's bytes
// for each, before and after a blob too large for its limit.
func TestLooseReadsOneBuffer(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := objread.NewReader(1<<20, filepath.Join(dir, ".git", "objects"))
	defer r.Close()
	var names []objread.Hash
	var want [][]byte
	for i, size := range []int{5, 70 << 10, 3, 4000, 200 << 10, 2 << 20, 64 << 10, 17} {
		data := bytes.Repeat([]byte(fmt.Sprintf("object %d of %d bytes\n", i, size)), size/20+1)[:size]
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, hash(t, testenv.Git(t, dir, "hash-object", "-w", p)))
		want = append(want, data)
	}
	for round := 0; round < 2; round++ {
		for i, h := range names {
			typ, got, err := r.Read(h)
			if len(want[i]) > 1<<20 {
				if !errors.Is(err, objread.ErrMissing) {
					t.Errorf("round %d: object %d over the limit: %v, want ErrMissing", round, i, err)
				}
				continue
			}
			if err != nil || typ != objread.Blob || !bytes.Equal(got, want[i]) {
				t.Errorf("round %d: object %d (%d bytes): type %v, %d bytes, err %v", round, i, len(want[i]), typ, len(got), err)
			}
		}
	}
}
