package gitstore

import (
	"context"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// ReadWithGitForBigPacks reads through git only when a pack of bigPackBytes or more is there: not in a
// repository of loose objects or a small pack, and then for every read once one is, with the same bytes.
func TestReadWithGitForBigPacks(t *testing.T) {
	dir := testenv.NewRepo(t)
	w, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var changes []Change
	for i := range 12000 {
		changes = append(changes, Change{Path: fmt.Sprintf("knowledge/k%05d.md", i), Data: []byte(fmt.Sprintf("entry %d %x\n", i, sha1.Sum([]byte(fmt.Sprint(i)))))})
	}
	tree, err := w.EditTree(context.Background(), ZeroHash, changes)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()

	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	r.ReadWithGitForBigPacks()
	if r.cf != nil {
		t.Fatal("loose objects only: reads went to git cat-file")
	}
	r.Close()

	testenv.Git(t, dir, "update-ref", "refs/heads/big", testenv.CommitTree(t, dir, tree.String(), "", "big"))
	testenv.Git(t, dir, "repack", "-a", "-d", "-q", "--window=0")
	var packBytes int64
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	for _, p := range packs {
		if fi, err := os.Stat(p); err == nil {
			packBytes += fi.Size()
		}
	}
	if packBytes < bigPackBytes {
		t.Fatalf("the test pack has %d bytes, want at least %d", packBytes, bigPackBytes)
	}
	if r, err = Open(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.ReadWithGitForBigPacks()
	if r.cf == nil {
		t.Fatalf("a pack of %d bytes: reads stay on go-git", packBytes)
	}
	got, err := r.ReadFile(context.Background(), tree, "knowledge/k01234.md")
	if err != nil || string(got) != fmt.Sprintf("entry %d %x\n", 1234, sha1.Sum([]byte(fmt.Sprint(1234)))) {
		t.Fatalf("read through git: %q, %v", got, err)
	}
}
