package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// batchStore is a store of n knowledge entries k0000..k(n-1) written in one batch (every seventh one
// private), checked out, whose status index holds stat data older than its stamp.
func batchStore(t *testing.T, n int) (*store.Store, string) {
	t.Helper()
	s, dir := storetest.New(t)
	var b store.Batch
	for i := 0; i < n; i++ {
		sc := store.Public
		if i%7 == 3 {
			sc = store.Private
		}
		b.Entries = append(b.Entries, store.BatchEntry{Kind: store.KnowledgeKind,
			SetEntry: store.SetEntry{Key: fmt.Sprintf("k%04d", i), Content: fmt.Sprintf("value %d\n", i), Scope: sc}})
	}
	if _, err := s.ApplyReport(bg, store.Op{Name: "import", Summary: "entries"}, b); err != nil {
		t.Fatal(err)
	}
	// Past one tick of the file system's clock, nothing written above is as new as the next index.
	time.Sleep(30 * time.Millisecond)
	for i := 0; i < 2; i++ { // the first scan builds the index from the record, the second trusts it
		if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 {
			t.Fatalf("HandEdits = %v, %v; want none", editsString(edits), err)
		}
	}
	return s, dir
}

// preloads counts the batches a scan stats on several goroutines, and the most goroutines of one.
type preloads struct {
	mu             sync.Mutex
	batches, most  int
	files, largest int
}

func watchPreload(t *testing.T) *preloads {
	p := &preloads{}
	t.Cleanup(store.SetOnStatPreload(func(files, workers int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.batches++
		p.files += files
		p.most, p.largest = max(p.most, workers), max(p.largest, files)
	}))
	return p
}

func (p *preloads) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.batches, p.most, p.files, p.largest = 0, 0, 0, 0
}

// flipLastDigit changes the content of the file at path without changing its size or modification time:
// only its change time (and content) tell.
func flipLastDigit(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-2] ^= 1 // the last digit of "value N\n"
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A big folder is stat'ed on several goroutines (git's preload-index), and every kind of hand edit is
// still found, in every part of it: the same answer as the scan on one goroutine, reading only the files
// whose stat data changed.
func TestStatusScanParallelFindsEdits(t *testing.T) {
	const n = 60
	t.Cleanup(store.SetStatPreload(3, 4, 16)) // batches of 16 files, 4 goroutines each
	s, dir := batchStore(t, n)
	kdir := filepath.Join(dir, ".context", "knowledge")
	k := func(i int) string { return filepath.Join(kdir, fmt.Sprintf("k%04d.md", i)) }

	flipLastDigit(t, k(5))  // in the second goroutine's part of the first batch
	flipLastDigit(t, k(59)) // the last file of the last batch
	if err := os.WriteFile(k(10), []byte("---\nscope: private\n---\nlonger, by hand\n"), 0o644); err != nil {
		t.Fatal(err) // k0010 is private: its scope stays the record's
	}
	if err := os.Remove(k(17)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(k(18), k(17)); err != nil { // a link to a file of the same content
		t.Fatal(err)
	}
	if err := os.Remove(k(23)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(k(31)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(k(31), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k(31), "inside.md"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "new.md"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "modified knowledge/k0005.md public; modified knowledge/k0010.md private; " +
		"modified knowledge/k0017.md private; deleted knowledge/k0023.md public; deleted knowledge/k0031.md private; " +
		"added knowledge/k0031.md/inside.md public; modified knowledge/k0059.md private; added knowledge/new.md public"
	p, l := watchPreload(t), watchScan(t)
	for round := 0; round < 2; round++ { // the second scan goes through the index the first wrote
		p.reset()
		l.reset()
		edits, err := s.HandEdits(bg)
		if got := editsString(edits); err != nil || got != want {
			t.Fatalf("round %d: %q, %v;\nwant %q", round, got, err, want)
		}
		// Every file of knowledge/ but the deleted one, the link and the folder was stat'ed in parallel.
		if p.batches != 4 || p.most != 4 || p.files != n {
			t.Errorf("round %d: %d batches of %d files on up to %d goroutines; want 4 of %d on 4", round, p.batches, p.files, p.most, n)
		}
		read := slices.Clone(l.read)
		slices.Sort(read)
		if want := []string{"knowledge/k0005.md", "knowledge/k0010.md", "knowledge/k0031.md/inside.md", "knowledge/k0059.md",
			"knowledge/new.md"}; !slices.Equal(read, want) {
			t.Errorf("round %d read %v; want %v", round, read, want)
		}
	}
	// The same scan on one goroutine: the same answer.
	restore := store.SetStatPreload(1<<20, 1, 4096)
	p.reset()
	edits, err := s.HandEdits(bg)
	if got := editsString(edits); err != nil || got != want || p.batches != 0 {
		t.Fatalf("on one goroutine: %q, %v (%d parallel batches);\nwant %q", got, err, p.batches, want)
	}
	restore()
}

// Racily clean files (gitformat-index(5)) are read by the parallel scan at every scan, and an edit of the
// same size right after a scan, with the modification time put back, is found wherever the file falls
// in the batches and the goroutines' parts.
func TestStatusScanParallelRacilyClean(t *testing.T) {
	const n = 40
	t.Cleanup(store.SetStatPreload(2, 3, 12))
	s, dir := batchStore(t, n)
	k := func(i int) string { return filepath.Join(dir, ".context", "knowledge", fmt.Sprintf("k%04d.md", i)) }
	future := time.Now().Add(time.Hour)
	for _, i := range []int{7, 33} {
		if err := os.Chtimes(k(i), future, future); err != nil {
			t.Fatal(err)
		}
	}
	p, l := watchPreload(t), watchScan(t)
	for i := 0; i < 3; i++ {
		l.reset()
		if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 {
			t.Fatalf("HandEdits = %v, %v", editsString(edits), err)
		}
		read := slices.Clone(l.read)
		slices.Sort(read)
		if want := []string{"knowledge/k0007.md", "knowledge/k0033.md"}; !slices.Equal(read, want) {
			t.Errorf("scan %d read %v; want the racily clean %v", i, read, want)
		}
	}
	if p.batches == 0 {
		t.Fatal("no folder was stat'ed in parallel")
	}
	for i := 0; i < 20; i++ {
		f := (i * 7) % n
		b, err := os.ReadFile(k(f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.HandEdits(bg); err != nil {
			t.Fatal(err)
		}
		flipLastDigit(t, k(f))
		edits, err := s.HandEdits(bg)
		if err != nil || !strings.Contains(editsString(edits), fmt.Sprintf("modified knowledge/k%04d.md", f)) {
			t.Fatalf("edit %d (k%04d) of the same size right after a scan: %q, %v", i, f, editsString(edits), err)
		}
		if err := os.WriteFile(k(f), b, 0o644); err != nil { // back to the record's content
			t.Fatal(err)
		}
	}
}

// Many entries with the default work per goroutine (500 files, git's preload-index): a store of 3,000
// entries is stat'ed in batches on several goroutines; an unchanged tree is read nowhere, and edits at
// the edges of the batches and of the goroutines' parts are found, in a new process (a new Store) too.
func TestStatusScanManyEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 300 entries")
	}
	// The bounds scaled down tenfold from the defaults' shape (500 files a goroutine, batches of 1000):
	// the same three batches on two goroutines, at a tenth of the entries (3,000 loose objects cost
	// make test ~17 s of CPU; bench/README.md "Twelfth round").
	const n = 300
	t.Cleanup(store.SetStatPreload(50, 2, 100))
	s, dir := batchStore(t, n)
	p, l := watchPreload(t), watchScan(t)
	if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 || len(l.read) != 0 {
		t.Fatalf("unchanged: %q, %v; read %d files", editsString(edits), err, len(l.read))
	}
	if p.batches != 3 || p.largest != 100 || p.most != 2 || p.files != n {
		t.Errorf("%d batches of %d files (the largest %d) on up to %d goroutines; want 3 of %d (100) on 2",
			p.batches, p.files, p.largest, p.most, n)
	}
	edited := []int{0, 49, 50, 99, 100, 199, 200, 299} // the edges of the goroutines' parts
	var want []string
	for _, i := range edited {
		flipLastDigit(t, filepath.Join(dir, ".context", "knowledge", fmt.Sprintf("k%04d.md", i)))
		sc := "public"
		if i%7 == 3 {
			sc = "private"
		}
		want = append(want, fmt.Sprintf("modified knowledge/k%04d.md %s", i, sc))
	}
	sort.Strings(want)
	for _, st := range []*store.Store{s, storetest.Open(t, dir, store.Actor{})} {
		l.reset()
		edits, err := st.HandEdits(bg)
		if got := editsString(edits); err != nil || got != strings.Join(want, "; ") {
			t.Fatalf("%q, %v;\nwant %q", got, err, strings.Join(want, "; "))
		}
		if len(l.read) != len(edited) {
			t.Errorf("read %d files; want the %d edited", len(l.read), len(edited))
		}
	}
}
