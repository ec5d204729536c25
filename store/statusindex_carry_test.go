package store_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// carriedStores are two clones of one store of n knowledge entries (k000…), checked out with a status
// index, and the remote they pulled from, to which a teammate then pushed edits of the first edited
// entries (content "v2\n"), three new ones and the removal of k148 and k149. The second clone is the
// reference: it pulls with the refresh that parses the record.
func carriedStores(t *testing.T, n, edited int) (a, ref string, remote string) {
	t.Helper()
	remote = testenv.BareRemote(t)
	s, dir := indexedStore(t, 0)
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	for i := 0; i < n; i++ {
		mustSet(t, s, fmt.Sprintf("k%03d", i), "v1\n")
	}
	if _, err := s.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	r, rdir := machineClone(t, remote, "ref")
	if _, err := r.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := machineClone(t, remote, "b")
	if _, err := b.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < edited; i++ {
		mustSet(t, b, fmt.Sprintf("k%03d", i), "v2\n")
	}
	for i := 0; i < 3; i++ {
		mustSet(t, b, fmt.Sprintf("new%d", i), "v1\n")
	}
	for _, k := range []string{"k148", "k149"} {
		if _, err := b.RemoveEntry(bg, store.KnowledgeKind, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	// Past a tick of the file system's clock, then an index of each clone that trusts its files.
	time.Sleep(30 * time.Millisecond)
	for _, d := range []string{dir, rdir} {
		st := storetest.Open(t, d, store.Actor{})
		for i := 0; i < 2; i++ {
			if got := sortedEdits(t, st); got != "" {
				t.Fatalf("%s: %q, want no hand edit", d, got)
			}
		}
	}
	return dir, rdir, remote
}

// TestPullCarriesStatusIndex: a pull of more changes than a refresh looks up one by one in a big record
// takes the record's entries from the status index of its hand-edit scan instead of parsing the record,
// and writes the index of the record it wrote (git's merge writes the index it read); the next scan
// builds no index and parses no record, and finds the hand edits made after the pull. The record written
// is the one a refresh that parses the record writes (scope and blob of every file, the commits), and so
// are the files.
func TestPullCarriesStatusIndex(t *testing.T) {
	defer store.SetLazyRecordMin(1)()
	const n, edited = 150, 105 // more than a refresh looks up lazily (checkoutrec.LazyLookupMax)
	dir, rdir, _ := carriedStores(t, n, edited)
	var carried []int
	t.Cleanup(store.SetOnIndexCarried(func(paths int) { carried = append(carried, paths) }))

	parsed := store.RecordsParsed()
	if _, err := storetest.Open(t, dir, store.Actor{}).Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := store.RecordsParsed() - parsed; got != 0 {
		t.Errorf("the pull parsed the record %d times, want 0", got)
	}
	if want := []int{edited + 3 + 2}; !slices.Equal(carried, want) {
		t.Errorf("indexes carried by the pull's refresh: %v paths, want %v", carried, want)
	}
	func() {
		defer store.SetCarryIndex(false)()
		parsed = store.RecordsParsed()
		if _, err := storetest.Open(t, rdir, store.Actor{}).Pull(bg, store.PullOptions{}); err != nil {
			t.Fatal(err)
		}
		if store.RecordsParsed() == parsed || len(carried) != 1 {
			t.Fatalf("the reference pull parsed no record, or carried an index (%v)", carried)
		}
	}()
	sameRecords(t, dir, rdir, n+3-2+1)

	// The next ctx status: the index on disk, of this record.
	c := watchIndex(t)
	if got := sortedEdits(t, storetest.Open(t, dir, store.Actor{})); got != "" {
		t.Errorf("after the pull: %q, want no hand edit", got)
	}
	// Hand edits of files the pull wrote (a same-size edit, a deletion) and a new file in their folder.
	for _, d := range []string{dir, rdir} {
		kdir := filepath.Join(d, ".context", "knowledge")
		sameSizeEdit(t, filepath.Join(kdir, "k003.md"))
		if err := os.Remove(filepath.Join(kdir, "k004.md")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(kdir, "hand.md"), []byte("by hand\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantEdits := "added knowledge/hand.md public; deleted knowledge/k004.md public; modified knowledge/k003.md public"
	if got := sortedEdits(t, storetest.Open(t, dir, store.Actor{})); got != wantEdits {
		t.Errorf("hand edits after the pull: %q,\nwant %q", got, wantEdits)
	}
	if c.rebuilt != 0 {
		t.Errorf("the scans after the pull built the index %d times, want 0", c.rebuilt)
	}

	// git moves the branch back past the teammate's commits; the refresh (a hook's, in a new process)
	// reads the index from disk, keeps the hand edits as the reference's refresh does, and carries the
	// index again.
	back := func(d string) *store.Refreshed {
		pulled := testenv.Git(t, d, "rev-parse", "refs/heads/ctx")
		testenv.Git(t, d, "update-ref", "refs/heads/ctx", fmt.Sprintf("%s~%d", pulled, edited+3+2))
		s, err := store.Open(bg, d, store.Actor{Agent: "hook", Machine: "laptop"}) // as the hook does: no Init
		if err != nil {
			t.Fatal(err)
		}
		ref, err := s.Refresh(bg)
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	carried = nil
	parsed = store.RecordsParsed()
	got := back(dir)
	if len(carried) != 1 || store.RecordsParsed() != parsed {
		t.Errorf("refresh back: carried %v, parsed the record %d times; want one carry, no parse", carried,
			store.RecordsParsed()-parsed)
	}
	func() {
		defer store.SetCarryIndex(false)()
		want := back(rdir)
		if !slices.Equal(got.Written, want.Written) || !slices.Equal(got.Removed, want.Removed) ||
			!slices.Equal(got.Kept, want.Kept) || len(got.Written) < edited {
			t.Errorf("refresh back: written %d, removed %v, kept %v; want %d, %v, %v", len(got.Written), got.Removed,
				got.Kept, len(want.Written), want.Removed, want.Kept)
		}
	}()
	sameRecords(t, dir, rdir, n+1)
	wantEdits = sortedEdits(t, storetest.Open(t, rdir, store.Actor{}))
	if got := sortedEdits(t, storetest.Open(t, dir, store.Actor{})); got != wantEdits || got == "" {
		t.Errorf("hand edits after the refresh back: %q,\nwant %q", got, wantEdits)
	}
	if c.rebuilt != 1 { // the reference's scan
		t.Errorf("the scans after the refresh built the index %d times, want only the reference's", c.rebuilt)
	}
}

// sameRecords checks that the checkout records of the clones dir and ref name the same commits and, for
// each of their files (files of them), the same scope and blob, and that the files hold the same bytes.
func sameRecords(t *testing.T, dir, ref string, files int) {
	t.Helper()
	got, err := storetest.Open(t, dir, store.Actor{}).ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	want, err := storetest.Open(t, ref, store.Actor{}).ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.Commits, want.Commits) || len(got.Files) != len(want.Files) || len(got.Files) != files {
		t.Fatalf("record: commits %v, %d files; want %v, %d files (%d)", got.Commits, len(got.Files),
			want.Commits, len(want.Files), files)
	}
	for p, w := range want.Files {
		g, ok := got.Files[p]
		if !ok || g.Scope != w.Scope || g.Blob != w.Blob {
			t.Errorf("record of %s: %+v, want %+v", p, g, w)
		}
		a, aerr := os.ReadFile(filepath.Join(dir, ".context", p))
		r, rerr := os.ReadFile(filepath.Join(ref, ".context", p))
		if string(a) != string(r) || (aerr == nil) != (rerr == nil) {
			t.Errorf("%s: %q (%v), want %q (%v)", p, a, aerr, r, rerr)
		}
	}
}
