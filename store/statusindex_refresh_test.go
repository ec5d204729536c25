package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestRefreshWritesIndexOfWholeRecord: a refresh that writes the checkout record whole (here: the branch
// moved by 150 entries of 400) writes the status index the next scan would have built from it, so that
// scan neither parses the record nor builds the index; the index finds what a build finds: nothing after
// the refresh, then a file the refresh wrote and that was edited in place (same size, its modification time
// put back), a file edited later, a file deleted; and the same again from an index built from the record.
func TestRefreshWritesIndexOfWholeRecord(t *testing.T) {
	dir, ours, theirs := histories(t, 400, 150)
	s := storetest.Open(t, dir, store.Actor{Agent: "t", Machine: "t"})
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if got := sortedEdits(t, s); got != "" {
		t.Fatalf("hand edits after the first refresh: %s", got)
	}
	c := watchIndex(t)
	fromRefresh := 0
	t.Cleanup(store.SetOnIndexFromRefresh(func() { fromRefresh++ }))
	if err := s.GitRepo().UpdateRef(bg, s.BranchRef(), gitstore.NewHash(ours), gitstore.NewHash(theirs), "test: move"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if fromRefresh != 1 {
		t.Fatalf("the refresh wrote the index %d times, want once", fromRefresh)
	}
	if got := sortedEdits(t, s); got != "" || c.rebuilt != 0 {
		t.Fatalf("after the refresh: hand edits %q, %d index builds from the record (want none)", got, c.rebuilt)
	}
	// k00200 was written by the refresh (theirs changed it): edit it in place, same size, mtime put back.
	root := filepath.Join(dir, store.CheckoutDir)
	p := filepath.Join(root, "knowledge", "k00200.md")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "Fourth line", "Fourth LINE", 1)
	if edited == string(b) {
		t.Fatal("k00200 is not theirs' version")
	}
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(root, "knowledge", "k00300.md"), []byte("later\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "knowledge", "k00010.md")); err != nil {
		t.Fatal(err)
	}
	want := "deleted knowledge/k00010.md public; modified knowledge/k00200.md public; modified knowledge/k00300.md public"
	if got := sortedEdits(t, s); got != want {
		t.Fatalf("hand edits from the refresh's index:\n%s\nwant\n%s", got, want)
	}
	if c.rebuilt != 0 {
		t.Fatalf("%d index builds from the record", c.rebuilt)
	}
	// The same from an index built from the record by the scan.
	if err := os.Remove(filepath.Join(s.GitRepo().GitDir(), "ctx", store.StatusIndexFile)); err != nil {
		t.Fatal(err)
	}
	if got := sortedEdits(t, s); got != want || c.rebuilt != 1 {
		t.Fatalf("hand edits from a built index (%d builds):\n%s\nwant\n%s", c.rebuilt, got, want)
	}
	testenv.Git(t, dir, "status", "--porcelain") // the repository is still sound for git
}
