package gitstore_test

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// commitTree writes a commit of tree under refs/heads/t (so fsck sees the objects reachable) and returns it.
func commitTree(t *testing.T, r *gitstore.Repo, tree gitstore.Hash) gitstore.Hash {
	t.Helper()
	sig := gitstore.Signature{Name: "T", Email: "t@example.com"}
	old, _ := r.Resolve(bg, "refs/heads/t")
	var parents []gitstore.Hash
	if !old.IsZero() {
		parents = []gitstore.Hash{old}
	}
	c, err := r.WriteCommit(bg, gitstore.CommitSpec{Tree: tree, Parents: parents, Author: sig, Committer: sig, Message: "t\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(bg, "refs/heads/t", old, c, "t"); err != nil {
		t.Fatal(err)
	}
	return c
}

func lsTree(t *testing.T, dir string, c gitstore.Hash) []string {
	t.Helper()
	out := testenv.Git(t, dir, "ls-tree", "-r", "--name-only", c.String())
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

func edit(t *testing.T, r *gitstore.Repo, root gitstore.Hash, ch ...gitstore.Change) gitstore.Hash {
	t.Helper()
	h, err := r.EditTree(bg, root, ch)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func put(p, data string) gitstore.Change { return gitstore.Change{Path: p, Data: []byte(data)} }
func del(p string) gitstore.Change       { return gitstore.Change{Path: p, Delete: true} }

func TestEditTree(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)

	// Names chosen to exercise git's ordering: "knowledge" (a tree, sorted as "knowledge/") against
	// "knowledge.md" and "knowledge-x" (files), "a.b" against "a" (a tree).
	t1 := edit(t, r, gitstore.ZeroHash,
		put("manifest.json", "{}\n"),
		put("knowledge/arch.md", "arch\n"),
		put("knowledge/zeta.md", "zeta\n"),
		put("knowledge.md", "top\n"),
		put("knowledge-x", "x\n"),
		put("decisions/0001-use-pg.md", "pg\n"),
		put("skills/s1/SKILL.md", "skill\n"),
		put("skills/s1/.proposals/p1.json", "{}\n"),
		put("a/b/c/d.txt", "deep\n"),
		put("a.b", "ab\n"),
	)
	c1 := commitTree(t, r, t1)
	fsck(t, dir)
	want := []string{
		"a.b", "a/b/c/d.txt", "decisions/0001-use-pg.md", "knowledge-x", "knowledge.md",
		"knowledge/arch.md", "knowledge/zeta.md", "manifest.json",
		"skills/s1/.proposals/p1.json", "skills/s1/SKILL.md",
	}
	if got := lsTree(t, dir, c1); !reflect.DeepEqual(got, want) {
		t.Fatalf("ls-tree -r:\n%q\nwant\n%q", got, want)
	}
	if got := testenv.Git(t, dir, "rev-parse", c1.String()+"^{tree}"); got != t1.String() {
		t.Fatalf("commit tree %s != %s", got, t1)
	}
	// The same tree built by C git from the same content has the same name.
	if got := testenv.Git(t, dir, "show", c1.String()+":a/b/c/d.txt"); got != "deep" {
		t.Fatalf("content: %q", got)
	}

	// Walk visits files in git's order, like ls-tree -r.
	var walked []string
	if err := r.Walk(bg, t1, func(p string, _ gitstore.Hash) error { walked = append(walked, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(walked, want) {
		t.Fatalf("Walk order:\n%q\nwant\n%q", walked, want)
	}

	// A change under decisions/ leaves knowledge/ (and skills/, a/) with the same object name.
	knowledgeBefore := testenv.Git(t, dir, "rev-parse", c1.String()+":knowledge")
	skillsBefore := testenv.Git(t, dir, "rev-parse", c1.String()+":skills")
	t2 := edit(t, r, t1, put("decisions/0002-use-redis.md", "redis\n"), put("decisions/0001-use-pg.md", "pg v2\n"))
	c2 := commitTree(t, r, t2)
	if got := testenv.Git(t, dir, "rev-parse", c2.String()+":knowledge"); got != knowledgeBefore {
		t.Fatalf("knowledge/ tree changed: %s -> %s", knowledgeBefore, got)
	}
	if got := testenv.Git(t, dir, "rev-parse", c2.String()+":skills"); got != skillsBefore {
		t.Fatalf("skills/ tree changed")
	}
	if got := testenv.Git(t, dir, "show", c2.String()+":decisions/0001-use-pg.md"); got != "pg v2" {
		t.Fatalf("changed file: %q", got)
	}
	if got := testenv.Git(t, dir, "diff-tree", "-r", "--name-only", "--no-commit-id", c1.String(), c2.String()); got != "decisions/0001-use-pg.md\ndecisions/0002-use-redis.md" {
		t.Fatalf("git diff-tree: %q", got)
	}
	if paths, err := r.DiffTrees(bg, t1, t2); err != nil || !reflect.DeepEqual(paths, []string{"decisions/0001-use-pg.md", "decisions/0002-use-redis.md"}) {
		t.Fatalf("DiffTrees = %q, %v", paths, err)
	}

	// Setting a file to its current content gives the same tree.
	if got := edit(t, r, t2, put("knowledge/arch.md", "arch\n")); got != t2 {
		t.Fatalf("no-op edit changed the tree")
	}
	// Deleting something absent changes nothing.
	if got := edit(t, r, t2, del("knowledge/nope.md"), del("nodir/x")); got != t2 {
		t.Fatalf("deleting absent paths changed the tree")
	}

	// Deleting the last files of a directory removes the directory, recursively.
	t3 := edit(t, r, t2, del("decisions/0001-use-pg.md"), del("decisions/0002-use-redis.md"), del("a/b/c/d.txt"))
	c3 := commitTree(t, r, t3)
	top := testenv.Git(t, dir, "ls-tree", "--name-only", c3.String())
	if strings.Contains(top, "decisions") || strings.Contains(top, "a/") || strings.Contains(top, "\na\n") {
		t.Fatalf("empty directories left:\n%s", top)
	}
	if _, err := testenv.GitErr(dir, "rev-parse", c3.String()+":a"); err == nil {
		t.Fatal("a/ still exists")
	}
	fsck(t, dir)

	// A file replaced by a directory and back.
	t4 := edit(t, r, t3, del("knowledge.md"), put("knowledge.md/inner", "i\n"))
	c4 := commitTree(t, r, t4)
	if got := testenv.Git(t, dir, "cat-file", "-t", c4.String()+":knowledge.md"); got != "tree" {
		t.Fatalf("knowledge.md is a %s", got)
	}
	t5 := edit(t, r, t4, put("knowledge.md", "file again\n"))
	c5 := commitTree(t, r, t5)
	if got := testenv.Git(t, dir, "cat-file", "-t", c5.String()+":knowledge.md"); got != "blob" {
		t.Fatalf("knowledge.md is a %s", got)
	}
	fsck(t, dir)

	// Deleting everything is the empty tree (ZeroHash), committed as git's empty tree.
	var all []gitstore.Change
	for _, p := range lsTree(t, dir, c5) {
		all = append(all, del(p))
	}
	if got := edit(t, r, t5, all...); !got.IsZero() {
		t.Fatalf("deleting every file = %s, want ZeroHash", got)
	}
	ce := commitTree(t, r, gitstore.ZeroHash)
	if got := testenv.Git(t, dir, "rev-parse", ce.String()+"^{tree}"); got != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("empty tree = %s", got)
	}
	fsck(t, dir)
}

// TestEditTreeDeleteBelowFile: deleting "x/y" where x is a file must leave the file x alone.
func TestEditTreeDeleteBelowFile(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	t1 := edit(t, r, gitstore.ZeroHash, put("notes", "n\n"), put("k/a.md", "a\n"))
	t2 := edit(t, r, t1, del("notes/x.md"), del("k/a.md/deeper"))
	if t2 != t1 {
		c := commitTree(t, r, t2)
		t.Fatalf("deleting below a file changed the tree: %q", lsTree(t, dir, c))
	}
}

func TestEditTreeInvalidPaths(t *testing.T) {
	r := open(t, testenv.NewRepo(t))
	for _, p := range []string{"", ".", "/", "..", "../x", "a/../../x", "a\x00b"} {
		if _, err := r.EditTree(bg, gitstore.ZeroHash, []gitstore.Change{put(p, "x")}); err == nil {
			t.Errorf("EditTree accepted path %q", p)
		}
	}
	// Leading slashes and doubled slashes are cleaned.
	h := edit(t, r, gitstore.ZeroHash, put("/k//a.md", "a"))
	if b, err := r.ReadFile(bg, h, "k/a.md"); err != nil || string(b) != "a" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}

func TestReadAPI(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	root := edit(t, r, gitstore.ZeroHash, put("k/b.md", "b"), put("k/a.md", "a"), put("k/sub/c.md", "c"), put("m.json", "{}"))
	c := commitTree(t, r, root)
	if b, err := r.ReadFile(bg, root, "k/sub/c.md"); err != nil || string(b) != "c" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	for _, p := range []string{"k/none.md", "k", "m.json/x", "zz/y"} {
		if _, err := r.ReadFile(bg, root, p); !errors.Is(err, gitstore.ErrNotFound) {
			t.Errorf("ReadFile(%q) = %v, want ErrNotFound", p, err)
		}
	}
	if _, err := r.ReadFile(bg, gitstore.ZeroHash, "x"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("ReadFile on the empty tree: %v", err)
	}
	ents, err := r.List(bg, root, "k")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
		if e.Name == "sub" && !e.Dir {
			t.Error("sub not a dir")
		}
	}
	if !reflect.DeepEqual(names, []string{"a.md", "b.md", "sub"}) {
		t.Fatalf("List = %q", names)
	}
	if ents, err := r.List(bg, root, "nope"); err != nil || ents != nil {
		t.Fatalf("List(absent) = %v, %v", ents, err)
	}
	if h, _ := r.PathHash(bg, root, "k"); h.String() != testenv.Git(t, dir, "rev-parse", c.String()+":k") {
		t.Fatalf("PathHash(k) = %s", h)
	}
	files, err := r.Files(bg, root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p, b := range files {
		got = append(got, p+"="+string(b))
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"k/a.md=a", "k/b.md=b", "k/sub/c.md=c", "m.json={}"}) {
		t.Fatalf("Files = %q", got)
	}
	// DiffTrees against the empty tree lists every file; against itself nothing.
	if d, _ := r.DiffTrees(bg, gitstore.ZeroHash, root); len(d) != 4 {
		t.Fatalf("DiffTrees(empty, root) = %q", d)
	}
	if d, _ := r.DiffTrees(bg, root, root); len(d) != 0 {
		t.Fatalf("DiffTrees(root, root) = %q", d)
	}
}
