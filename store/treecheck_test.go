package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// hostileEntry is one entry a hostile commit adds, by raw names ("..", "a/b" are single names).
type hostileEntry struct {
	names []string
	mode  string
}

// hostileEntries are the kinds of entry of a hostile context branch (docs/security.md): ".." (nested),
// "/" in a name, ".git" in any case and its NTFS and HFS+ aliases inside .context/, a symbolic link.
// Each ".." path comes with the path it cleans to, which made a lookup of the cleaned path find the
// blob before ctx checked names.
var hostileEntries = []hostileEntry{
	{[]string{"..", "..", ".config", "git", "config"}, "100644"},
	{[]string{".config", "git", "config"}, "100644"},
	{[]string{"..", ".git", "hooks", "post-checkout"}, "100755"},
	{[]string{".git", "hooks", "post-checkout"}, "100755"},
	{[]string{"../../outside-slash"}, "100644"},
	{[]string{"outside-slash"}, "100644"},
	{[]string{"knowledge/slash.md"}, "100644"},
	{[]string{".GIT", "config"}, "100644"},
	{[]string{"git~1", "config"}, "100644"},
	{[]string{".git.", "config"}, "100644"},
	{[]string{".git ", "config"}, "100644"},
	{[]string{".git::$INDEX_ALLOCATION", "config"}, "100644"},
	{[]string{".g\u200cit", "config"}, "100644"},
	{[]string{"knowledge", "link.md"}, "120000"},
}

// hostileCommit commits, on top of ref in the repository at dir, a tree holding every entry of es with
// a payload (a link points at target), and returns the commit.
func hostileCommit(t *testing.T, dir, ref string, es []hostileEntry, target string) string {
	t.Helper()
	parent := testenv.Git(t, dir, "rev-parse", ref)
	tree := testenv.Git(t, dir, "rev-parse", ref+"^{tree}")
	payload := testenv.Blob(t, dir, "[core]\n\tfsmonitor = touch PWNED\n")
	link := testenv.Blob(t, dir, target)
	for _, e := range es {
		h := payload
		if e.mode == "120000" {
			h = link
		}
		tree = testenv.WithEntry(t, dir, tree, e.names, e.mode, h)
	}
	return testenv.CommitTree(t, dir, tree, parent, "hostile")
}

// fileState maps every file below root (links as "link -> target") to a digest of its content, leaving
// out git's object store and ctx's own folder in the git dir.
func fileState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if de.IsDir() {
			if strings.HasSuffix(rel, ".git/objects") || strings.HasSuffix(rel, filepath.Join(".git", "ctx")) {
				return filepath.SkipDir
			}
			return nil
		}
		if de.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			out[rel] = "link -> " + l
			return nil
		}
		b, _ := os.ReadFile(p)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:8])
		return nil
	})
	return out
}

// diffState lists the paths that differ between two fileStates.
func diffState(a, b map[string]string) []string {
	var out []string
	for p, v := range b {
		if a[p] != v {
			out = append(out, "+"+p)
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			out = append(out, "-"+p)
		}
	}
	sort.Strings(out)
	return out
}

// TestRefreshNeverWritesOutside: the context branch moved by C git to a hostile commit (a plain
// `git fetch origin ctx:ctx`, no fsck) is refreshed: nothing is written outside .context/, no hostile
// name is created inside it, every entry is reported (unsafe), and the rest is checked out.
func TestRefreshNeverWritesOutside(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "keep", Content: "keep\n"}); err != nil {
		t.Fatal(err)
	}
	base := testenv.Git(t, dir, "rev-parse", "ctx")
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.MkdirAll(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	hostile := hostileCommit(t, dir, "ctx", hostileEntries, outside)
	// A good write on top of the hostile commit: its file must still be checked out.
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", hostile)
	other := storetest.Open(t, dir, store.Actor{})
	if _, err := other.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "after", Content: "after\n"}); err != nil {
		t.Fatal(err)
	}
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	// Now a fresh checkout (no record) and an incremental one both face the hostile tree.
	root := filepath.Dir(dir)
	for _, fresh := range []bool{true, false} {
		if fresh {
			if err := s.ForgetCheckout(); err != nil {
				t.Fatal(err)
			}
		} else {
			testenv.Git(t, dir, "update-ref", "refs/heads/ctx", base)
			if _, err := s.Refresh(bg); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tip)
		}
		before := fileState(t, root)
		r, err := s.Refresh(bg)
		if err != nil {
			t.Fatalf("refresh (fresh %v): %v", fresh, err)
		}
		after := fileState(t, root)
		var changed []string
		for _, p := range diffState(before, after) {
			if !strings.HasPrefix(p[1:], filepath.Join(filepath.Base(dir), ".context")+"/") {
				changed = append(changed, p)
			}
		}
		if len(changed) > 0 {
			t.Errorf("refresh (fresh %v) wrote outside .context/: %v", fresh, changed)
		}
		unsafe := map[string]bool{}
		for _, p := range r.Skipped {
			if p.Commit != tip {
				t.Errorf("skipped %s names commit %s, want the tip %s", p.Path, p.Commit, tip)
			}
			unsafe[p.Path] = p.Unsafe
		}
		for _, e := range hostileEntries {
			p := strings.Join(e.names, "/")
			if _, ok := unsafe[p]; !ok {
				t.Errorf("refresh (fresh %v) did not report %q: %+v", fresh, p, r.Skipped)
			}
		}
		for _, p := range []string{".GIT", "git~1", ".git.", ".git ", ".g\u200cit", ".git", ".config", "outside-slash"} {
			if _, err := os.Lstat(filepath.Join(dir, ".context", p, "config")); err == nil {
				t.Errorf("refresh created .context/%s/config", p)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, ".context", "knowledge", "link.md")); err == nil {
			t.Errorf("refresh created the link knowledge/link.md")
		}
		if ents, _ := os.ReadDir(outside); len(ents) > 0 {
			t.Errorf("something was written through the link: %v", ents)
		}
		for _, k := range []string{"keep", "after"} {
			if b, err := os.ReadFile(filepath.Join(dir, ".context", "knowledge", k+".md")); err != nil || !strings.Contains(string(b), k) {
				t.Errorf("refresh (fresh %v) did not check out knowledge/%s.md: %v", fresh, k, err)
			}
		}
		if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 {
			t.Errorf("hand edits after the refresh: %v %v", edits, err)
		}
	}
}

// TestRefreshRefusesLinks: a folder of .context/ replaced by a symbolic link that leads out (by a user or
// a tool) is never written through: the refresh writes nothing outside and fails with ErrCheckoutBlocked,
// and the link is a hand edit ctx commit refuses.
func TestRefreshRefusesLinks(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "a", Content: "one\n"}); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(dir, ".context", "knowledge")
	os.RemoveAll(kdir)
	if err := os.Symlink(outside, kdir); err != nil {
		t.Fatal(err)
	}
	other := storetest.Open(t, dir, store.Actor{})
	_, err := other.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "b", Content: "two\n"})
	if err != nil {
		t.Fatalf("a write with a linked folder in .context/ failed: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Fatalf("the refresh wrote through the link into %s: %v", outside, ents)
	}
	// The entries under the link are not checked out, and the refresh says so (TestRefreshBlockedFolder).
	if _, err := s.Refresh(bg); !errors.Is(err, store.ErrCheckoutBlocked) {
		t.Fatalf("refresh with a linked folder: %v, want ErrCheckoutBlocked", err)
	}
	edits, err := s.HandEdits(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) == 0 {
		t.Errorf("a linked folder in .context/ is not reported as a hand edit")
	}
	if _, _, err := s.CommitHandEdits(bg, ""); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("ctx commit of a link: %v, want a refusal naming the link", err)
	}
}

// TestUnreadableEntriesAreSkipped: a gitlink in knowledge/, a file where decisions/ should be a folder and a
// path outside the layout on the local branch (C git put them there) do not break the store: lists, status,
// writes and the checked-out view work, the entries are listed by TreeProblems and Status, and
// RemoveProblems removes them in one commit.
func TestUnreadableEntriesAreSkipped(t *testing.T) {
	s, dir := storetest.New(t)
	for _, k := range []string{"a", "b"} {
		if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: k, Content: k + "\n"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.AddDecision(bg, store.NewDecision{Title: "Use Go"}); err != nil {
		t.Fatal(err)
	}
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	tree := testenv.Git(t, dir, "rev-parse", "ctx^{tree}")
	gitlink := strings.Repeat("5a", 20)
	tree = testenv.WithEntry(t, dir, tree, []string{"knowledge", "vendor.md"}, "160000", gitlink)
	tree = testenv.WithEntry(t, dir, tree, []string{"knowledge", "sub"}, "160000", gitlink)
	tree = testenv.WithEntry(t, dir, tree, []string{"decisions"}, "100644", testenv.Blob(t, dir, "not a folder\n"))
	tree = testenv.WithEntry(t, dir, tree, []string{"knowledge", "nested", "x.md"}, "100644", testenv.Blob(t, dir, "x\n"))
	bad := testenv.CommitTree(t, dir, tree, tip, "teammate's git")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", bad)

	v, err := s.RefView(bg)
	if err != nil {
		t.Fatal(err)
	}
	es, err := v.ListEntries(bg, store.KnowledgeKind)
	if err != nil || len(es) != 2 {
		t.Fatalf("knowledge list: %+v %v", es, err)
	}
	if _, err := v.ListDecisions(bg); err != nil {
		t.Fatalf("decision list: %v", err)
	}
	st, err := s.Status(bg)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var paths []string
	for _, p := range st.Unreadable {
		if p.Commit != bad || p.Unsafe {
			t.Errorf("problem %+v: want commit %s, not unsafe", p, bad)
		}
		paths = append(paths, p.Path)
	}
	if got := strings.Join(paths, " "); got != "decisions knowledge/nested/x.md knowledge/sub knowledge/vendor.md" {
		t.Errorf("status unreadable = %q", got)
	}
	if len(st.HandEdits) != 0 {
		t.Errorf("hand edits: %+v", st.HandEdits)
	}
	cv, err := s.CheckoutView(bg)
	if err != nil {
		t.Fatalf("checkout view: %v", err)
	}
	if es, err := cv.ListEntries(bg, store.KnowledgeKind); err != nil || len(es) != 2 {
		t.Errorf("knowledge list from .context/: %+v %v", es, err)
	}
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "c", Content: "c\n"}); err != nil {
		t.Fatalf("write: %v", err)
	}
	if d, _, err := s.AddDecision(bg, store.NewDecision{Title: "Use PostgreSQL"}); err != nil || d.ID != 1 {
		t.Fatalf("add decision: %+v %v", d, err)
	}
	// The decision write replaced the file "decisions" by the folder: one problem fewer.
	ps, err := s.TreeProblems(bg)
	if err != nil || len(ps) != 3 {
		t.Fatalf("problems after the writes: %+v %v", ps, err)
	}
	c, removed, err := s.RemoveProblems(bg)
	if err != nil || !c.Changed() || len(removed) != 3 {
		t.Fatalf("remove problems: %+v %+v %v", c, removed, err)
	}
	if ps, err := s.TreeProblems(bg); err != nil || len(ps) != 0 {
		t.Errorf("problems after the fix: %+v %v", ps, err)
	}
	files := storetest.Files(t, dir, "ctx")
	for _, p := range []string{"knowledge/a.md", "knowledge/b.md", "knowledge/c.md"} {
		if !files[p] {
			t.Errorf("the fix lost %s", p)
		}
	}
}

// TestDecisionIDNearMaxInt: a decision numbered near 2^63 (by hand or by a teammate's tool) does not make
// the next number overflow into a negative one.
func TestDecisionIDNearMaxInt(t *testing.T) {
	s, dir := storetest.New(t)
	for _, id := range []string{"9223372036854775807", "9223372036854775806", "99999999999999999999"} {
		body := fmt.Sprintf("---\nid: %s\ntitle: Huge %s\nstatus: accepted\n---\n## Context\n\nx\n", id, id)
		tree := testenv.Git(t, dir, "rev-parse", "ctx^{tree}")
		tree = testenv.WithEntry(t, dir, tree, []string{"decisions", id + "-huge.md"}, "100644", testenv.Blob(t, dir, body))
		testenv.Git(t, dir, "update-ref", "refs/heads/ctx", testenv.CommitTree(t, dir, tree, testenv.Git(t, dir, "rev-parse", "ctx"), "huge"))
	}
	d, _, err := s.AddDecision(bg, store.NewDecision{Title: "After the huge ones"})
	if err != nil {
		t.Fatalf("add decision: %v", err)
	}
	if d.ID <= 0 || d.ID > store.MaxDecisionID || strings.Contains(d.Path, "-9") && strings.Contains(d.Path, "decisions/-") {
		t.Fatalf("new decision %d at %s", d.ID, d.Path)
	}
	// Asking for a number beyond the bound is refused, not wrapped.
	_, _, err = s.AddDecision(bg, store.NewDecision{Title: "Explicit", Number: store.MaxDecisionID + 1})
	if err == nil || !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a decision number beyond %d: %v, want ErrInvalid", store.MaxDecisionID, err)
	}
}
