package gitstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestCompleteObjects: in a partial clone (git clone --filter=blob:none over file://), a branch that came
// filtered lacks its blobs; CompleteObjects fetches exactly them (git rev-list then finds none missing,
// and the Repo reads the blob), a second call fetches nothing, a remote value that would make git run a
// command is refused before git runs, and a repository that is not a partial clone is left alone.
func TestCompleteObjects(t *testing.T) {
	ctx := context.Background()
	remote := testenv.BareRemote(t)
	testenv.Git(t, remote, "config", "uploadpack.allowFilter", "true")
	seed := testenv.NewRepo(t)
	testenv.Git(t, seed, "push", "-q", remote, "main")
	testenv.Git(t, seed, "checkout", "-q", "-b", "side")
	if err := os.WriteFile(filepath.Join(seed, "side.txt"), []byte("only on side\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, seed, "add", "side.txt")
	testenv.Git(t, seed, "commit", "-qm", "side")
	testenv.Git(t, seed, "push", "-q", remote, "side")
	blob := testenv.Git(t, seed, "rev-parse", "side:side.txt")

	dir := filepath.Join(t.TempDir(), "partial")
	testenv.Git(t, "", "clone", "-q", "--filter=blob:none", "file://"+remote, dir)
	missing := func() string {
		var out []string
		for _, l := range strings.Split(testenv.Git(t, dir, "rev-list", "--objects", "--missing=print", "refs/remotes/origin/side"), "\n") {
			if strings.HasPrefix(l, "?") {
				out = append(out, l[1:])
			}
		}
		return strings.Join(out, " ")
	}
	if got := missing(); got != blob {
		t.Fatalf("the clone lacks %q, want the side blob %s: the test proves nothing", got, blob)
	}
	r := open(t, dir)
	if !r.PartialClone() {
		t.Fatal("PartialClone = false in a clone made with --filter")
	}
	tip := gitstore.NewHash(testenv.Git(t, dir, "rev-parse", "refs/remotes/origin/side"))

	for _, bad := range injections(filepath.Join(t.TempDir(), "pwned")) {
		_, err := r.CompleteObjects(ctx, bad, []gitstore.Hash{tip}, gitstore.TransferOptions{})
		if !errors.Is(err, gitstore.ErrUnsafeRemote) {
			t.Errorf("CompleteObjects(%q) = %v, want a refusal", bad, err)
		}
	}
	if got := missing(); got != blob {
		t.Fatalf("a refused remote fetched something: missing %q", got)
	}

	n, err := r.CompleteObjects(ctx, "origin", []gitstore.Hash{tip}, gitstore.TransferOptions{})
	if err != nil || n != 1 {
		t.Fatalf("CompleteObjects = %d, %v; want 1 object fetched", n, err)
	}
	if got := missing(); got != "" {
		t.Errorf("still missing after CompleteObjects: %s", got)
	}
	data, err := r.ReadBlob(ctx, gitstore.NewHash(blob))
	if err != nil || string(data) != "only on side\n" {
		t.Errorf("ReadBlob = %q, %v", data, err)
	}
	if n, err := r.CompleteObjects(ctx, "origin", []gitstore.Hash{tip}, gitstore.TransferOptions{}); err != nil || n != 0 {
		t.Errorf("second CompleteObjects = %d, %v; want nothing to do", n, err)
	}

	full := testenv.NewRepo(t)
	if open(t, full).PartialClone() {
		t.Error("PartialClone = true in a plain repository")
	}
}

// TestFetchCompletesOnlyWhatItBrought: in a partial clone, a ctx fetch completes the fetched tip (its
// blobs, left out by the clone's filter), and the next fetch of the same refspec walks only what it
// brought: git rev-list runs with --not the tip the destination held (complete since the first fetch),
// not over the whole history again; a fetch that brought nothing runs no rev-list; the tips end complete.
func TestFetchCompletesOnlyWhatItBrought(t *testing.T) {
	ctx := context.Background()
	remote := testenv.BareRemote(t)
	testenv.Git(t, remote, "config", "uploadpack.allowFilter", "true")
	seed := testenv.NewRepo(t)
	commit := func(name string) string {
		if err := os.WriteFile(filepath.Join(seed, name), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, seed, "add", name)
		testenv.Git(t, seed, "commit", "-qm", name)
		testenv.Git(t, seed, "push", "-q", remote, "HEAD:main", "HEAD:side")
		return testenv.Git(t, seed, "rev-parse", "HEAD")
	}
	commit("one.txt")
	dir := filepath.Join(t.TempDir(), "partial")
	testenv.Git(t, "", "clone", "-q", "--filter=blob:none", "--no-checkout", "file://"+remote, dir)
	missing := func(rev string) int {
		n := 0
		for _, l := range strings.Split(testenv.Git(t, dir, "rev-list", "--objects", "--missing=print", rev), "\n") {
			if strings.HasPrefix(l, "?") {
				n++
			}
		}
		return n
	}
	if missing("refs/remotes/origin/side") == 0 {
		t.Fatal("the clone has every blob: the test proves nothing")
	}
	var runs [][]string
	defer gitstore.SetOnRevList(func(args []string) { runs = append(runs, args) })()
	const spec = "+refs/heads/side:refs/ctx-test/side"
	fetch := func() {
		t.Helper()
		r := open(t, dir)
		if !r.PartialClone() {
			t.Fatal("PartialClone = false")
		}
		if _, err := r.FetchRefs(ctx, "origin", []string{spec}, gitstore.TransferOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	fetch()
	first := testenv.Git(t, dir, "rev-parse", "refs/ctx-test/side")
	if n := missing(first); n != 0 {
		t.Fatalf("the first fetch left %d objects missing", n)
	}
	if len(runs) == 0 || strings.Contains(strings.Join(runs[0], " "), "--not") {
		t.Fatalf("the first fetch's rev-list: %q; want a walk from the tip, nothing held before", runs)
	}

	commit("two.txt")
	second := commit("three.txt")
	runs = nil
	fetch()
	if got := testenv.Git(t, dir, "rev-parse", "refs/ctx-test/side"); got != second {
		t.Fatalf("fetched %s, want %s", got, second)
	}
	if n := missing(second); n != 0 {
		t.Errorf("the second fetch left %d objects missing", n)
	}
	if len(runs) == 0 {
		t.Fatal("the second fetch ran no rev-list")
	}
	for _, args := range runs {
		a := strings.Join(args, " ")
		if !strings.Contains(a, " "+second+" --not "+first+" --") {
			t.Errorf("the second fetch walked %q; want %s --not %s (only what the fetch brought)", a, second, first)
		}
	}

	runs = nil
	fetch()
	if len(runs) != 0 {
		t.Errorf("a fetch that brought nothing walked %q", runs)
	}

	// With gc.repackFilter set, git gc may drop blobs of complete tips: the record is not trusted.
	testenv.Git(t, dir, "config", "gc.repackFilter", "blob:none")
	fetch()
	if len(runs) != 1 || strings.Contains(strings.Join(runs[0], " "), "--not") {
		t.Errorf("with gc.repackFilter, the fetch walked %q; want the whole history of the tip", runs)
	}
}
