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

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// scanLog records what a hand-edit scan reads and lists.
type scanLog struct{ read, listed []string }

func watchScan(t *testing.T) *scanLog {
	l := &scanLog{}
	t.Cleanup(store.SetOnCheckoutRead(func(p string) {
		if p != store.RecordFile && p != store.RecordLogFile {
			l.read = append(l.read, p)
		}
	}))
	t.Cleanup(store.SetOnCheckoutList(func(d string) { l.listed = append(l.listed, d) }))
	return l
}

func (l *scanLog) reset() { l.read, l.listed = nil, nil }

// indexedStore is a store of n knowledge entries, checked out, whose status index holds stat data older
// than its stamp (the clock ticked between the files and the index).
func indexedStore(t *testing.T, n int) (*store.Store, string) {
	t.Helper()
	s, dir := storetest.New(t)
	for i := 0; i < n; i++ {
		if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: fmt.Sprintf("k%02d", i), Content: "v1\n"}); err != nil {
			t.Fatal(err)
		}
	}
	// File systems stamp files with a coarse clock (a few ms): past one tick, nothing written above is as
	// new as the index the next scans write.
	time.Sleep(30 * time.Millisecond)
	for i := 0; i < 2; i++ { // the first scan builds the index from the record, the second trusts it
		if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 {
			t.Fatalf("HandEdits = %v, %v; want none", edits, err)
		}
	}
	return s, dir
}

func editsString(es []store.HandEdit) string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s %s %s", e.Change, e.Path, e.Scope))
	}
	return strings.Join(out, "; ")
}

// With the status index, a scan of an unchanged .context/ reads no file and lists no folder: one lstat
// per file and one stat per folder, as git status with its index and untracked cache.
func TestStatusIndexStatsOnly(t *testing.T) {
	s, dir := indexedStore(t, 30)
	l := watchScan(t)
	edits, err := s.HandEdits(bg)
	if err != nil || len(edits) != 0 {
		t.Fatalf("HandEdits = %v, %v", edits, err)
	}
	if len(l.read) != 0 || len(l.listed) != 0 {
		t.Errorf("an unchanged tree: read %v, listed %v; want nothing", l.read, l.listed)
	}
	// ctx status in a new process: the same, and it parses no record.
	s = storetest.Open(t, dir, store.Actor{})
	if _, err := s.Status(bg); err != nil { // the counts of these tips go into the index
		t.Fatal(err)
	}
	s = storetest.Open(t, dir, store.Actor{})
	l.reset()
	before := store.RecordsParsed()
	st, err := s.Status(bg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Counts["knowledge"] != 30 || len(st.HandEdits) != 0 || st.CheckoutBehind {
		t.Errorf("status: counts %v, hand edits %v, behind %v", st.Counts, st.HandEdits, st.CheckoutBehind)
	}
	if n := store.RecordsParsed() - before; n != 0 || len(l.read) != 0 || len(l.listed) != 0 {
		t.Errorf("ctx status of an unchanged store parsed the record %d times, read %v, listed %v", n, l.read, l.listed)
	}
	// After a write (a new record), the index is built from the record again but keeps what it verified:
	// at most the written file is read and its folder listed (and .context/ itself, where the record's
	// files were replaced).
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k07", Content: "v2\n"}); err != nil {
		t.Fatal(err)
	}
	l.reset()
	if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 {
		t.Fatalf("after a write: %v, %v", edits, err)
	}
	if len(l.read) > 1 || len(l.read) == 1 && l.read[0] != "knowledge/k07.md" {
		t.Errorf("after a write the scan read %v; want at most the written file", l.read)
	}
	for _, d := range l.listed {
		if d != "." && d != "knowledge" {
			t.Errorf("after a write the scan listed %v; want at most .context/ and knowledge/", l.listed)
		}
	}
	// A file added by hand and a file the record no longer has (its entry deleted with the file kept) are
	// found after a write too.
	if err := os.WriteFile(filepath.Join(dir, ".context", "knowledge", "hand.md"), []byte("hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HandEdits(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k08", Content: "v2\n"}); err != nil {
		t.Fatal(err)
	}
	edits, err = s.HandEdits(bg)
	if got := editsString(edits); err != nil || got != "added knowledge/hand.md public" {
		t.Errorf("a hand-added file after a write: %q, %v", got, err)
	}
}

// Every kind of hand edit is found through the index: an edit in place of the same size with the
// modification time put back (the change time tells), a file replaced by a symbolic link, a deleted file,
// a new file, a new file in a new folder, a file replaced by a folder; only the folders that changed are
// listed and only the files whose stat data changed are read.
func TestStatusIndexFindsEdits(t *testing.T) {
	s, dir := indexedStore(t, 12)
	kdir := filepath.Join(dir, ".context", "knowledge")
	k := func(i int) string { return filepath.Join(kdir, fmt.Sprintf("k%02d.md", i)) }

	// In place, same size, same modification time.
	fi, err := os.Stat(k(1))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(k(1))
	if err := os.WriteFile(k(1), []byte(strings.Replace(string(b), "v1\n", "v9\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(k(1), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	l := watchScan(t)
	edits, err := s.HandEdits(bg)
	if got, want := editsString(edits), "modified knowledge/k01.md public"; err != nil || got != want {
		t.Fatalf("same-size edit: %q, %v; want %q", got, err, want)
	}
	if !slices.Equal(l.read, []string{"knowledge/k01.md"}) || len(l.listed) != 0 {
		t.Errorf("same-size edit: read %v, listed %v; want k01 read, nothing listed", l.read, l.listed)
	}

	// A symbolic link where a file was (to the same content), a deleted file, a new file, a file in a new
	// folder, a folder where a file was.
	if err := os.Remove(k(2)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(k(3), k(2)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(k(4)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "new.md"), []byte("---\nscope: private\n---\nnew\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(kdir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "sub", "deep.md"), []byte("deep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(k(5)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(k(5), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k(5), "inside.md"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "added knowledge/k05.md/inside.md public; added knowledge/new.md private; added knowledge/sub/deep.md public; " +
		"deleted knowledge/k04.md public; deleted knowledge/k05.md public; " +
		"modified knowledge/k01.md public; modified knowledge/k02.md public"
	for round := 0; round < 2; round++ { // the second scan goes through the index the first wrote
		l.reset()
		edits, err = s.HandEdits(bg)
		sort.Slice(edits, func(i, j int) bool {
			return string(edits[i].Change)+edits[i].Path < string(edits[j].Change)+edits[j].Path
		})
		if got := editsString(edits); err != nil || got != want {
			t.Fatalf("round %d: %q, %v;\nwant %q", round, got, err, want)
		}
		for _, d := range l.listed {
			if d == "." {
				t.Errorf("round %d listed .context/ itself, which did not change (%v)", round, l.listed)
			}
		}
	}
	// A file added at the top of .context/ is found too.
	if err := os.WriteFile(filepath.Join(dir, ".context", "top.md"), []byte("top\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edits, err = s.HandEdits(bg)
	if err != nil || !strings.Contains(editsString(edits), "added top.md public") {
		t.Fatalf("a new file at the top: %q, %v", editsString(edits), err)
	}
}

// Racily clean entries (gitformat-index(5)): a file whose stat data are not older than the index's stamp
// is read at every scan, since an edit in the same clock tick can leave its stat data as they were; an
// edit of the same size right after a scan, with the modification time put back, is found.
func TestStatusIndexRacilyClean(t *testing.T) {
	s, dir := indexedStore(t, 5)
	k := filepath.Join(dir, ".context", "knowledge", "k03.md")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(k, future, future); err != nil {
		t.Fatal(err)
	}
	l := watchScan(t)
	for i := 0; i < 3; i++ {
		l.reset()
		if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 {
			t.Fatalf("HandEdits = %v, %v", edits, err)
		}
		if !slices.Equal(l.read, []string{"knowledge/k03.md"}) {
			t.Errorf("scan %d read %v; want the racily clean k03 only", i, l.read)
		}
	}
	// Edits right after a scan, in the same clock tick when the machine is fast enough: found every time.
	for i := 0; i < 20; i++ {
		p := filepath.Join(dir, ".context", "knowledge", fmt.Sprintf("k%02d.md", i%5))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.HandEdits(bg); err != nil {
			t.Fatal(err)
		}
		edited := []byte(string(b[:len(b)-2]) + fmt.Sprintf("%c\n", 'a'+i))
		if err := os.WriteFile(p, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		edits, err := s.HandEdits(bg)
		if err != nil || !strings.Contains(editsString(edits), "modified "+fmt.Sprintf("knowledge/k%02d.md", i%5)) {
			t.Fatalf("edit %d of the same size right after a scan: %q, %v", i, editsString(edits), err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil { // back to the record's content
			t.Fatal(err)
		}
	}
}

// A damaged or foreign status index is never trusted: the scan builds it again from the record.
func TestStatusIndexDamaged(t *testing.T) {
	s, dir := indexedStore(t, 6)
	k := filepath.Join(dir, ".context", "knowledge", "k02.md")
	if err := os.WriteFile(k, []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := s.StatusIndexPath()
	good, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0xff
	for name, b := range map[string][]byte{
		"empty": {}, "cut short": good[:len(good)/2], "a byte changed": flipped, "not an index": []byte("CTXSIDX1garbage"),
	} {
		if err := os.WriteFile(idx, b, 0o600); err != nil {
			t.Fatal(err)
		}
		edits, err := s.HandEdits(bg)
		if got := editsString(edits); err != nil || got != "modified knowledge/k02.md public" {
			t.Errorf("%s index: %q, %v", name, got, err)
		}
	}
}

// ctx status keeps its entry counts per tips (and per public-only view), and does not remove the hooks'
// stamp: it changes nothing of .context/ (opening a store, which may refresh, does).
func TestStatusIndexCounts(t *testing.T) {
	s, dir := indexedStore(t, 3)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "secret", Content: "p\n", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
	stamp := s.GitPath(store.HookStampFile)
	if err := os.WriteFile(stamp, []byte("stamp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{4, 4, 5} {
		if i == 2 {
			if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "more", Content: "m\n"}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(stamp, []byte("stamp\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		st, err := s.Status(bg)
		if err != nil || st.Counts["knowledge"] != want {
			t.Fatalf("status %d: knowledge %d, %v; want %d", i, st.Counts["knowledge"], err, want)
		}
		pub, err := s.Status(store.WithPublicOnly(bg))
		if err != nil || pub.Counts["knowledge"] != want-1 {
			t.Fatalf("public-only status %d: knowledge %d, %v; want %d", i, pub.Counts["knowledge"], err, want-1)
		}
		if _, err := os.Stat(stamp); err != nil {
			t.Errorf("status %d removed the hooks' stamp: %v", i, err)
		}
		// Another process's status: its counts come from the index.
		if st, err := storetest.Open(t, dir, store.Actor{}).Status(bg); err != nil || st.Counts["knowledge"] != want {
			t.Fatalf("status %d in a new process: %v, %v", i, st.Counts, err)
		}
		if err := os.WriteFile(stamp, []byte("stamp\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
