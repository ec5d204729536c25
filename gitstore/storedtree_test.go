package gitstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// Loose trees are written without compression (deflate's stored blocks): C git reads and checks them,
// and another process reads and edits them (the tree of a folder of 2,000 entries, then one edit of it).
func TestLooseTreesStored(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("knowledge/k%d.md", i)] = fmt.Sprintf("entry %d\n", i)
	}
	set(t, r, pub, "many", files)
	tree := testenv.Git(t, dir, "rev-parse", pub+":knowledge")
	size, err := strconv.Atoi(testenv.Git(t, dir, "cat-file", "-s", tree))
	if err != nil {
		t.Fatal(err)
	}
	loose := func(h string) int64 {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, ".git", "objects", h[:2], h[2:]))
		if err != nil {
			t.Fatalf("tree %s not loose: %v", h, err)
		}
		return fi.Size()
	}
	// Level 1 makes such a tree about a third smaller; stored, it is its bytes and the framing.
	if n := loose(tree); n < int64(size) {
		t.Fatalf("loose tree of %d bytes holds %d: compressed", size, n)
	}
	testenv.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if got := strings.Count(testenv.Git(t, dir, "ls-tree", pub+":knowledge"), "\n") + 1; got != 2000 {
		t.Fatalf("git ls-tree: %d entries", got)
	}
	// Another Repo (as another process) reads the stored tree and edits it.
	r2 := open(t, dir)
	res := set(t, r2, pub, "one", map[string]string{"knowledge/k7.md": "changed\n"})
	if got := testenv.Git(t, dir, "show", pub+":knowledge/k7.md"); got != "changed" {
		t.Fatalf("k7 = %q", got)
	}
	if got := testenv.Git(t, dir, "show", pub+":knowledge/k1999.md"); got != "entry 1999" {
		t.Fatalf("k1999 = %q", got)
	}
	if len(res.Paths) != 1 || res.Paths[0] != "knowledge/k7.md" {
		t.Fatalf("paths %v", res.Paths)
	}
	data, err := open(t, dir).ReadFile(bg, hash(t, testenv.Git(t, dir, "rev-parse", pub+"^{tree}")), "knowledge/k7.md")
	if err != nil || string(data) != "changed\n" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	testenv.Git(t, dir, "fsck", "--strict", "--no-dangling")
}
