package plainfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/ctx-dev/ctx/internal/plainfile"
)

// TestAsOS: OpenFile, WriteFile, ReadFile and Rename do what os.OpenFile, os.WriteFile, os.ReadFile and
// os.Rename do on regular files: the bytes, the mode less the umask, O_EXCL's fs.ErrExist, a missing
// file's fs.ErrNotExist, O_APPEND, a rename over an existing file.
func TestAsOS(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(dir, "a")
	if err := plainfile.WriteFile(p, []byte("one\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode: %v %v, want 0644 (0666 less the umask)", fi.Mode(), err)
	}
	if _, err := plainfile.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("O_EXCL over a file: %v, want fs.ErrExist", err)
	}
	f, err := plainfile.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := plainfile.ReadFile(p); err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("read: %q %v", got, err)
	}
	big := bytes.Repeat([]byte("0123456789"), 100000)
	q := filepath.Join(dir, "b")
	if err := plainfile.WriteFile(q, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := plainfile.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	if got, err := plainfile.ReadFile(p); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("after the rename: %d bytes, %v", len(got), err)
	}
	if _, err := os.Stat(q); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the old name is still there: %v", err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := plainfile.ReadFile(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := plainfile.OpenFile(missing, os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if err := plainfile.Rename(missing, p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename of a missing file: %v", err)
	}
	if _, err := plainfile.ReadFile(dir); err == nil {
		t.Fatal("a folder read without error")
	}
	// A folder opened for reading lists its names.
	d, err := plainfile.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if names, err := d.Readdirnames(-1); err != nil || len(names) != 1 || names[0] != "a" {
		t.Fatalf("folder: %v %v", names, err)
	}
}

// TestReadSized: the whole input whatever the size hint says (the same, smaller: appended since the stat,
// larger: cut since), and a reader's error returned.
func TestReadSized(t *testing.T) {
	data := strings.Repeat("0123456789", 1000)
	for _, size := range []int64{0, 1, 9999, 10000, 10001, 20000} {
		b, err := plainfile.ReadSized(strings.NewReader(data), size)
		if err != nil || string(b) != data {
			t.Errorf("size %d: %d bytes, %v", size, len(b), err)
		}
	}
	if _, err := plainfile.ReadSized(iotest.ErrReader(errors.New("boom")), 10); err == nil || err.Error() != "boom" {
		t.Errorf("a failing reader: %v", err)
	}
}

// TestOverwrite: Overwrite leaves exactly the bytes given whether the file was missing (created, the mode
// less the umask), shorter or longer, and keeps the file (its inode) instead of replacing it; OverwriteFile
// does the same through a descriptor it leaves open.
func TestOverwrite(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(dir, "writes")
	var first os.FileInfo
	for _, data := range []string{"9\n", "10\n", "0\n", "", "12345\n"} {
		if err := plainfile.Overwrite(p, []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Fatalf("after Overwrite(%q): %q, %v", data, got, err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = fi
			if fi.Mode().Perm() != 0o644 {
				t.Fatalf("mode %v, want 0644 (0666 less the umask)", fi.Mode())
			}
		} else if !os.SameFile(first, fi) {
			t.Fatalf("Overwrite(%q) replaced the file", data)
		}
	}
	f, err := plainfile.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, data := range []string{"77\n", "7\n"} {
		if err := plainfile.OverwriteFile(f, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != data {
			t.Fatalf("after OverwriteFile(%q): %q, %v", data, got, err)
		}
	}
	if err := plainfile.Overwrite(filepath.Join(dir, "missing", "x"), []byte("x"), 0o666); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Overwrite into a missing folder: %v", err)
	}
}
