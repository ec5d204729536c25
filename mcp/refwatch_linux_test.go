package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestRefWatch: the watch is quiet until a file of a watched directory is written in place, changes mode,
// is created (a missing directory is watched through its parent, so its creation counts) or removed; it
// refuses what it cannot watch soundly (a symbolic link, a relative path).
func TestRefWatch(t *testing.T) {
	dir := t.TempDir()
	if !localFS(dir) {
		t.Skipf("%s is on a file system the watch is not used on", dir)
	}
	noErr(t, os.MkdirAll(filepath.Join(dir, "x"), 0o755))
	noErr(t, os.MkdirAll(filepath.Join(dir, "y"), 0o755))
	a := filepath.Join(dir, "x", "a")
	if err := os.WriteFile(a, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "y", "refs", "ctx", "private") // y/refs/ does not exist yet: y is watched
	files := []string{a, missing}
	changes := map[string]func(){
		"write in place": func() {
			f, err := os.OpenFile(a, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("2"), 0); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"chmod":          func() { noErr(t, os.Chmod(a, 0o600)) },
		"missing dir":    func() { noErr(t, os.MkdirAll(filepath.Dir(missing), 0o755)) },
		"remove":         func() { noErr(t, os.Remove(a)) },
		"rename over it": func() { noErr(t, os.WriteFile(a+".lock", []byte("3\n"), 0o644)); noErr(t, os.Rename(a+".lock", a)) },
	}
	for _, name := range []string{"write in place", "chmod", "missing dir", "remove", "rename over it"} {
		w := newRefWatch(files)
		if w == nil {
			t.Fatalf("%s: no watch of %v", name, files)
		}
		for range 2 { // a quiet read consumes nothing
			if !w.quiet() {
				t.Fatalf("%s: not quiet before the change", name)
			}
		}
		changes[name]()
		if w.quiet() {
			t.Errorf("%s: quiet after the change", name)
		}
		w.close()
		if name == "missing dir" {
			noErr(t, os.RemoveAll(filepath.Join(dir, "y", "refs")))
		}
	}
	link := filepath.Join(dir, "link")
	noErr(t, os.Symlink(a, link))
	if w := newRefWatch([]string{a, link}); w != nil {
		w.close()
		t.Error("a symbolic link was watched")
	}
	if w := newRefWatch([]string{"a"}); w != nil {
		w.close()
		t.Error("a relative path was watched")
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadCacheWatch: while the watch of the refs' directories is quiet, reads skip the stat of the refs
// and record (the watched count grows), and a change the stat data could miss or that lands where nothing
// existed is still seen by the next read: the loose ref rewritten in place with another commit of the same
// length, and a private ref created by another process while its directory did not exist.
func TestReadCacheWatch(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	if !localFS(dir) {
		t.Skipf("%s is on a file system the watch is not used on", dir)
	}
	ctx := context.Background()
	setKnowledge(t, st, "arch", "Monolith.\n", "")
	first := git(t, dir, "rev-parse", st.BranchRef())
	other, err := store.Open(ctx, dir, store.Actor{Agent: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	setKnowledge(t, other, "arch", "Services now.\n", "")
	s, x := serveCached(t, st)
	const uri, secret = "context://knowledge/arch", "context://knowledge/secret-plan"
	settle()
	readSettled(t, s, uri)
	readHit(t, s, x, uri)
	w := x.reads.watched.Load()
	readHit(t, s, x, uri)
	if x.reads.watched.Load() != w+1 {
		t.Fatalf("a hit with nothing changed did the full check (watched %d, was %d)", x.reads.watched.Load(), w)
	}

	// the loose ref rewritten in place (same inode, same size), as an editor or a script may
	ref := filepath.Join(dir, ".git", filepath.FromSlash(st.BranchRef()))
	f, err := os.OpenFile(ref, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(first + "\n"); err != nil {
		t.Fatal(err)
	}
	noErr(t, f.Close())
	if got := readMiss(t, s, x, uri); !strings.Contains(got, "Monolith.") || got != uncached(t, ctx, dir, uri) {
		t.Fatalf("after the ref was rewritten in place: %s", got)
	}

	// a private ref created where its directory did not exist
	var private string
	for _, f := range st.CheckoutViewFiles() {
		if strings.HasSuffix(filepath.ToSlash(f), store.RefPrivate) {
			private = f
		}
	}
	if _, err := os.Stat(filepath.Dir(private)); private == "" || err == nil {
		t.Fatalf("the private ref's directory exists before the first private write (%q): the case is not tested", private)
	}
	settle()
	readSettled(t, s, secret)
	readSettled(t, s, secret)
	readHit(t, s, x, secret)
	w = x.reads.watched.Load()
	setKnowledge(t, other, "secret-plan", "Acquire the rival.\n", store.Private)
	if got := readMiss(t, s, x, secret); !strings.Contains(got, "rival") || got != uncached(t, ctx, dir, secret) {
		t.Fatalf("after a private ref was created: %s", got)
	}
	if x.reads.watched.Load() != w {
		t.Fatalf("the read after the private ref was created trusted the watch (watched %d, was %d)", x.reads.watched.Load(), w)
	}
}
