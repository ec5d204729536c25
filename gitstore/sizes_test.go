package gitstore_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/go-git/go-git/v5/plumbing"
)

// ObjectSizes gives git's own sizes (git cat-file -s) for loose objects, packed ones, deltas and objects of
// the local-only store, with C git, with the in-process reader (ReadInProcess; objread.Reader.Size, checked
// over every object of the repository) and with go-git alone (no git binary); a missing object is
// plumbing.ErrObjectNotFound.
func TestObjectSizes(t *testing.T) {
	dir := testenv.NewRepo(t)
	w := open(t, dir)
	defer w.Close()
	if err := w.KeepLocal(bg, "refs/ctx/private"); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a line of a large entry\n", 50_000)
	first := set(t, w, "refs/heads/ctx", "one", map[string]string{"big.md": big, "b.md": "b\n"})
	// The second version of big.md differs by a line: git gc stores one of the two as a delta.
	second := set(t, w, "refs/heads/ctx", "two", map[string]string{"big.md": big + "one more line\n"})
	testenv.Git(t, dir, "gc", "-q", "--aggressive")
	loose := testenv.Blob(t, dir, "loose, written after the gc\n")
	priv := set(t, w, "refs/ctx/private", "private", map[string]string{"p.md": "secret\n"})

	var hs []gitstore.Hash
	for _, c := range []gitstore.Hash{first.New, second.New, priv.New} {
		tree, err := w.TreeOf(bg, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Walk(bg, tree, func(_ string, h gitstore.Hash) error { hs = append(hs, h); return nil }); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, tree, c)
	}
	lh, err := gitstore.ParseHash(loose)
	if err != nil {
		t.Fatal(err)
	}
	hs = append(hs, lh, lh) // twice: answered once
	deltas := 0
	for _, l := range strings.Split(testenv.Git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(deltabase)"), "\n") {
		if strings.Trim(l, "0") != "" {
			deltas++
		}
	}
	if deltas == 0 {
		t.Fatal("git gc stored no delta: the delta case is not exercised")
	}
	want := map[gitstore.Hash]int64{}
	for _, h := range hs {
		want[h] = gitSize(t, dir, h)
	}
	// Every object of the repository and of the local-only store by the in-process reader's headers alone,
	// against git's answer (loose objects, packed ones, deltas).
	objs := []string{filepath.Join(dir, ".git", "objects"), filepath.Join(dir, ".git", "ctx", gitstore.LocalStoreName, "objects")}
	rd := objread.NewReader(1<<30, objs...)
	all := strings.Fields(testenv.GitEnv(t, dir, []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + objs[1]},
		"cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objectsize)"))
	for i := 0; i+1 < len(all); i += 2 {
		h, err := gitstore.ParseHash(all[i])
		if err != nil {
			t.Fatal(err)
		}
		n, err := rd.Size(objread.Hash(h))
		if err != nil || strconv.FormatInt(n, 10) != all[i+1] {
			t.Errorf("Reader.Size(%s) = %d, %v; git: %s", h, n, err, all[i+1])
		}
	}
	if len(all) < 10 {
		t.Fatalf("git listed %d objects", len(all)/2)
	}
	if _, err := rd.Size(objread.Hash(gitstore.BlobHash([]byte("never written\n")))); !errors.Is(err, objread.ErrMissing) {
		t.Errorf("Reader.Size of a missing object: %v, want ErrMissing", err)
	}
	rd.Close()
	for _, mode := range []string{"git", "in process", "no git"} {
		noGit := mode == "no git"
		if noGit {
			t.Setenv("PATH", "")
		}
		r := open(t, dir)
		if err := r.KeepLocal(bg, "refs/ctx/private"); err != nil { // as the store opens it
			t.Fatal(err)
		}
		if mode == "in process" {
			r.ReadInProcess()
		}
		sizes, err := r.ObjectSizes(bg, hs)
		r.Close()
		if err != nil {
			t.Fatalf("ObjectSizes (no git: %v): %v", noGit, err)
		}
		for _, h := range hs {
			if sizes[h] != want[h] {
				t.Errorf("ObjectSizes (no git: %v)[%s] = %d, git cat-file -s: %d", noGit, h, sizes[h], want[h])
			}
		}
		r = open(t, dir)
		if mode == "in process" {
			r.ReadInProcess()
		}
		missing := gitstore.BlobHash([]byte("never written\n"))
		if _, err := r.ObjectSizes(bg, []gitstore.Hash{lh, missing}); !errors.Is(err, plumbing.ErrObjectNotFound) {
			t.Errorf("ObjectSizes of a missing object (no git: %v) = %v, want ErrObjectNotFound", noGit, err)
		}
		r.Close()
	}
}

// gitSize is git cat-file -s of h, looking in the local-only store's objects too.
func gitSize(t *testing.T, dir string, h gitstore.Hash) int64 {
	t.Helper()
	out := testenv.GitEnv(t, dir, []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(dir, ".git", "ctx", gitstore.LocalStoreName, "objects")},
		"cat-file", "-s", h.String())
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		t.Fatalf("git cat-file -s %s: %q", h, out)
	}
	return n
}
