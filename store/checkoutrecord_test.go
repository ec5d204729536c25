package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// recordStore is a store of n knowledge entries whose checkout record is read lazily and changed by
// appends to RecordLogFile (as at 10,000 entries), with a second Store of the same repository ("another
// process") for writes behind its back.
func recordStore(t *testing.T, n int) (s, other *store.Store, dir string) {
	t.Helper()
	t.Cleanup(store.SetLazyRecordMin(1))
	s, dir = storetest.New(t)
	edit(t, s, func(ed store.Edits) {
		for i := 0; i < n; i++ {
			ed.Put(store.Public, fmt.Sprintf("knowledge/k%02d.md", i), []byte(fmt.Sprintf("entry %d\n", i)))
		}
	})
	return s, storetest.Open(t, dir, store.Actor{}), dir
}

// edit makes one commit of the edits fn makes.
func edit(t *testing.T, s *store.Store, fn func(store.Edits)) {
	t.Helper()
	if _, err := s.Write(bg, store.Op{Name: "test", Summary: "test"}, func(*store.View) (store.Edits, error) {
		ed := store.Edits{}
		fn(ed)
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func readCtx(t *testing.T, dir, p string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".context", filepath.FromSlash(p)))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// checkMirror fails unless every file of the public ref is in .context/ with the ref's content (but the
// hand-edited ones), no other knowledge file is there, and the record (its file and log read whole) names
// each with the blob of the ref and the tip as its commit.
func checkMirror(t *testing.T, s *store.Store, dir string, handEdited ...string) {
	t.Helper()
	files := storetest.Files(t, dir, "refs/heads/ctx")
	rec, err := s.ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	if tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"); rec.Commits[store.Public] != tip {
		t.Errorf("record mirrors %s, tip is %s", rec.Commits[store.Public], tip)
	}
	for p := range files {
		if slices.Contains(handEdited, p) {
			continue
		}
		want := storetest.Show(t, dir, "refs/heads/ctx", p) // without its last newline
		blob := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx:"+p)
		if got := rec.Files[p]; got.Blob != blob {
			t.Errorf("record: %s = %+v, want blob %s", p, got, blob)
		}
		if got, ok := readCtx(t, dir, p); !ok || strings.TrimSuffix(got, "\n") != want {
			t.Errorf(".context/%s = %q (%v), want %q", p, got, ok, want)
		}
	}
	for p := range rec.Files {
		if !files[p] {
			t.Errorf("record holds %s, which the ref does not", p)
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, ".context", "knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !files["knowledge/"+e.Name()] {
			t.Errorf(".context/knowledge/%s is not on the ref", e.Name())
		}
	}
}

// A refresh of a big record looks up and appends only what changed: the record file keeps its bytes, the
// log grows by one line per refresh, and the result (record read whole, files) is the one of a full
// refresh, through changes, deletions, renames, a hand edit and a branch moved backwards.
func TestRefreshIncrementalRecord(t *testing.T) {
	s, other, dir := recordStore(t, 200)
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(dir, ".context", store.RecordFile)
	logPath := filepath.Join(dir, ".context", store.RecordLogFile)
	base, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	start := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	checkMirror(t, s, dir)

	steps := []struct {
		name       string
		fn         func(store.Edits)
		handEdited []string
	}{
		{"change", func(ed store.Edits) { ed.Put(store.Public, "knowledge/k01.md", []byte("changed\n")) }, nil},
		{"delete", func(ed store.Edits) { ed.Del(store.Public, "knowledge/k02.md") }, nil},
		{"rename", func(ed store.Edits) {
			ed.Del(store.Public, "knowledge/k03.md")
			ed.Put(store.Public, "knowledge/k03-renamed.md", []byte("entry 3\n"))
		}, nil},
		{"hand-edited file changed on the branch", func(ed store.Edits) {
			ed.Put(store.Public, "knowledge/k04.md", []byte("theirs\n"))
		}, []string{"knowledge/k04.md"}},
	}
	lines := 0
	for _, st := range steps {
		if len(st.handEdited) > 0 {
			if err := os.WriteFile(filepath.Join(dir, ".context", "knowledge", "k04.md"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Another process writes (its own refresh is of its own Store: the record moves on), then the ref
		// is put back and moved forward by git, so that s's refresh has this one change to make.
		edit(t, other, st.fn)
		tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
		testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tip+"^")
		if _, err := other.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tip)
		parsed := store.RecordsParsed()
		r, err := s.Refresh(bg)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if n := store.RecordsParsed() - parsed; n != 0 {
			t.Errorf("%s: the refresh parsed the whole record %d times, want none", st.name, n)
		}
		if !slices.Equal(r.Kept, st.handEdited) {
			t.Errorf("%s: kept %v, want %v", st.name, r.Kept, st.handEdited)
		}
		checkMirror(t, s, dir, st.handEdited...)
		lines += 3 // the refreshes of the step: of the write, after the ref moved back, of s
		if b, err := os.ReadFile(recPath); err != nil || string(b) != string(base) {
			t.Fatalf("%s: the record file was rewritten (%v)", st.name, err)
		}
		if b, err := os.ReadFile(logPath); err != nil || strings.Count(string(b), "\n") != lines {
			t.Errorf("%s: log has %d lines, want %d (%v)", st.name, strings.Count(string(b), "\n"), lines, err)
		}
	}
	if got, _ := readCtx(t, dir, "knowledge/k04.md"); got != "mine\n" {
		t.Errorf("the hand edit of k04 was overwritten: %q", got)
	}
	if edits, err := s.HandEdits(bg); err != nil || len(edits) != 1 || edits[0].Path != "knowledge/k04.md" {
		t.Errorf("HandEdits = %v, %v; want k04 only", edits, err)
	}

	// Backwards, past every step: the old contents come back, the renamed file goes, the hand edit stays.
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", start)
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	checkMirror(t, s, dir, "knowledge/k04.md")
	if got, _ := readCtx(t, dir, "knowledge/k02.md"); got != "entry 2\n" {
		t.Errorf("k02 not restored: %q", got)
	}
}

// The log is folded into the record when it reaches a quarter of it (the record written whole, the log
// removed), and a log whose lines belong to another writing of the record is ignored, as is a last line
// cut short.
func TestRecordLogCompaction(t *testing.T) {
	s, other, dir := recordStore(t, 8)
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(dir, ".context", store.RecordFile)
	logPath := filepath.Join(dir, ".context", store.RecordLogFile)
	compacted := false
	for i := 0; i < 20 && !compacted; i++ {
		edit(t, other, func(ed store.Edits) { ed.Put(store.Public, "knowledge/k00.md", []byte(fmt.Sprint(i, "\n"))) })
		if _, err := s.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(logPath)
		compacted = i > 0 && os.IsNotExist(err)
	}
	if !compacted {
		t.Fatal("the log never was folded into the record")
	}
	checkMirror(t, s, dir)

	// Lines of another writing of the record (left by a crash after the record was written whole) and a
	// line cut short change nothing.
	edit(t, other, func(ed store.Edits) { ed.Put(store.Public, "knowledge/k05.md", []byte("five\n")) })
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	before, err := s.ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"gen":"0000000000000000","commits":{"public":"%s"},"files":{"knowledge/k06.md":null}}`+"\n", strings.Repeat("0", 40))
	fmt.Fprintf(f, `{"gen":"%s","commits":{"public":"%s"},"files":{"knowledge/k07.md":null}`, before.Gen, strings.Repeat("0", 40))
	f.Close()
	after, err := s.ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	if after.Commits[store.Public] != before.Commits[store.Public] || len(after.Files) != len(before.Files) {
		t.Errorf("foreign or cut lines applied: commits %v, %d files (before %v, %d)", after.Commits, len(after.Files),
			before.Commits, len(before.Files))
	}
	// The next refresh rewrites the record whole rather than append after a cut line.
	edit(t, other, func(ed store.Edits) { ed.Put(store.Public, "knowledge/k06.md", []byte("six\n")) })
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logPath); !os.IsNotExist(err) {
		t.Errorf("log after a cut line: %v, want it folded into the record", err)
	}
	checkMirror(t, s, dir)
	_ = recPath
}

// A corrupt or missing record makes the refresh compare every path: nothing differing from the ref is
// overwritten (it is a hand edit as far as ctx can tell), the rest is checked out.
func TestRefreshCorruptRecord(t *testing.T) {
	for _, c := range []string{"corrupt", "missing"} {
		t.Run(c, func(t *testing.T) {
			s, other, dir := recordStore(t, 6)
			// The ref moves past what the record says only once the record is broken.
			edit(t, other, func(ed store.Edits) { ed.Put(store.Public, "knowledge/k03.md", []byte("three\n")) })
			tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
			testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tip+"^")
			if _, err := s.Refresh(bg); err != nil {
				t.Fatal(err)
			}
			rec := filepath.Join(dir, ".context", store.RecordFile)
			if c == "corrupt" {
				if err := os.WriteFile(rec, []byte(`{"commits":{"public":"`), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Remove(rec); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".context", "knowledge", "k01.md"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, ".context", "knowledge", "k02.md")); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tip)
			r, err := s.Refresh(bg)
			if err != nil {
				t.Fatal(err)
			}
			// Without a record, a file that differs from the ref may be a hand edit: kept (k01 is one; k03
			// is a file the ref changed, which ctx cannot tell apart), never overwritten. A file missing is
			// checked out again.
			if !slices.Equal(r.Kept, []string{"knowledge/k01.md", "knowledge/k03.md"}) {
				t.Errorf("kept %v, want k01 and k03", r.Kept)
			}
			if got, _ := readCtx(t, dir, "knowledge/k01.md"); got != "mine\n" {
				t.Errorf("k01 overwritten: %q", got)
			}
			if got, _ := readCtx(t, dir, "knowledge/k02.md"); got != "entry 2\n" {
				t.Errorf("k02 not checked out again: %q", got)
			}
			checkMirror(t, s, dir, "knowledge/k01.md", "knowledge/k03.md")
		})
	}
}
