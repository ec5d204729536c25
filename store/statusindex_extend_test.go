package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// indexCounts counts the status index's full builds and extensions in this test.
type indexCounts struct{ rebuilt, extended int }

func watchIndex(t *testing.T) *indexCounts {
	c := &indexCounts{}
	t.Cleanup(store.SetOnIndexRebuild(func() { c.rebuilt++ }))
	t.Cleanup(store.SetOnIndexExtend(func(int) { c.extended++ }))
	return c
}

// sortedEdits is HandEdits sorted by change, then path, as a string.
func sortedEdits(t *testing.T, s *store.Store) string {
	t.Helper()
	edits, err := s.HandEdits(bg)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(edits, func(i, j int) bool {
		return string(edits[i].Change)+edits[i].Path < string(edits[j].Change)+edits[j].Path
	})
	return editsString(edits)
}

// sameSizeEdit changes "v<digit>\n" to "v9\n" in the file at p and puts its modification time back:
// only the change time and the content tell.
func sameSizeEdit(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	i := strings.LastIndex(string(b), "\nv")
	if err != nil || i < 0 || i+4 > len(b) || b[i+3] != '\n' || b[i+2] == '9' {
		t.Fatalf("%s: %q, %v", p, b, err)
	}
	b[i+2] = '9'
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestStatusIndexAfterWrite: after a write (its refresh appends to the checkout record's log), the next
// scan brings the status index up to the log instead of building it from the record, reads only the
// written file, and finds hand edits made before and after the write: a same-size edit of a file the
// index trusted, an edit of the file just written, a new file next to it, a deleted one. A new Store (the
// next ctx status) goes through the index that scan wrote, again without a build.
func TestStatusIndexAfterWrite(t *testing.T) {
	defer store.SetLazyRecordMin(1)()
	s, dir := indexedStore(t, 40) // a record of a size that takes a few log lines before it is rewritten whole
	kdir := filepath.Join(dir, ".context", "knowledge")
	k := func(i int) string { return filepath.Join(kdir, fmt.Sprintf("k%02d.md", i)) }
	c := watchIndex(t)
	l := watchScan(t)

	mustSet(t, s, "k03", "v2\n")
	l.reset() // the write's refresh read the file it replaced
	if got := sortedEdits(t, s); got != "" {
		t.Fatalf("after a write: %q, want no hand edit", got)
	}
	if c.rebuilt != 0 || c.extended != 1 {
		t.Errorf("after a write: index built %d times, extended %d; want 0 and 1", c.rebuilt, c.extended)
	}
	if !slices.Equal(l.read, []string{"knowledge/k03.md"}) {
		t.Errorf("after a write: read %v, want only the written file", l.read)
	}

	// Hand edits around a write: before it (k01, trusted by its stat data), after it (the written k04, a
	// new file, a deleted k06).
	sameSizeEdit(t, k(1))
	mustSet(t, s, "k04", "v2\n")
	sameSizeEdit(t, k(4))
	if err := os.WriteFile(filepath.Join(kdir, "new.md"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(k(6)); err != nil {
		t.Fatal(err)
	}
	want := "added knowledge/new.md public; deleted knowledge/k06.md public; modified knowledge/k01.md public; modified knowledge/k04.md public"
	for round, st := range []*store.Store{s, storetest.Open(t, dir, store.Actor{})} {
		if got := sortedEdits(t, st); got != want {
			t.Errorf("round %d: %q,\nwant %q", round, got, want)
		}
	}
	if c.rebuilt != 0 || c.extended != 2 {
		t.Errorf("index built %d times, extended %d; want 0 and 2", c.rebuilt, c.extended)
	}
	// ctx status in a new process: the index on disk, no record parsed.
	parsed := store.RecordsParsed()
	if _, err := storetest.Open(t, dir, store.Actor{}).Status(bg); err != nil {
		t.Fatal(err)
	}
	if n := store.RecordsParsed() - parsed; n != 0 || c.rebuilt != 0 {
		t.Errorf("status after a write parsed the record %d times, built the index %d times", n, c.rebuilt)
	}
}

// TestStatusIndexAfterPullAndRefresh: a pull of a teammate's writes and a refresh after git moved the
// context branch by itself (a hook's) both leave an index the next scan extends; a hand edit made after
// the pull is found, and kept through the refresh; the files they wrote are not hand edits, and files
// they removed are gone from the index (not listed as deleted).
func TestStatusIndexAfterPullAndRefresh(t *testing.T) {
	defer store.SetLazyRecordMin(1)()
	remote := testenv.BareRemote(t)
	s, dir := indexedStore(t, 40) // a record of a size that takes a few log lines before it is rewritten whole
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	if _, err := s.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := machineClone(t, remote, "b")
	if _, err := b.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, b, "k07", "from b\n")
	mustSet(t, b, "b1", "new from b\n")
	if _, err := b.RemoveEntry(bg, store.KnowledgeKind, "k08"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // past a tick of the file system's clock (indexedStore)
	kdir := filepath.Join(dir, ".context", "knowledge")
	if _, err := s.Pull(bg, store.PullOptions{}); err != nil { // ctx pull records hand edits first: none
		t.Fatal(err)
	}
	c := watchIndex(t)
	sameSizeEdit(t, filepath.Join(kdir, "k02.md"))
	if got, want := sortedEdits(t, s), "modified knowledge/k02.md public"; got != want {
		t.Errorf("after a pull: %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(kdir, "b1.md")); err != nil {
		t.Errorf("the pull did not check out b1: %v", err)
	}
	if c.rebuilt != 0 || c.extended != 1 {
		t.Errorf("after a pull: index built %d times, extended %d; want 0 and 1", c.rebuilt, c.extended)
	}

	// git moves the branch back (as `git fetch origin ctx:ctx` or `git update-ref` would); a refresh (the
	// post-checkout hook's) brings .context/ along: k08 back, b1 gone.
	pulled := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", pulled+"~3")
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedEdits(t, s), "modified knowledge/k02.md public"; got != want {
		t.Errorf("after a refresh: %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(kdir, "k08.md")); err != nil {
		t.Errorf("the refresh did not bring k08 back: %v", err)
	}
	if c.rebuilt != 0 || c.extended != 2 {
		t.Errorf("after a refresh: index built %d times, extended %d; want 0 and 2", c.rebuilt, c.extended)
	}
	// The hand edit recorded by ctx commit is no hand edit any more (by then the log has passed a quarter
	// of this small record, which is rewritten whole: the index may be built again).
	if _, _, err := s.CommitHandEdits(bg, "k02 by hand"); err != nil {
		t.Fatal(err)
	}
	if got := sortedEdits(t, s); got != "" {
		t.Errorf("after ctx commit: %q, want none", got)
	}
}

// TestStatusIndexLogNotExtension: a log that no longer begins with the bytes the index was built with
// (rewritten by hand, the record rewritten whole) is not extended: the index is built again from the
// record, and the scan answers as before.
func TestStatusIndexLogNotExtension(t *testing.T) {
	defer store.SetLazyRecordMin(1)()
	s, dir := indexedStore(t, 40) // a record of a size that takes a few log lines before it is rewritten whole
	mustSet(t, s, "k03", "v2\n")
	if got := sortedEdits(t, s); got != "" {
		t.Fatalf("after a write: %q", got)
	}
	c := watchIndex(t)
	logPath := filepath.Join(dir, ".context", store.RecordLogFile)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The same line again, with a byte of the first one changed (a space in the JSON): what the index knew
	// of the log is not its beginning any more.
	changed := strings.Replace(string(b), `{"gen"`, `{ "gen"`, 1) + string(b)
	if err := os.WriteFile(logPath, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := sortedEdits(t, s); got != "" {
		t.Errorf("after the log was rewritten: %q, want none", got)
	}
	if c.rebuilt != 1 || c.extended != 0 {
		t.Errorf("index built %d times, extended %d; want 1 and 0", c.rebuilt, c.extended)
	}
}
