package gitstore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/go-git/go-git/v5/plumbing"
)

const (
	pub  = "refs/heads/ctx"
	priv = "refs/ctx/private"
)

// dirtyRepo is NewRepo with a staged change, an unstaged change and an untracked file, so that the
// snapshot of HEAD/index/status is not trivial.
func dirtyRepo(t *testing.T) string {
	t.Helper()
	dir := testenv.NewRepo(t)
	writeFile(t, filepath.Join(dir, "staged.txt"), "staged\n")
	testenv.Git(t, dir, "add", "staged.txt")
	writeFile(t, filepath.Join(dir, "README.md"), "# changed\n")
	writeFile(t, filepath.Join(dir, "untracked.txt"), "u\n")
	testenv.Git(t, dir, "branch", "feature")
	testenv.Git(t, dir, "tag", "v1")
	return dir
}

func forEachRef(t *testing.T, dir string, except ...string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(testenv.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)"), "\n") {
		skip := false
		for _, e := range except {
			if strings.HasSuffix(l, " "+e) {
				skip = true
			}
		}
		if !skip {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestTransact(t *testing.T) {
	dir := dirtyRepo(t)
	r := open(t, dir)
	snap := testenv.Take(t, dir)
	refsBefore := forEachRef(t, dir, pub, priv)

	msg1 := "ctx: set knowledge architecture\n\nCtx-Op: knowledge.set\nCtx-Key: architecture\nCtx-Agent: claude-code\n"
	msg2 := "ctx: set knowledge secret\n\nCtx-Op: knowledge.set\nCtx-Key: secret\n"
	var sawTips map[string]gitstore.Tip
	res, err := r.Transact(bg, []string{pub, priv}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		sawTips = tips
		return map[string]*gitstore.Write{
			pub:  {Changes: []gitstore.Change{put("manifest.json", "{}\n"), put("knowledge/architecture.md", "arch\n")}, Message: msg1},
			priv: {Changes: []gitstore.Change{put("knowledge/secret.md", "s\n")}, Message: msg2},
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sawTips[pub].Commit != gitstore.ZeroHash || sawTips[priv].Tree != gitstore.ZeroHash || sawTips[pub].Ref != pub {
		t.Fatalf("tips of missing refs: %+v", sawTips)
	}
	if len(res) != 2 || res[0].Ref != pub || res[1].Ref != priv || !res[0].Committed || !res[1].Committed {
		t.Fatalf("results: %+v", res)
	}
	if !reflect.DeepEqual(res[0].Paths, []string{"knowledge/architecture.md", "manifest.json"}) {
		t.Fatalf("Paths = %q", res[0].Paths)
	}
	for i, ref := range []string{pub, priv} {
		if got := testenv.Git(t, dir, "rev-parse", ref); got != res[i].New.String() {
			t.Fatalf("%s = %s, result says %s", ref, got, res[i].New)
		}
		if n := testenv.Git(t, dir, "rev-list", "--count", ref); n != "1" {
			t.Fatalf("%s has %s commits", ref, n)
		}
	}
	// Message verbatim, author and committer from the identity (Hermetic's GIT_AUTHOR_*).
	if got := testenv.Git(t, dir, "cat-file", "commit", pub); !strings.HasSuffix(got, "\n\n"+strings.TrimSpace(msg1)) {
		t.Fatalf("commit object:\n%s", got)
	}
	if got := testenv.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", pub); got != "Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>|ctx: set knowledge architecture" {
		t.Fatalf("author/committer: %q", got)
	}
	if got := testenv.Git(t, dir, "log", "-1", "--format=%(trailers:key=Ctx-Key,valueonly)", pub); got != "architecture" {
		t.Fatalf("trailer Ctx-Key = %q", got)
	}

	// Second transaction: only the public ref changes; its parent is the first commit.
	first := res[0].New
	res2, err := r.Transact(bg, []string{pub, priv}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		if tips[pub].Commit != first {
			return nil, fmt.Errorf("tip %s, want %s", tips[pub].Commit, first)
		}
		return map[string]*gitstore.Write{
			pub:  {Changes: []gitstore.Change{put("knowledge/b.md", "b\n")}, Message: "second\n"},
			priv: {Changes: []gitstore.Change{put("knowledge/secret.md", "s\n")}, Message: "no-op"}, // same content
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res2[0].Committed || res2[1].Committed || res2[1].New != res[1].New || res2[0].Old != first {
		t.Fatalf("results: %+v", res2)
	}
	if got := testenv.Git(t, dir, "rev-parse", pub+"^"); got != first.String() {
		t.Fatalf("parent = %s, want %s", got, first)
	}
	if n := testenv.Git(t, dir, "rev-list", "--count", priv); n != "1" {
		t.Fatalf("unchanged tree made a commit: %s commits", n)
	}

	// A write with no changes at all: no commit.
	res3, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return map[string]*gitstore.Write{pub: {Message: "empty"}}, nil
	})
	if err != nil || res3[0].Committed || res3[0].New != res2[0].New {
		t.Fatalf("empty write: %+v, %v", res3, err)
	}

	// fn's error aborts without a commit.
	boom := errors.New("boom")
	if _, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return nil, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if got := testenv.Git(t, dir, "rev-parse", pub); got != res2[0].New.String() {
		t.Fatal("failed transaction moved the ref")
	}

	// ExtraParents: a merge commit with the tip first, then the extra parents, even with the tree unchanged.
	other := res[1].New
	res4, err := r.Transact(bg, []string{pub}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return map[string]*gitstore.Write{pub: {ExtraParents: []gitstore.Hash{other}, Message: "merge\n"}}, nil
	})
	if err != nil || !res4[0].Committed {
		t.Fatalf("merge: %+v, %v", res4, err)
	}
	if got := testenv.Git(t, dir, "rev-list", "--parents", "-n1", pub); got != res4[0].New.String()+" "+res2[0].New.String()+" "+other.String() {
		t.Fatalf("merge parents: %s", got)
	}
	// Write.Tree replaces the whole tree.
	tree := edit(t, r, gitstore.ZeroHash, put("only.md", "x"))
	res5, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return map[string]*gitstore.Write{pub: {Tree: &tree, Message: "replace"}}, nil
	})
	if err != nil || !res5[0].Committed {
		t.Fatal(err)
	}
	if got := testenv.Git(t, dir, "ls-tree", "-r", "--name-only", pub); got != "only.md" {
		t.Fatalf("tree: %q", got)
	}

	fsck(t, dir)
	snap.Same(t, dir)
	if after := forEachRef(t, dir, pub, priv); after != refsBefore {
		t.Fatalf("other refs changed:\nbefore:\n%s\nafter:\n%s", refsBefore, after)
	}
	// The reflog of the branch has every ctx write.
	if n := len(strings.Split(testenv.Git(t, dir, "reflog", "show", "--format=%H", pub), "\n")); n != 4 {
		t.Fatalf("reflog has %d entries, want 4", n)
	}
}

// TestTransactRetriesOnStaleRef: C git moves the ref between fn and the CAS; Transact re-runs fn on the new tip.
func TestTransactRetriesOnStaleRef(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	base := set(t, r, pub, "base", map[string]string{"a.md": "a"})
	calls := 0
	var moved string
	res, err := r.Transact(bg, []string{pub}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		calls++
		if calls == 1 {
			// Another writer that ignores the ctx lock (C git) moves the branch.
			tree := testenv.Git(t, dir, "rev-parse", pub+"^{tree}")
			moved = testenv.Git(t, dir, "commit-tree", "-p", base.New.String(), "-m", "by git", tree)
			testenv.Git(t, dir, "update-ref", pub, moved)
		}
		return map[string]*gitstore.Write{pub: {Changes: []gitstore.Change{put("b.md", strconv.Itoa(calls))}, Message: "mine"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("fn called %d times, want 2", calls)
	}
	if got := testenv.Git(t, dir, "rev-parse", pub+"^"); got != moved {
		t.Fatalf("parent = %s, want git's commit %s", got, moved)
	}
	if res[0].Old.String() != moved {
		t.Fatalf("Old = %s", res[0].Old)
	}
}

// TestTransactConcurrent: 8 goroutines × 25 Transact calls on one ref, each adding a distinct file, while
// git rev-parse --verify reads the ref in a loop.
func TestTransactConcurrent(t *testing.T) {
	const workers, each = 8, 25
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	set(t, r, pub, "init", map[string]string{"manifest.json": "{}\n"})

	var stop atomic.Bool
	var readerErr atomic.Value
	var reads atomic.Int64
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for !stop.Load() {
			out, err := testenv.GitErr(dir, "rev-parse", "--verify", pub)
			reads.Add(1)
			if err != nil || !plumbing.IsHash(out) {
				readerErr.Store(fmt.Sprintf("git rev-parse --verify: %q %v", out, err))
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := fmt.Sprintf("knowledge/w%d-%02d.md", w, i)
				res, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
					return map[string]*gitstore.Write{pub: {Changes: []gitstore.Change{put(p, p)}, Message: "add " + p}}, nil
				})
				if err == nil && !res[0].Committed {
					err = fmt.Errorf("%s: no commit", p)
				}
				if err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	stop.Store(true)
	<-readerDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if v := readerErr.Load(); v != nil {
		t.Fatal(v)
	}
	if n := testenv.Git(t, dir, "rev-list", "--count", pub); n != strconv.Itoa(workers*each+1) {
		t.Fatalf("rev-list --count = %s, want %d", n, workers*each+1)
	}
	files := strings.Split(testenv.Git(t, dir, "ls-tree", "-r", "--name-only", pub, "knowledge/"), "\n")
	if len(files) != workers*each {
		t.Fatalf("%d files, want %d", len(files), workers*each)
	}
	// Every commit added exactly one file (a linear history, no lost update).
	if merges := testenv.Git(t, dir, "rev-list", "--merges", "--count", pub); merges != "0" {
		t.Fatalf("%s merges", merges)
	}
	fsck(t, dir)
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("ref lock left behind")
	}
	t.Logf("%d concurrent git rev-parse reads", reads.Load())
}

// TestTransactTwoRepos: two Repo values (as two processes would) on one repository serialise on the ctx lock.
func TestTransactTwoRepos(t *testing.T) {
	dir := testenv.NewRepo(t)
	r1, r2 := open(t, dir), open(t, dir)
	var wg sync.WaitGroup
	for k, r := range []*gitstore.Repo{r1, r2} {
		wg.Add(1)
		go func(k int, r *gitstore.Repo) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				p := fmt.Sprintf("r%d/%d", k, i)
				if _, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
					return map[string]*gitstore.Write{pub: {Changes: []gitstore.Change{put(p, p)}, Message: p}}, nil
				}); err != nil {
					t.Error(err)
				}
			}
		}(k, r)
	}
	wg.Wait()
	if n := testenv.Git(t, dir, "rev-list", "--count", pub); n != "40" {
		t.Fatalf("rev-list --count = %s, want 40", n)
	}
}
