package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withFileSizeLimit runs fn with the process's file size limit (RLIMIT_FSIZE) at limit bytes: a write
// past it fails with EFBIG after the file was made (the Go runtime ignores SIGXFSZ), as a full disk's
// does, without root. The limit is the process's: the package's tests do not run in parallel.
func withFileSizeLimit(t *testing.T, limit uint64, fn func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	lim := old
	lim.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Fatalf("restore the file size limit: %v", err)
		}
	}()
	fn()
}

// A write that fails after its temporary file was made (here: its data past the file size limit, as on a
// full disk) leaves the old file and no temporary file, for every kind of write and prepared write
// (tester C13 C1: the temporary file's name was lost before its removal, which unlinked "").
func TestFailedWriteLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	r, d := openDir(t, dir)
	big := bytes.Repeat([]byte("x"), 64<<10)
	writes := map[string]func(name string) error{
		"Write":       func(name string) error { return Write(filepath.Join(dir, name), big, 0o644) },
		"WriteNoSync": func(name string) error { return WriteNoSync(filepath.Join(dir, name), big, 0o644) },
		"WriteIn":     func(name string) error { return WriteIn(r, name, big, 0o644, NoSync) },
		"WriteInDurable": func(name string) error {
			return WriteIn(r, name, big, 0o644, Durable)
		},
		"WriteInDir": func(name string) error { return WriteInDir(r, d, name, big, 0o644, NoSync) },
		"PrepareNoSync": func(name string) error {
			_, err := PrepareNoSync(filepath.Join(dir, name), big, 0o644)
			return err
		},
		"PrepareInDir": func(name string) error {
			_, err := PrepareInDir(r, d, name, big, 0o644)
			return err
		},
	}
	for how, write := range writes {
		if err := os.WriteFile(filepath.Join(dir, how), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		withFileSizeLimit(t, 4096, func() { err = write(how) })
		if !errors.Is(err, syscall.EFBIG) {
			t.Fatalf("%s past the file size limit: %v, want EFBIG", how, err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, how)); err != nil || string(got) != "old" {
			t.Errorf("%s: the old file changed: %q, %v", how, got, err)
		}
		if l := leftovers(t, dir); len(l) != 0 {
			t.Errorf("%s: temporary files left after a failed write: %v", how, l)
		}
	}
}
