package objread_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestAlternates: a chain of 8 repositories, each borrowing from the next through objects/info/alternates
// (relative and absolute paths, comments, blank lines, a quoted path, a line naming a file, a missing
// directory, a duplicate and a cycle back to the first), each holding one object of its own, loose or
// packed. The Reader finds exactly the objects that git cat-file finds from the first repository (git's
// nesting bound included), and ObjectDirs names each directory once.
func TestAlternates(t *testing.T) {
	base := t.TempDir()
	const n = 8
	repos := make([]string, n)
	blobs := make([]string, n)
	for i := range repos {
		repos[i] = filepath.Join(base, fmt.Sprintf("r%d", i), ".git")
		testenv.Git(t, "", "init", "-q", "--bare", repos[i])
		blobs[i] = testenv.GitIn(t, repos[i], fmt.Sprintf("object of repository %d\n", i), "hash-object", "-w", "--stdin")
		if i%2 == 1 {
			testenv.Git(t, repos[i], "repack", "-qad")
		}
	}
	notDir := filepath.Join(base, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n-1; i++ {
		objects := filepath.Join(repos[i], "objects")
		next := filepath.Join(repos[i+1], "objects")
		var line string
		switch i % 3 {
		case 0:
			rel, err := filepath.Rel(objects, next)
			if err != nil {
				t.Fatal(err)
			}
			line = rel
		case 1:
			line = next
		case 2:
			line = fmt.Sprintf("%q", next)
		}
		content := "# alternates of " + repos[i] + "\n\n" + notDir + "\n" + filepath.Join(base, "missing") + "\n" + line + "\n" + line + "\n"
		if i == 3 {
			content += filepath.Join(repos[0], "objects") + "\n"
		}
		if err := os.WriteFile(filepath.Join(objects, "info", "alternates"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := filepath.Join(repos[0], "objects")
	r := objread.NewReader(1<<20, first)
	defer r.Close()
	found := 0
	for i, b := range blobs {
		_, gitErr := testenv.GitErr(repos[0], "cat-file", "-e", b)
		_, data, err := r.Read(hash(t, b))
		if (gitErr == nil) != (err == nil) {
			t.Errorf("object of repository %d: git finds it %v, the reader %v (%v)", i, gitErr == nil, err == nil, err)
		}
		if err == nil {
			found++
			if want := fmt.Sprintf("object of repository %d\n", i); string(data) != want {
				t.Errorf("object of repository %d reads %q", i, data)
			}
		}
	}
	if found != 7 {
		t.Errorf("found %d objects, want 7 (the repository's own and 6 levels of alternates, as git)", found)
	}
	dirs := objread.ObjectDirs(first)
	if len(dirs) != 7 {
		t.Errorf("ObjectDirs = %d directories, want 7: %q", len(dirs), dirs)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			t.Errorf("directory %s named twice", d)
		}
		seen[d] = true
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("ObjectDirs names %s, not a directory", d)
		}
	}
}
