package wtfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteKeepsModeAndLeavesNoTemp: a write replaces the file atomically, keeps its permission bits and
// leaves no temporary file.
func TestWriteKeepsModeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "x.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.WriteFile("a/x.md", []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("content %q mode %v", b, fi.Mode())
	}
	es, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range es {
		if strings.Contains(e.Name(), "tmp") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

// TestNoWayOut: "..", absolute paths and links (even inside the tree) are refused.
func TestNoWayOut(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "in"), filepath.Join(dir, "inlink")); err != nil {
		t.Fatal(err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.WriteFile("../x", []byte("x")); err == nil {
		t.Fatal(`".." accepted`)
	}
	if err := f.WriteFile(filepath.Join(outside, "x"), []byte("x")); err == nil {
		t.Fatal("absolute path accepted")
	}
	for _, p := range []string{"out/x", "inlink/x"} {
		if err := f.WriteFile(p, []byte("x")); !errors.Is(err, ErrLink) {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if es, _ := os.ReadDir(outside); len(es) != 0 {
		t.Fatal("wrote outside")
	}
}

// TestRemoveKeepsFolderWithOtherFiles: Remove deletes the folder only when it is left empty, and never
// the stop folder.
func TestRemoveKeepsFolderWithOtherFiles(t *testing.T) {
	dir := t.TempDir()
	f, _ := Open(dir)
	defer f.Close()
	if err := f.WriteFile("skills/a/SKILL.md", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("skills/b/SKILL.md", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("skills/b/run.sh", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("skills/a/SKILL.md", "skills"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("skills/b/SKILL.md", "skills"); err != nil {
		t.Fatal(err)
	}
	if f.Exists("skills/a") || !f.Exists("skills/b/run.sh") || !f.Exists("skills") {
		t.Fatal("wrong folders removed")
	}
}
