package gitstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// ReadFilePrefix returns the size of a blob git wrote and at most n bytes of it.
func TestReadFilePrefix(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	body := strings.Repeat("0123456789", 100_000) // 1,000,000 bytes
	res := set(t, r, "refs/heads/ctx", "big", map[string]string{"knowledge/big.md": body})
	tree, err := r.TreeOf(bg, res.New)
	if err != nil {
		t.Fatal(err)
	}
	// git's own view of the blob's size
	if got := testenv.Git(t, dir, "cat-file", "-s", "ctx:knowledge/big.md"); got != "1000000" {
		t.Fatalf("git cat-file -s = %s", got)
	}
	for _, n := range []int64{0, 1, 4096, 1_000_000, 2_000_000} {
		b, size, err := r.ReadFilePrefix(bg, tree, "knowledge/big.md", n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if size != 1_000_000 || int64(len(b)) != min(n, size) || string(b) != body[:len(b)] {
			t.Errorf("n=%d: size %d, %d bytes", n, size, len(b))
		}
	}
	if _, _, err := r.ReadFilePrefix(bg, tree, "knowledge/nope.md", 10); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("missing path: %v", err)
	}
	if _, _, err := r.ReadFilePrefix(bg, tree, "knowledge", 10); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("directory: %v", err)
	}
}
