package reflock

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCreateMarkedIsItsMark: the lock is its mark's hard link from its creation; an existing lock is
// fs.ErrExist and its file is left alone; Rename puts the value in place and removes the mark.
func TestCreateMarkedIsItsMark(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "refs", "heads", "ctx")
	if err := os.MkdirAll(filepath.Dir(ref), 0o777); err != nil {
		t.Fatal(err)
	}
	mark := MarkPath(filepath.Join(dir, "ctx"), "refs/heads/ctx")
	if filepath.Base(mark) != "refs%2Fheads%2Fctx" {
		t.Fatalf("mark %s", mark)
	}
	f, err := CreateMarked(mark, ref+".lock", nil)
	if err != nil {
		t.Fatal(err)
	}
	li, _ := os.Lstat(ref + ".lock")
	mi, _ := os.Lstat(mark)
	if li == nil || mi == nil || !os.SameFile(li, mi) {
		t.Fatal("the lock is not its mark's file")
	}
	if _, err := CreateMarked(mark, ref+".lock", nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second lock: %v, want fs.ErrExist", err)
	}
	if err := WriteLock(f, "0123456789012345678901234567890123456789"); err != nil {
		t.Fatal(err)
	}
	if err := Rename(ref, mark); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ref); string(b) != "0123456789012345678901234567890123456789\n" {
		t.Fatalf("ref holds %q", b)
	}
	for _, p := range []string{ref + ".lock", mark} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind", p)
		}
	}
}

// TestWriteLockNoSync: the value and its newline in the lock, the file closed (a second write fails), and
// the same ref after Rename as WriteLock leaves; a closed file is an error, not a silent success.
func TestWriteLockNoSync(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "refs", "heads", "ctx")
	if err := os.MkdirAll(filepath.Dir(ref), 0o777); err != nil {
		t.Fatal(err)
	}
	mark := MarkPath(filepath.Join(dir, "ctx"), "refs/heads/ctx")
	f, err := CreateMarked(mark, ref+".lock", nil)
	if err != nil {
		t.Fatal(err)
	}
	const hex = "89abcdef0123456789abcdef0123456789abcdef"
	if err := WriteLockNoSync(f, hex); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("x"); err == nil {
		t.Error("the lock file is still open after WriteLockNoSync")
	}
	if err := WriteLockNoSync(f, hex); err == nil {
		t.Error("WriteLockNoSync of a closed file: no error")
	}
	if err := Rename(ref, mark); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ref); string(b) != hex+"\n" {
		t.Fatalf("ref holds %q", b)
	}
}

// TestReflogLine: git's shape, the zone of the time given, the message's first line with tabs as spaces.
func TestReflogLine(t *testing.T) {
	when := time.Unix(1700000000, 0).In(time.FixedZone("", -(5*3600 + 30*60)))
	got := ReflogLine("a", "b", "A U Thor", "a@x", when, "ctx: set\tx\nmore")
	if want := "a b A U Thor <a@x> 1700000000 -0530\tctx: set x\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// pathEscape names marks exactly as url.PathEscape did (gitstore's sweep unescapes them with
// url.PathUnescape, and marks left by an older ctx keep their names): every byte, ref names with
// slashes, spaces, percent signs and UTF-8, each round-tripping through url.PathUnescape.
func TestPathEscapeIsURLs(t *testing.T) {
	names := []string{"refs/heads/ctx", "refs/heads/ctx-private", "refs/ctx/incoming/origin/ctx", "a b%c", "héllo/wörld",
		"refs/heads/a;b,c?d#e!f'g(h)i*j[k]l{m}n|o^p`q\\r\"s<t>u", "$&+:=@-_.~"}
	for c := 0; c < 256; c++ {
		names = append(names, "x"+string([]byte{byte(c)})+"y")
	}
	for _, n := range names {
		got, want := pathEscape(n), url.PathEscape(n)
		if got != want {
			t.Errorf("pathEscape(%q) = %q, url.PathEscape %q", n, got, want)
		}
		if back, err := url.PathUnescape(got); err != nil || back != n {
			t.Errorf("url.PathUnescape(%q) = %q, %v", got, back, err)
		}
	}
}
