package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// refreshKilledAfter runs a refresh of s that dies (a panic, as a kill would) after n files; it reports
// whether it died.
func refreshKilledAfter(t *testing.T, s *store.Store, n int) (died bool) {
	t.Helper()
	restore := store.SetRefreshInterrupt(func(done int) {
		if done == n {
			panic("killed")
		}
	})
	defer restore()
	defer func() {
		if r := recover(); r != nil {
			died = true
		}
	}()
	if _, err := s.Refresh(bg); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	return false
}

// TestInterruptedRefreshIsNoHandEdit: a refresh killed after N of its files (the post-checkout hook killed,
// or out of time) leaves .context/ half written; the next ctx status, ctx commit or pull sees no hand edit
// and records no commit and no conflict, and the next refresh completes the checkout. Both directions (the
// branch moved forward, and back as a `git checkout` of an older state would) and every N.
func TestInterruptedRefreshIsNoHandEdit(t *testing.T) {
	s, dir := storetest.New(t)
	const files = 12
	write := func(version string) string {
		t.Helper()
		_, err := s.Write(bg, store.Op{Name: "test", Summary: version}, func(v *store.View) (store.Edits, error) {
			ed := store.Edits{}
			for i := 0; i < files; i++ {
				ed.Put(store.Public, fmt.Sprintf("knowledge/k%02d.md", i), []byte(fmt.Sprintf("---\nauthor: a\n---\n%s of %d\n", version, i)))
			}
			if version == "v2" {
				ed.Put(store.Public, "knowledge/only-v2.md", []byte("new in v2\n"))
				ed.Del(store.Public, "knowledge/only-v1.md")
			} else {
				ed.Put(store.Public, "knowledge/only-v1.md", []byte("gone in v2\n"))
			}
			return ed, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return testenv.Git(t, dir, "rev-parse", "ctx")
	}
	v1 := write("v1")
	v2 := write("v2")
	ctxDir := filepath.Join(dir, ".context")
	for n := 1; n <= files+1; n++ {
		for _, dir2 := range []struct{ from, to string }{{v2, v1}, {v1, v2}} {
			testenv.Git(t, dir, "update-ref", "refs/heads/ctx", dir2.from)
			if _, err := s.Refresh(bg); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, dir, "update-ref", "refs/heads/ctx", dir2.to)
			if !refreshKilledAfter(t, s, n) {
				t.Fatalf("the refresh was not interrupted after %d files", n)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "ctx", "checkout-journal.json")); err != nil {
				t.Fatalf("no journal after the interrupted refresh: %v", err)
			}
			edits, err := s.HandEdits(bg)
			if err != nil {
				t.Fatal(err)
			}
			if len(edits) != 0 {
				t.Fatalf("after a refresh killed at file %d: %d spurious hand edits: %+v", n, len(edits), edits)
			}
			before := storetest.Count(t, dir, "ctx")
			c, edits, err := s.CommitHandEdits(bg, "")
			if err != nil || c.Changed() || len(edits) != 0 {
				t.Fatalf("ctx commit after a killed refresh: %+v %+v %v", c, edits, err)
			}
			if storetest.Count(t, dir, "ctx") != before {
				t.Fatalf("ctx commit made a commit")
			}
			if _, err := s.Refresh(bg); err != nil {
				t.Fatal(err)
			}
			want := "v1"
			if dir2.to == v2 {
				want = "v2"
			}
			for i := 0; i < files; i++ {
				b, err := os.ReadFile(filepath.Join(ctxDir, "knowledge", fmt.Sprintf("k%02d.md", i)))
				if err != nil || !strings.Contains(string(b), want+" of") {
					t.Fatalf("after the next refresh k%02d.md = %q %v, want %s", i, b, err, want)
				}
			}
			_, err1 := os.Stat(filepath.Join(ctxDir, "knowledge", "only-v1.md"))
			_, err2 := os.Stat(filepath.Join(ctxDir, "knowledge", "only-v2.md"))
			if (err1 == nil) != (want == "v1") || (err2 == nil) != (want == "v2") {
				t.Fatalf("after the next refresh (%s): only-v1 %v, only-v2 %v", want, err1, err2)
			}
			st, err := s.Status(bg)
			if err != nil || len(st.HandEdits) != 0 {
				t.Fatalf("status: %+v %v", st, err)
			}
			if ents, _ := os.ReadDir(filepath.Join(ctxDir, "knowledge")); len(ents) != files+1 {
				t.Fatalf("knowledge/ holds %d files (a temporary file left?)", len(ents))
			}
		}
	}
}

// TestInterruptedRefreshKeepsHandEdits: a hand edit made before or after an interrupted refresh is still a
// hand edit (and is never overwritten).
func TestInterruptedRefreshKeepsHandEdits(t *testing.T) {
	s, dir := storetest.New(t)
	for i := 0; i < 6; i++ {
		if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: fmt.Sprintf("k%d", i), Content: "v1\n"}); err != nil {
			t.Fatal(err)
		}
	}
	v1 := testenv.Git(t, dir, "rev-parse", "ctx")
	for i := 0; i < 6; i++ {
		if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: fmt.Sprintf("k%d", i), Content: "v2\n"}); err != nil {
			t.Fatal(err)
		}
	}
	v2 := testenv.Git(t, dir, "rev-parse", "ctx")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", v1)
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	// Edited before the refresh: k5 (the refresh keeps it). Edited after the kill: k0 (written by the
	// refresh, then edited) and k4 (not reached by the refresh).
	k := func(i int) string { return filepath.Join(dir, ".context", "knowledge", fmt.Sprintf("k%d.md", i)) }
	if err := os.WriteFile(k(5), []byte("mine before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", v2)
	if !refreshKilledAfter(t, s, 2) {
		t.Fatal("not interrupted")
	}
	if err := os.WriteFile(k(0), []byte("mine after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k(4), []byte("mine after too\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edits, err := s.HandEdits(bg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range edits {
		got = append(got, e.Path+":"+e.Change.String())
	}
	if strings.Join(got, " ") != "knowledge/k0.md:modified knowledge/k4.md:modified knowledge/k5.md:modified" {
		t.Fatalf("hand edits = %v", got)
	}
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{0: "mine after\n", 4: "mine after too\n", 5: "mine before\n"} {
		if b, _ := os.ReadFile(k(i)); string(b) != want {
			t.Errorf("k%d = %q, want the hand edit %q", i, b, want)
		}
	}
}
