package objwrite_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/gitstore/objwrite"
)

func git(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q")
	return dir
}

// TestWriteAsGit writes a blob, a tree and a commit and checks them against C git: the same names as
// git hash-object, the same content by git cat-file, a repository git fsck --strict accepts, and objread
// reads them back.
func TestWriteAsGit(t *testing.T) {
	dir := newRepo(t)
	gitDir := filepath.Join(dir, ".git")
	blob := []byte("hello\x00world\n" + strings.Repeat("ctx ", 5000))
	bh, err := objwrite.Write(gitDir, objread.Blob, blob)
	if err != nil {
		t.Fatal(err)
	}
	if want := git(t, dir, blob, "hash-object", "--stdin"); bh.String() != want {
		t.Fatalf("blob named %s, git says %s", bh, want)
	}
	tree := append([]byte("100644 a.md\x00"), bh[:]...)
	th, err := objwrite.Write(gitDir, objread.Tree, tree)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := git(t, dir, nil, "ls-tree", th.String()), "100644 blob "+bh.String()+"\ta.md"; got != want {
		t.Fatalf("ls-tree: %q, want %q", got, want)
	}
	commit := []byte("tree " + th.String() + "\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\nmessage\n")
	ch, err := objwrite.Write(gitDir, objread.Commit, commit)
	if err != nil {
		t.Fatal(err)
	}
	if want := git(t, dir, commit, "hash-object", "-t", "commit", "--stdin"); ch.String() != want {
		t.Fatalf("commit named %s, git says %s", ch, want)
	}
	if got := git(t, dir, nil, "cat-file", "-p", ch.String()); got != strings.TrimSpace(string(commit)) {
		t.Fatalf("cat-file: %q", got)
	}
	git(t, dir, nil, "update-ref", "refs/heads/main", ch.String())
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	r := objread.NewReader(64<<20, filepath.Join(gitDir, "objects"))
	defer r.Close()
	for _, o := range []struct {
		h    objread.Hash
		t    objread.Type
		data []byte
	}{{bh, objread.Blob, blob}, {th, objread.Tree, tree}, {ch, objread.Commit, commit}} {
		typ, b, err := r.Read(o.h)
		if err != nil || typ != o.t || !bytes.Equal(b, o.data) {
			t.Fatalf("objread %s: type %d, err %v, same %v", o.h, typ, err, bytes.Equal(b, o.data))
		}
		fi, err := os.Stat(filepath.Join(gitDir, "objects", o.h.String()[:2], o.h.String()[2:]))
		if err != nil || fi.Mode().Perm()&0o222 != 0 {
			t.Fatalf("%s: %v, mode %v (want read-only)", o.h, err, fi.Mode())
		}
	}
	noTemp(t, gitDir)
}

// TestLooseKeepsExisting: an object already there is not written again (its file is left as it is).
func TestLooseKeepsExisting(t *testing.T) {
	gitDir := filepath.Join(newRepo(t), ".git")
	h, err := objwrite.Write(gitDir, objread.Blob, []byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(gitDir, "objects", h.String()[:2], h.String()[2:])
	before, _ := os.Stat(p)
	wrap := func(*os.File) io.Writer { t.Fatal("wrote an object that was there"); return nil }
	if err := objwrite.Loose(gitDir, h, objread.Blob, 2, strings.NewReader("x\n"), wrap); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Fatal("the object's file was replaced")
	}
}

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestLooseFailsClean: a full disk, a content of another size than declared and a type that is not an
// object's fail, and leave no file behind.
func TestLooseFailsClean(t *testing.T) {
	gitDir := filepath.Join(newRepo(t), ".git")
	data := []byte(strings.Repeat("y", 100000))
	h := objwrite.Name(objread.Blob, data)
	if err := objwrite.Loose(gitDir, h, objread.Blob, int64(len(data)), bytes.NewReader(data),
		func(*os.File) io.Writer { return fullDisk{} }); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("full disk: %v", err)
	}
	if err := objwrite.Loose(gitDir, h, objread.Blob, int64(len(data))+1, bytes.NewReader(data), nil); err == nil {
		t.Fatal("a short content was written")
	}
	if _, err := objwrite.Write(gitDir, objread.OFSDelta, data); err == nil {
		t.Fatal("a delta was written as a loose object")
	}
	if _, err := os.Stat(filepath.Join(gitDir, "objects", h.String()[:2], h.String()[2:])); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("object file: %v", err)
	}
	noTemp(t, gitDir)
}

// noTemp fails if a temporary object file is left under gitDir/objects.
func noTemp(t *testing.T, gitDir string) {
	t.Helper()
	_ = filepath.Walk(filepath.Join(gitDir, "objects"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), "tmp_obj_") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestStoredAsGit: objects at the bounds of StoredMax (one byte under, at, one byte over: stored blocks,
// then level 1) and trees of one, two and three stored blocks (65,535 bytes each) are read back alike
// by C git (cat-file, fsck --strict) and objread; a content of another size than declared fails on the
// stored path too, leaving no file; a stored object's file is header, blocks and checksum, no more.
func TestStoredAsGit(t *testing.T) {
	dir := newRepo(t)
	gitDir := filepath.Join(dir, ".git")
	r := objread.NewReader(64<<20, filepath.Join(gitDir, "objects"))
	defer r.Close()
	var entries []byte
	check := func(typ objread.Type, data []byte) objread.Hash {
		t.Helper()
		h, err := objwrite.Write(gitDir, typ, data)
		if err != nil {
			t.Fatal(err)
		}
		names := map[objread.Type]string{objread.Blob: "blob", objread.Tree: "tree"}
		if want := git(t, dir, data, "hash-object", "-t", names[typ], "--stdin"); h.String() != want {
			t.Fatalf("%d bytes named %s, git says %s", len(data), h, want)
		}
		if got := git(t, dir, nil, "cat-file", "-s", h.String()); got != strconv.Itoa(len(data)) {
			t.Fatalf("cat-file -s: %s, want %d", got, len(data))
		}
		if typ, b, err := r.Read(h); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("objread %s: type %d, err %v", h, typ, err)
		}
		return h
	}
	for _, n := range []int{0, 1, objwrite.StoredMax - 11, objwrite.StoredMax - 10, objwrite.StoredMax - 9} {
		// "blob 4075\x00" is 10 bytes: these contents put header and content at StoredMax-1, StoredMax, StoredMax+1.
		data := bytes.Repeat([]byte("z"), n)
		h := check(objread.Blob, data)
		fi, err := os.Stat(filepath.Join(gitDir, "objects", h.String()[:2], h.String()[2:]))
		if err != nil {
			t.Fatal(err)
		}
		hdr := len("blob " + strconv.Itoa(n) + "\x00")
		if stored := hdr+n <= objwrite.StoredMax; stored != (fi.Size() == int64(hdr+n+11)) {
			t.Fatalf("%d bytes: file of %d bytes, stored %v", n, fi.Size(), stored)
		}
		if fi.Size() > 4096 {
			t.Fatalf("%d bytes: file of %d bytes", n, fi.Size())
		}
		entries = append(append(entries, fmt.Sprintf("100644 f%06d\x00", n)...), h[:]...)
	}
	h0 := check(objread.Blob, []byte("g\n"))
	for len(entries) < 3*65535-1000 {
		h := h0
		entries = append(append(entries, fmt.Sprintf("100644 g%08d\x00", len(entries))...), h[:]...)
		if len(entries) > 65535-40 && len(entries) < 65535 {
			check(objread.Tree, entries) // about one block
		}
	}
	th := check(objread.Tree, entries)
	commit := []byte("tree " + th.String() + "\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\nm\n")
	ch, err := objwrite.Write(gitDir, objread.Commit, commit)
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, nil, "update-ref", "refs/heads/main", ch.String())
	git(t, dir, nil, "fsck", "--strict", "--no-dangling", "--no-progress")

	data := []byte("short")
	h := objwrite.Name(objread.Blob, data)
	for _, size := range []int64{int64(len(data)) + 1, int64(len(data)) - 1} {
		if err := objwrite.Loose(gitDir, h, objread.Blob, size, bytes.NewReader(data), nil); err == nil {
			t.Fatalf("%d bytes declared as %d were written", len(data), size)
		}
	}
	if err := objwrite.Loose(gitDir, h, objread.Blob, int64(len(data)), bytes.NewReader(data),
		func(*os.File) io.Writer { return fullDisk{} }); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("full disk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "objects", h.String()[:2], h.String()[2:])); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("object file: %v", err)
	}
	noTemp(t, gitDir)
}

// TestWriteMakesFolder: an object whose objects/xx folder does not exist yet is written (the folder made
// when the temporary file cannot be created), and one in an existing folder too; git reads both.
func TestWriteMakesFolder(t *testing.T) {
	dir := newRepo(t)
	gitDir := filepath.Join(dir, ".git")
	for i := 0; i < 2; i++ {
		content := []byte("folder test\n")
		h := objwrite.Name(objread.Blob, content)
		sub := filepath.Join(gitDir, "objects", h.String()[:2])
		if i == 0 {
			if err := os.RemoveAll(sub); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := os.Remove(filepath.Join(sub, h.String()[2:])); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := objwrite.Write(gitDir, objread.Blob, content); err != nil || got != h {
			t.Fatalf("write %d: %v %v", i, got, err)
		}
		if got := git(t, dir, nil, "cat-file", "-p", h.String()); got != "folder test" {
			t.Fatalf("cat-file: %q", got)
		}
	}
	noTemp(t, gitDir)
}
