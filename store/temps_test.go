package store_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// plantTemps makes files at the paths of repository dir (slash paths from its root), as a killed write
// leaves them: empty, modified age ago; a path ending in "/" is a folder.
func plantTemps(t *testing.T, dir string, age time.Duration, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		var err error
		if p[len(p)-1] == '/' {
			err = os.MkdirAll(full, 0o755)
		} else {
			err = os.WriteFile(full, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-age)
		if err := os.Chtimes(full, then, then); err != nil {
			t.Fatal(err)
		}
	}
}

// present returns those of paths (slash paths of repository dir) that exist.
func present(dir string, paths ...string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestLeftoverTempsRemoved: the temporary files killed writes leave (tester C13 C10) are removed by the next
// command that takes the checkout lock, and only those: a status (hand-edit scan) removes those of
// .context/ it passes and those of the git dir's ctx folder known to be leftovers (the journal's and the
// tracked-files cache's, written under the lock or harmlessly; any other older than StaleTempAge); a
// refresh after a journal's temporary file (an interrupted write) walks all of .context/; doctor lists them
// and --fix removes them. A user's files of close names, a folder, a recent temporary file of a file
// written without the lock (config.json: a write in progress elsewhere) stay.
func TestLeftoverTempsRemoved(t *testing.T) {
	s, dir := storetest.New(t)
	put := func(path, text string) {
		t.Helper()
		if _, err := s.Write(bg, store.Op{Name: "test", Summary: path}, func(v *store.View) (store.Edits, error) {
			ed := store.Edits{}
			ed.Put(store.Public, path, []byte("---\nauthor: a\n---\n"+text+"\n"))
			return ed, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("knowledge/k1.md", "one")
	put("conventions/style.md", "one")
	keep := []string{
		".context/knowledge/.k1.md.tmp", ".context/knowledge/.k1.md.tmp0123456789AB", ".context/knowledge/k1.md.tmp0123456789ab",
		".context/knowledge/.k1.md.tmp0123456789abc", ".context/knowledge/.dir.md.tmp0123456789ab/",
		".git/ctx/.config.json.tmp0123456789ab", ".git/ctx/notes.tmp0123456789ab",
	}
	plantTemps(t, dir, 0, keep[:len(keep)-2]...)
	plantTemps(t, dir, 0, keep[len(keep)-2])
	plantTemps(t, dir, 2*time.Hour, keep[len(keep)-1])
	// A status: what the scan passes in .context/, the git dir's leftovers.
	gone := []string{".context/knowledge/.k1.md.tmp6951fd396009", ".context/..ctx-checkout.json.tmpdeadbeef0000",
		".git/ctx/.checkout-journal.json.tmp0123456789ab", ".git/ctx/.checkout-untracked.tmpa0a0a0a0a0a0"}
	plantTemps(t, dir, 0, gone...)
	old := []string{".git/ctx/.config.json.tmpdeadbeef0000", ".git/ctx/.identity.json.tmp000000000000"}
	plantTemps(t, dir, 2*time.Hour, old...)
	d, err := s.Doctor(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Leftovers) != len(gone)+len(old) {
		t.Errorf("doctor lists %v, want the %d of %v %v", d.Leftovers, len(gone)+len(old), gone, old)
	}
	if edits, err := s.HandEdits(bg); err != nil || len(edits) != 1 || edits[0].Path != "knowledge/k1.md.tmp0123456789ab" {
		t.Fatalf("hand edits %v, %v; want the user's knowledge/k1.md.tmp0123456789ab only", edits, err)
	}
	if left := present(dir, append(gone, old...)...); len(left) != 0 {
		t.Errorf("left after a status: %v", left)
	}
	if kept := present(dir, keep...); !slices.Equal(kept, keep) {
		t.Errorf("removed: %v of %v", kept, keep)
	}
	// An interrupted write (its journal's temporary file): the next refresh walks .context/.
	gone = []string{".git/ctx/.checkout-journal.json.tmpffffffffffff", ".context/conventions/.style.md.tmp00000000000a",
		".context/knowledge/.k1.md.tmp00000000000b"}
	plantTemps(t, dir, 0, gone...)
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if left := present(dir, gone...); len(left) != 0 {
		t.Errorf("left after a refresh: %v", left)
	}
	// doctor --fix: everything (here: found by no scan, no refresh).
	gone = []string{".context/conventions/.style.md.tmp00000000000c"}
	plantTemps(t, dir, 0, gone...)
	removed, err := s.LeftoverTemps(bg, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != filepath.Join(dir, ".context", "conventions", ".style.md.tmp00000000000c") {
		t.Errorf("doctor --fix removed %v", removed)
	}
	if left := present(dir, gone...); len(left) != 0 {
		t.Errorf("left after doctor --fix: %v", left)
	}
	if kept := present(dir, keep...); !slices.Equal(kept, keep) {
		t.Errorf("removed: %v of %v", kept, keep)
	}
}
