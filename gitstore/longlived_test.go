package gitstore_test

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// A long-lived Repo (ctx mcp serve's) keeps decoded and parsed trees between writes. Another process may
// move the ref under it: C git here, and a second Repo of the same repository. Each next write of the
// long-lived Repo starts from the tip the other writer left (nothing of the other write is lost), reports
// only its own paths, and its diffs are those a fresh Repo computes.
func TestLongLivedRepoAfterOtherWriters(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	defer r.Close()
	const ref = "refs/heads/ctx-test"
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("k/k%03d.md", i)] = fmt.Sprint("entry ", i)
	}
	set(t, r, ref, "first", files)
	set(t, r, ref, "second", map[string]string{"k/a.md": "a"}) // the folder's trees are cached now
	lsR := func(rev string) []string {
		out := strings.Split(testenv.Git(t, dir, "ls-tree", "-r", rev), "\n")
		sort.Strings(out)
		return out
	}
	// C git replaces one entry and adds one in the folder, and commits onto the tip.
	tip := testenv.Git(t, dir, "rev-parse", ref)
	tree := testenv.WithEntry(t, dir, tip+"^{tree}", []string{"k", "k000.md"}, "100644", testenv.Blob(t, dir, "changed by git"))
	tree = testenv.WithEntry(t, dir, tree, []string{"k", "zz-git.md"}, "100644", testenv.Blob(t, dir, "added by git"))
	byGit := testenv.CommitTree(t, dir, tree, tip, "by git")
	testenv.Git(t, dir, "update-ref", ref, byGit, tip)

	res := set(t, r, ref, "third", map[string]string{"k/mine.md": "mine"})
	if !reflect.DeepEqual(res.Paths, []string{"k/mine.md"}) || res.Old.String() != byGit {
		t.Fatalf("after git's commit: paths %v from %s, want [k/mine.md] from %s", res.Paths, res.Old, byGit)
	}
	want := append(lsR(byGit), "100644 blob "+testenv.Blob(t, dir, "mine")+"\tk/mine.md")
	sort.Strings(want)
	if got := lsR(ref); !reflect.DeepEqual(got, want) {
		t.Fatalf("tree after git's commit and ours:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Another Repo of the repository (another ctx process) deletes an entry and writes one.
	r2 := open(t, dir)
	defer r2.Close()
	_, err := r2.Transact(bg, []string{ref}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return map[string]*gitstore.Write{ref: {Message: "other", Changes: []gitstore.Change{
			{Path: "k/k001.md", Delete: true}, {Path: "k/other.md", Data: []byte("other")}}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	byOther := testenv.Git(t, dir, "rev-parse", ref)
	res = set(t, r, ref, "fourth", map[string]string{"k/k002.md": "mine too"})
	if !reflect.DeepEqual(res.Paths, []string{"k/k002.md"}) || res.Old.String() != byOther {
		t.Fatalf("after the other Repo's commit: paths %v from %s, want [k/k002.md] from %s", res.Paths, res.Old, byOther)
	}
	got := lsR(ref)
	joined := strings.Join(got, "\n")
	if strings.Contains(joined, "\tk/k001.md") || !strings.Contains(joined, "\tk/other.md") ||
		!strings.Contains(joined, testenv.Blob(t, dir, "mine too")+"\tk/k002.md") || len(got) != 300+4-1 { // + a.md, zz-git.md, mine.md, other.md; - k001.md
		t.Fatalf("tree after the other Repo's commit and ours: %d files, want 303; k001 %v, other %v, k002 %v", len(got),
			strings.Contains(joined, "\tk/k001.md"), strings.Contains(joined, "\tk/other.md"), strings.Contains(joined, "\tk/k002.md"))
	}

	// The diffs of the long-lived Repo (trees cached) are those of a fresh one (nothing cached).
	fresh := open(t, dir)
	defer fresh.Close()
	treeOf := func(rev string) gitstore.Hash { return hash(t, testenv.Git(t, dir, "rev-parse", rev+"^{tree}")) }
	for _, pair := range [][2]string{{tip, byGit}, {byGit, byOther}, {byOther, ref}, {tip, ref}} {
		a, b := treeOf(pair[0]), treeOf(pair[1])
		p1, err1 := r.DiffTrees(bg, a, b)
		p2, err2 := fresh.DiffTrees(bg, a, b)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(p1, p2) || len(p1) == 0 {
			t.Fatalf("DiffTrees %s..%s: long-lived %v (%v), fresh %v (%v)", pair[0], pair[1], p1, err1, p2, err2)
		}
	}
	fsck(t, dir)
}
