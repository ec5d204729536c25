package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// leftovers lists the temporary files of a write left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if IsTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteReplacesWithExactMode(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "hook")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new contents\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new contents\n" {
		t.Fatalf("contents %q, %v", got, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755 whatever the umask", fi.Mode().Perm())
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty folder: the rename fails after the temporary file was written.
	p := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(p, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(p, []byte("x"), 0o644)
	if err == nil {
		t.Fatal("no error writing over a non-empty folder")
	}
	var pe *os.LinkError
	if !errors.As(err, &pe) {
		t.Errorf("error %v does not wrap the rename's *os.LinkError", err)
	}
	if fi, err := os.Stat(filepath.Join(p, "inside")); err != nil || !fi.IsDir() {
		t.Errorf("the folder was changed: %v", err)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left after a failed write: %v", l)
	}
	// A missing folder: an error wrapping fs.ErrNotExist, nothing created.
	err = Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write into a missing folder: %v, want fs.ErrNotExist", err)
	}
}

func TestWriteInStaysInTheRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteIn(root, "sub/a.md", []byte("body"), 0o644, Durable); err != nil {
		t.Fatal(err)
	}
	if err := WriteIn(root, "sub/b.md", []byte("fast"), 0o644, NoSync); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub", "b.md")); !bytes.Equal(got, []byte("fast")) {
		t.Errorf("contents %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub", "a.md")); !bytes.Equal(got, []byte("body")) {
		t.Errorf("contents %q", got)
	}
	if err := WriteIn(root, "link/escape.md", []byte("x"), 0o644, Durable); err == nil {
		t.Error("a write through a symbolic link out of the root succeeded")
	}
	if err := WriteIn(root, "../escape.md", []byte("x"), 0o644, Durable); err == nil {
		t.Error("a write to ../ succeeded")
	}
	if es, _ := os.ReadDir(outside); len(es) != 0 {
		t.Errorf("files written outside the root: %v", es)
	}
	if l := leftovers(t, filepath.Join(dir, "sub")); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestTempNames(t *testing.T) {
	name := TempPrefix("state.json") + "0123456789ab"
	if !IsTemp(name) {
		t.Errorf("IsTemp(%q) = false", name)
	}
	if IsTemp("state.json") {
		t.Error("IsTemp(state.json) = true")
	}
}

// openDir opens dir as an os.Root and the folder itself, as a writer of many files does.
func openDir(t *testing.T, dir string) (*os.Root, *os.File) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); r.Close() })
	return r, f
}

func TestWriteInDirReplacesAndCreates(t *testing.T) {
	dir := t.TempDir()
	r, d := openDir(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, durable := range []Durability{NoSync, Durable} {
		for _, name := range []string{"a.md", "new.md"} {
			want := []byte("new " + name)
			if err := WriteInDir(r, d, name, want, 0o644, durable); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: %q, %v", name, got, err)
			}
		}
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
	for _, bad := range []string{"", ".", "..", "sub/a.md"} {
		if err := WriteInDir(r, d, bad, []byte("x"), 0o644, NoSync); err == nil {
			t.Errorf("WriteInDir(%q) wrote", bad)
		}
	}
}

// A folder where the file should be: the write fails as a rename over it does, and the folder stays where
// it was (the exchange of names is undone), with no temporary file left.
func TestWriteInDirKeepsAFolder(t *testing.T) {
	dir := t.TempDir()
	r, d := openDir(t, dir)
	for _, name := range []string{"empty", "full"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "full", "inside"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"empty", "full"} {
		if err := WriteInDir(r, d, name, []byte("file"), 0o644, NoSync); err == nil {
			t.Fatalf("%s: a file replaced a folder", name)
		}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.IsDir() {
			t.Fatalf("%s: no longer a folder: %v, %v", name, fi, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "full", "inside")); err != nil || string(b) != "kept" {
		t.Errorf("the folder's file: %q, %v", b, err)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// A reader never sees the file missing or partly written while it is replaced again and again.
func TestWriteInDirReaderSeesOldOrNew(t *testing.T) {
	dir := t.TempDir()
	r, d := openDir(t, dir)
	p := filepath.Join(dir, "f.md")
	a, b := bytes.Repeat([]byte("a"), 64<<10), bytes.Repeat([]byte("b"), 32<<10)
	if err := os.WriteFile(p, a, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	bad := make(chan string, 1)
	go func() {
		defer close(bad)
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, a) && !bytes.Equal(got, b) {
				bad <- fmt.Sprintf("read %d bytes, %v", len(got), err)
				return
			}
		}
	}()
	for i := 0; i < 500; i++ {
		data := a
		if i%2 == 0 {
			data = b
		}
		if err := WriteInDir(r, d, "f.md", data, 0o644, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if msg, ok := <-bad; ok {
		t.Fatalf("a reader saw neither the old nor the new file: %s", msg)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// WriteNoSync creates and replaces a file whole, with the mode asked for, leaving no temporary file, and
// fails without a folder to write in.
func TestWriteNoSync(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "journal.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteNoSync(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Fatalf("contents %q, %v; want %q", got, err, data)
		}
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, %v; want 0640", fi.Mode().Perm(), err)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
	if err := WriteNoSync(filepath.Join(dir, "missing", "x"), []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("write into a missing folder: %v", err)
	}
}

// A prepared write (PrepareNoSync, PrepareInDir) changes nothing a reader sees until Commit: the old file
// (or none) stays, only a temporary file is added; Commit puts the new contents in place with the mode
// asked for and leaves no temporary file; Discard leaves the old file and no temporary file; a second
// Commit or Discard does nothing.
func TestPrepared(t *testing.T) {
	dir := t.TempDir()
	r, d := openDir(t, dir)
	prepare := map[string]func(name string, data []byte) (*Pending, error){
		"PrepareNoSync": func(name string, data []byte) (*Pending, error) {
			return PrepareNoSync(filepath.Join(dir, name), data, 0o640)
		},
		"PrepareInDir": func(name string, data []byte) (*Pending, error) {
			return PrepareInDir(r, d, name, data, 0o640)
		},
	}
	for how, prep := range prepare {
		for _, name := range []string{how + "-old", how + "-new"} {
			p := filepath.Join(dir, name)
			hadOld := strings.HasSuffix(name, "-old")
			if hadOld {
				if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			same := func(want string) {
				t.Helper()
				got, err := os.ReadFile(p)
				if want == "" && !errors.Is(err, fs.ErrNotExist) || want != "" && (err != nil || string(got) != want) {
					t.Fatalf("%s %s: %q, %v; want %q", how, name, got, err, want)
				}
			}
			old := ""
			if hadOld {
				old = "old"
			}
			// Discarded: as before, nothing left.
			pd, err := prep(name, []byte("discarded"))
			if err != nil {
				t.Fatal(err)
			}
			if l := leftovers(t, dir); len(l) != 1 || !strings.HasPrefix(l[0], TempPrefix(name)) {
				t.Fatalf("%s %s: temporary files %v, want one of %s", how, name, l, name)
			}
			same(old)
			pd.Discard()
			pd.Discard()
			if err := pd.Commit(); err != nil {
				t.Fatalf("Commit after Discard: %v", err)
			}
			same(old)
			if l := leftovers(t, dir); len(l) != 0 {
				t.Fatalf("%s %s: temporary files left after Discard: %v", how, name, l)
			}
			// Committed: the new contents, the mode, nothing left.
			pc, err := prep(name, []byte("new contents"))
			if err != nil {
				t.Fatal(err)
			}
			same(old)
			if err := pc.Commit(); err != nil {
				t.Fatal(err)
			}
			pc.Discard()
			same("new contents")
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 && how == "PrepareNoSync" {
				t.Fatalf("%s %s: mode %v, %v; want 0640", how, name, fi.Mode().Perm(), err)
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Fatalf("%s %s: temporary files left after Commit: %v", how, name, l)
			}
		}
	}
	// A folder where the file should be: Commit fails, the folder stays, no temporary file is left.
	if err := os.MkdirAll(filepath.Join(dir, "folder", "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	for how, prep := range prepare {
		p, err := prep("folder", []byte("file"))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Commit(); err == nil {
			t.Fatalf("%s: a file replaced a folder", how)
		}
		if fi, err := os.Lstat(filepath.Join(dir, "folder", "inside")); err != nil || !fi.IsDir() {
			t.Fatalf("%s: the folder changed: %v", how, err)
		}
		if l := leftovers(t, dir); len(l) != 0 {
			t.Fatalf("%s: temporary files left after a failed Commit: %v", how, l)
		}
	}
	// Bad names and a missing folder: an error and nothing made.
	for _, bad := range []string{"", ".", "..", "sub/a.md"} {
		if _, err := PrepareInDir(r, d, bad, []byte("x"), 0o644); err == nil {
			t.Errorf("PrepareInDir(%q) prepared", bad)
		}
	}
	if _, err := PrepareNoSync(filepath.Join(dir, "missing", "x"), []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("prepare into a missing folder: %v", err)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// TempTarget matches exactly the names of the temporary files writes make, and no name a user might give
// a file.
func TestTempTarget(t *testing.T) {
	dir := t.TempDir()
	r, d := openDir(t, dir)
	for _, base := range []string{"a", "k1.md", ".ctx-checkout.json", "checkout-journal.json"} {
		p, err := PrepareNoSync(filepath.Join(dir, base), []byte("x"), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		q, err := PrepareInDir(r, d, base, []byte("x"), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		l := leftovers(t, dir)
		if len(l) != 2 {
			t.Fatalf("temporary files %v, want 2", l)
		}
		for _, name := range l {
			if got, ok := TempTarget(name); !ok || got != base {
				t.Errorf("TempTarget(%q) = %q, %v; want %q", name, got, ok, base)
			}
		}
		p.Discard()
		q.Discard()
	}
	for _, name := range []string{"", ".", ".tmp0123456789ab", "..tmp0123456789ab"[1:], "a.tmp0123456789ab",
		".a.tmp0123456789a", ".a.tmp0123456789AB", ".a.tmp0123456789ag", ".a.tmp0123456789abc", ".a.tmpx0123456789a",
		".notes.tmp", ".a.tmp.md", ".a.TMP0123456789ab"} {
		if base, ok := TempTarget(name); ok {
			t.Errorf("TempTarget(%q) = %q: not a temporary file of a write", name, base)
		}
	}
}
