package gitstore_test

import (
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// A Repo reading through git cat-file (ReadWithGit) or ctx's own pack reader (ReadInProcess) reads what
// go-git reads: packed objects, loose ones written after its first read, objects of the local-only
// store, and a missing object is the same not-found error.
func TestReadWithGit(t *testing.T) {
	for _, mode := range []struct {
		name string
		set  func(*gitstore.Repo)
	}{{"cat-file", (*gitstore.Repo).ReadWithGit}, {"in-process", (*gitstore.Repo).ReadInProcess}} {
		t.Run(mode.name, func(t *testing.T) { testRawReads(t, mode.set) })
	}
}

func testRawReads(t *testing.T, mode func(*gitstore.Repo)) {
	dir := testenv.NewRepo(t)
	w := open(t, dir)
	defer w.Close()
	if err := w.KeepLocal(bg, "refs/ctx/private"); err != nil {
		t.Fatal(err)
	}
	first := set(t, w, "refs/heads/ctx", "one", map[string]string{"a/x.md": "x\n", "b.md": "b\n"})
	testenv.Git(t, dir, "gc", "-q") // packed
	priv := set(t, w, "refs/ctx/private", "private", map[string]string{"p.md": "secret\n"})

	r := open(t, dir)
	defer r.Close()
	mode(r)
	tree, err := r.TreeOf(bg, first.New)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadFile(bg, tree, "a/x.md"); err != nil || string(b) != "x\n" {
		t.Errorf("packed a/x.md = %q, %v", b, err)
	}
	// Loose objects written by another Repo after r's first read.
	second := set(t, w, "refs/heads/ctx", "two", map[string]string{"b.md": "b2\n"})
	tree2, err := r.TreeOf(bg, second.New)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadFile(bg, tree2, "b.md"); err != nil || string(b) != "b2\n" {
		t.Errorf("loose b.md = %q, %v", b, err)
	}
	added, removed, err := r.DiffItems(bg, tree, tree2)
	if err != nil || len(added) != 1 || added[0].Path() != "b.md" || len(removed) != 0 {
		t.Errorf("DiffItems = %v, %v, %v", added, removed, err)
	}
	ptree, err := r.TreeOf(bg, priv.New)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadFile(bg, ptree, "p.md"); err != nil || string(b) != "secret\n" {
		t.Errorf("local-only p.md = %q, %v", b, err)
	}
	missing := gitstore.BlobHash([]byte("never written\n"))
	_, want := open(t, dir).ReadBlob(bg, missing)
	if _, err := r.ReadBlob(bg, missing); err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("ReadBlob(missing) = %v, go-git alone: %v", err, want)
	}
	// A blob asked for as a tree is not found (as go-git answers a type mismatch).
	blob, err := r.PathHash(bg, tree, "b.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.DiffItems(bg, blob, tree); err == nil {
		t.Error("DiffItems of a blob as a tree: no error")
	}
}
