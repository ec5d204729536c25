package store_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// HandEdits trusts the stat data of the checkout record as git trusts its index: a file whose stat data
// are unchanged is not read; a file changed in place (same size, modification time put back) or one as
// new as the record is read and compared.
func TestHandEditsUsesStatData(t *testing.T) {
	// The record written whole by every refresh: the entries of a log line are newer than the record and
	// read by design (TestStatusIndexAfterWrite covers that path).
	defer store.SetLazyRecordMin(math.MaxInt)()
	s, dir := storetest.New(t)
	const n = 40
	for i := 0; i < n; i++ {
		if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: fmt.Sprintf("k%02d", i), Content: "v1\n"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, ".context", store.RecordFile)
	// The record is written after the files; make it clearly newer than all of them (as it is when the
	// clock ticked between the last file and the record).
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(record, later, later); err != nil {
		t.Fatal(err)
	}
	var read []string
	defer store.SetOnCheckoutRead(func(p string) {
		if p != store.RecordFile && p != store.RecordLogFile {
			read = append(read, p)
		}
	})()
	edits, err := s.HandEdits(bg)
	if err != nil || len(edits) != 0 {
		t.Fatalf("HandEdits = %v, %v; want none", edits, err)
	}
	if len(read) != 0 {
		t.Errorf("HandEdits read %d unchanged files (%v), want none", len(read), read[:min(len(read), 3)])
	}

	// An edit in place of the same size with the modification time put back: the change time and the
	// content tell.
	k := filepath.Join(dir, ".context", "knowledge", "k07.md")
	fi, err := os.Stat(k)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "v1\n", "v9\n", 1)
	if err := os.WriteFile(k, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(k, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	read = nil
	edits, err = s.HandEdits(bg)
	if err != nil || len(edits) != 1 || edits[0].Path != "knowledge/k07.md" || edits[0].Change != store.ChangeModified {
		t.Fatalf("HandEdits = %v, %v; want knowledge/k07.md modified", edits, err)
	}
	if !slices.Equal(read, []string{"knowledge/k07.md"}) {
		t.Errorf("HandEdits read %v, want only the changed file", read)
	}

	// Racily clean: with a record no newer than the files, and no status index that verified them since,
	// every file is read.
	if err := os.Remove(s.StatusIndexPath()); err != nil {
		t.Fatal(err)
	}
	past := time.Unix(1, 0)
	if err := os.Chtimes(record, past, past); err != nil {
		t.Fatal(err)
	}
	read = nil
	if edits, err = s.HandEdits(bg); err != nil || len(edits) != 1 {
		t.Fatalf("HandEdits = %v, %v", edits, err)
	}
	if len(read) < n {
		t.Errorf("HandEdits read %d files with a record older than them, want all %d", len(read), n)
	}
}

// ctx status parses the checkout record at most once, however many of its steps read it (the refresh, the
// hand-edit scan, the comparison with the tips).
func TestStatusParsesRecordOnce(t *testing.T) {
	s, dir := storetest.New(t)
	for i := 0; i < 3; i++ {
		if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: fmt.Sprintf("k%d", i), Content: "v1\n"}); err != nil {
			t.Fatal(err)
		}
	}
	s = storetest.Open(t, dir, store.Actor{}) // as a new process
	before := store.RecordsParsed()
	st, err := s.Status(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n := store.RecordsParsed() - before; n > 1 {
		t.Errorf("ctx status parsed the checkout record %d times, want at most once", n)
	}
	if st.CheckoutBehind || len(st.HandEdits) != 0 || st.Counts["knowledge"] != 3 {
		t.Errorf("status = behind %v, hand edits %v, counts %v", st.CheckoutBehind, st.HandEdits, st.Counts)
	}
	// A record changed by another process is parsed again.
	if err := os.WriteFile(filepath.Join(dir, ".context", "knowledge", "k1.md"), []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := storetest.Open(t, dir, store.Actor{})
	if _, err := other.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k2", Content: "v2\n"}); err != nil {
		t.Fatal(err)
	}
	if st, err = s.Status(bg); err != nil {
		t.Fatal(err)
	}
	if st.CheckoutBehind || len(st.HandEdits) != 1 || st.HandEdits[0].Path != "knowledge/k1.md" {
		t.Errorf("after another process wrote: behind %v, hand edits %v", st.CheckoutBehind, st.HandEdits)
	}
}

// A refresh trusts the record's stat data as HandEdits does: the files it replaces after the branch moved
// are not read when their stat data are the record's and older than it; a file edited in place (same size,
// modification time put back) is read and kept as a hand edit; with a record no newer than the files
// (racily clean), every file is read.
func TestRefreshUsesStatData(t *testing.T) {
	s, dir := storetest.New(t)
	const n = 40
	set := func(v string) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: fmt.Sprintf("k%02d", i), Content: v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	set("v1\n")
	repo, ref := s.GitRepo(), s.BranchRef()
	tip1, err := repo.Resolve(bg, ref)
	if err != nil {
		t.Fatal(err)
	}
	set("v2\n")
	tip2, err := repo.Resolve(bg, ref)
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, ".context", store.RecordFile)
	// move puts the branch at to (from before) and refreshes.
	move := func(from, to gitstore.Hash) *store.Refreshed {
		t.Helper()
		if err := repo.UpdateRef(bg, ref, from, to, "test"); err != nil {
			t.Fatal(err)
		}
		r, err := s.Refresh(bg)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var read []string
	defer store.SetOnCheckoutRead(func(p string) {
		if strings.HasPrefix(p, "knowledge/") {
			read = append(read, p)
		}
	})()
	later := time.Now().Add(2 * time.Second)
	move(tip2, tip1)
	if err := os.Chtimes(record, later, later); err != nil {
		t.Fatal(err)
	}
	read = nil
	r := move(tip1, tip2)
	if len(r.Written) != n || len(r.Kept) != 0 {
		t.Fatalf("refresh wrote %d, kept %v; want %d written", len(r.Written), r.Kept, n)
	}
	if len(read) != 0 {
		t.Errorf("refresh read %d files whose stat data are the record's (%v), want none", len(read), read[:min(len(read), 3)])
	}
	k := filepath.Join(dir, ".context", "knowledge", "k07.md")
	if b, err := os.ReadFile(k); err != nil || !strings.Contains(string(b), "v2\n") {
		t.Fatalf("k07 after the refresh: %q, %v", b, err)
	}

	// An edit in place of the same size with the modification time put back is read and kept.
	move(tip2, tip1)
	if err := os.Chtimes(record, later, later); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(k)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "v1\n", "v9\n", 1)
	if err := os.WriteFile(k, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(k, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	read = nil
	r = move(tip1, tip2)
	if !slices.Equal(r.Kept, []string{"knowledge/k07.md"}) || len(r.Written) != n-1 {
		t.Fatalf("refresh kept %v, wrote %d; want knowledge/k07.md kept, %d written", r.Kept, len(r.Written), n-1)
	}
	if !slices.Equal(read, []string{"knowledge/k07.md"}) {
		t.Errorf("refresh read %v, want only the edited file", read)
	}
	if got, _ := os.ReadFile(k); string(got) != edited {
		t.Errorf("the hand edit was overwritten: %q", got)
	}
	if _, err := s.Restore(bg, []string{"knowledge/k07.md"}); err != nil {
		t.Fatal(err)
	}

	// Racily clean: a record no newer than the files; every file is read.
	move(tip2, tip1)
	past := time.Unix(1, 0)
	if err := os.Chtimes(record, past, past); err != nil {
		t.Fatal(err)
	}
	read = nil
	if r = move(tip1, tip2); len(r.Written) != n || len(r.Kept) != 0 {
		t.Fatalf("refresh wrote %d, kept %v; want %d written", len(r.Written), r.Kept, n)
	}
	if len(read) != n {
		t.Errorf("refresh read %d files with a record older than them, want all %d", len(read), n)
	}
}
