package gitstore_test

import (
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// backends are the object databases the conformance suite runs against: a repository on disk (objects
// written loose by ctx, read through go-git's filesystem storage) and go-git's in-memory storage.
var backends = []struct {
	name string
	open func(t *testing.T) *gitstore.Repo
}{
	{"disk", func(t *testing.T) *gitstore.Repo { return open(t, testenv.NewRepo(t)) }},
	{"memory", func(t *testing.T) *gitstore.Repo { return gitstore.NewMemory() }},
}

// peer is a scratch repository where the git CLI computes the object names the suite expects.
type peer struct {
	t   *testing.T
	dir string
}

func (p peer) blob(data string) gitstore.Hash { return hash(p.t, testenv.Blob(p.t, p.dir, data)) }

// tree makes a tree with git mktree from lines "<mode> <type> <hash>\t<name>".
func (p peer) tree(lines ...string) gitstore.Hash {
	in := ""
	for _, l := range lines {
		in += l + "\n"
	}
	return hash(p.t, testenv.GitIn(p.t, p.dir, in, "mktree"))
}

// commit makes a commit with git commit-tree at the fixed date of sig.
func (p peer) commit(tree gitstore.Hash, msg string, parents ...gitstore.Hash) gitstore.Hash {
	args := []string{"commit-tree", tree.String(), "-m", msg}
	for _, h := range parents {
		args = append(args, "-p", h.String())
	}
	return hash(p.t, testenv.Git(p.t, p.dir, args...))
}

var when = time.Unix(1_700_000_000, 0).UTC()

var sig = gitstore.Signature{Name: "Ada Lovelace", Email: "ada@example.com", When: when}

// TestConformance runs the same object operations against each backend and checks every object name
// against the one the git CLI computes for the same content.
func TestConformance(t *testing.T) {
	t.Setenv("GIT_AUTHOR_DATE", "1700000000 +0000")
	t.Setenv("GIT_COMMITTER_DATE", "1700000000 +0000")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			g := peer{t, testenv.NewRepo(t)}
			r := b.open(t)

			// Blobs.
			hello, err := r.WriteBlob(bg, []byte("hello\n"))
			if err != nil || hello != g.blob("hello\n") || hello != gitstore.BlobHash([]byte("hello\n")) {
				t.Fatalf("WriteBlob = %s, %v; git says %s", hello, err, g.blob("hello\n"))
			}
			if data, err := r.ReadBlob(bg, hello); err != nil || string(data) != "hello\n" {
				t.Errorf("ReadBlob = %q, %v", data, err)
			}
			if data, size, err := r.ReadBlobPrefix(bg, hello, 3); err != nil || string(data) != "hel" || size != 6 {
				t.Errorf("ReadBlobPrefix = %q, %d, %v", data, size, err)
			}
			if _, err := r.ReadBlob(bg, g.blob("only in the peer\n")); err == nil {
				t.Error("ReadBlob of a missing object succeeded")
			}

			// Trees.
			t1, err := r.EditTree(bg, gitstore.ZeroHash, []gitstore.Change{
				{Path: "c.md", Data: []byte("C\n")}, {Path: "a/b.md", Data: []byte("B\n")},
			})
			sub := g.tree("100644 blob " + g.blob("B\n").String() + "\tb.md")
			want1 := g.tree("040000 tree "+sub.String()+"\ta", "100644 blob "+g.blob("C\n").String()+"\tc.md")
			if err != nil || t1 != want1 {
				t.Fatalf("EditTree = %s, %v; git says %s", t1, err, want1)
			}
			if data, err := r.ReadFile(bg, t1, "a/b.md"); err != nil || string(data) != "B\n" {
				t.Errorf("ReadFile(a/b.md) = %q, %v", data, err)
			}
			if _, err := r.ReadFile(bg, t1, "a/zz.md"); !errors.Is(err, gitstore.ErrNotFound) {
				t.Errorf("ReadFile of a missing path: %v, want ErrNotFound", err)
			}
			if h, err := r.PathHash(bg, t1, "a"); err != nil || h != sub {
				t.Errorf("PathHash(a) = %s, %v; want %s", h, err, sub)
			}
			if h, err := r.PathHash(bg, t1, "zz"); err != nil || !h.IsZero() {
				t.Errorf("PathHash(zz) = %s, %v; want ZeroHash", h, err)
			}
			es, err := r.List(bg, t1, "")
			if err != nil || len(es) != 2 || es[0].Name != "a" || !es[0].Dir || es[0].Mode != gitstore.ModeDir ||
				es[1].Name != "c.md" || es[1].Dir || !es[1].IsFile() {
				t.Errorf("List = %+v, %v", es, err)
			}
			var walked []string
			if err := r.Walk(bg, t1, func(p string, _ gitstore.Hash) error { walked = append(walked, p); return nil }); err != nil ||
				!reflect.DeepEqual(walked, []string{"a/b.md", "c.md"}) {
				t.Errorf("Walk = %v, %v", walked, err)
			}
			files, err := r.Files(bg, t1)
			if err != nil || len(files) != 2 || string(files["a/b.md"]) != "B\n" || string(files["c.md"]) != "C\n" {
				t.Errorf("Files = %q, %v", files, err)
			}
			at, err := r.FilesAt(bg, t1, []string{"c.md", "nope.md"}, []string{"a"})
			if err != nil || len(at) != 2 || string(at["c.md"]) != "C\n" || string(at["a/b.md"]) != "B\n" {
				t.Errorf("FilesAt = %q, %v", at, err)
			}
			if it, ok, err := r.Stat(bg, t1, "a/b.md"); err != nil || !ok || it.Mode != gitstore.ModeRegular || it.Hash != g.blob("B\n") {
				t.Errorf("Stat(a/b.md) = %+v, %v, %v", it, ok, err)
			}
			if _, ok, err := r.Stat(bg, t1, "c.md/x"); err != nil || ok {
				t.Errorf("Stat(c.md/x) = %v, %v; want absent", ok, err)
			}
			if data, size, err := r.ReadFilePrefix(bg, t1, "c.md", 1); err != nil || string(data) != "C" || size != 2 {
				t.Errorf("ReadFilePrefix = %q, %d, %v", data, size, err)
			}
			t2, err := r.EditTree(bg, t1, []gitstore.Change{{Path: "a/b.md", Delete: true}, {Path: "d.md", Data: []byte("hello\n")}})
			want2 := g.tree("100644 blob "+g.blob("C\n").String()+"\tc.md", "100644 blob "+hello.String()+"\td.md")
			if err != nil || t2 != want2 {
				t.Fatalf("EditTree (delete, add) = %s, %v; git says %s", t2, err, want2)
			}
			changed, err := r.DiffTrees(bg, t1, t2)
			sort.Strings(changed)
			if err != nil || !reflect.DeepEqual(changed, []string{"a/b.md", "d.md"}) {
				t.Errorf("DiffTrees = %v, %v", changed, err)
			}
			added, removed, err := r.DiffItems(bg, t1, t2)
			if err != nil || len(added) != 1 || added[0].Path() != "d.md" || len(removed) != 1 || removed[0].Path() != "a/b.md" {
				t.Errorf("DiffItems = %+v, %+v, %v", added, removed, err)
			}

			// Commits and history: c1 ← c2 and c1 ← c3.
			mk := func(tree gitstore.Hash, msg string, parents ...gitstore.Hash) gitstore.Hash {
				t.Helper()
				h, err := r.WriteCommit(bg, gitstore.CommitSpec{Tree: tree, Parents: parents, Author: sig, Committer: sig, Message: msg + "\n"})
				if want := g.commit(tree, msg, parents...); err != nil || h != want {
					t.Fatalf("WriteCommit(%s) = %s, %v; git says %s", msg, h, err, want)
				}
				return h
			}
			c1 := mk(t1, "one")
			c2 := mk(t2, "two", c1)
			t3, err := r.EditTree(bg, t1, []gitstore.Change{{Path: "e.md", Data: []byte("E\n")}})
			want3 := g.tree("040000 tree "+sub.String()+"\ta", "100644 blob "+g.blob("C\n").String()+"\tc.md",
				"100644 blob "+g.blob("E\n").String()+"\te.md")
			if err != nil || t3 != want3 {
				t.Fatalf("EditTree (add) = %s, %v; git says %s", t3, err, want3)
			}
			c3 := mk(t3, "three", c1)
			c, err := r.Commit(bg, c2)
			if err != nil || c.Hash != c2 || c.TreeHash != t2 || !reflect.DeepEqual(c.ParentHashes, []gitstore.Hash{c1}) ||
				c.Message != "two\n" || c.Author.Email != sig.Email || !c.Committer.When.Equal(when) || c.NumParents() != 1 {
				t.Errorf("Commit = %+v, %v", c, err)
			}
			if tr, err := r.TreeOf(bg, c3); err != nil || tr != t3 {
				t.Errorf("TreeOf = %s, %v", tr, err)
			}
			if mb, err := r.MergeBase(bg, c2, c3); err != nil || mb != c1 {
				t.Errorf("MergeBase = %s, %v; want %s", mb, err, c1)
			}
			for _, tc := range []struct {
				a, b gitstore.Hash
				want bool
			}{{c1, c2, true}, {c2, c2, true}, {c2, c3, false}, {c2, c1, false}} {
				if ok, err := r.IsAncestor(bg, tc.a, tc.b); err != nil || ok != tc.want {
					t.Errorf("IsAncestor(%s, %s) = %v, %v", tc.a, tc.b, ok, err)
				}
			}
			if n, err := r.CountAhead(bg, c2, c3); err != nil || n != 1 {
				t.Errorf("CountAhead = %d, %v", n, err)
			}
			if hs, err := r.NewCommits(bg, c2, []gitstore.Hash{c1}); err != nil || !reflect.DeepEqual(hs, []gitstore.Hash{c2}) {
				t.Errorf("NewCommits = %v, %v", hs, err)
			}
			log, err := r.Log(bg, c2, 0, "")
			if err != nil || len(log) != 2 || log[0].Hash != c2 || log[1].Hash != c1 {
				t.Errorf("Log = %v, %v", log, err)
			}
			if log, err := r.Log(bg, c3, 0, "c.md"); err != nil || len(log) != 1 || log[0].Hash != c1 {
				t.Errorf("Log(c.md) = %v, %v", log, err)
			}
		})
	}
}
