package gitstore_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// refSetsScenario: the transfers of many refs that one ref per machine uses (docs/sync.md), with git and
// with go-git's transport: a fetch of a branch that may be missing together with a pattern, a push of
// two refs that the remote takes or refuses one by one, a deletion under a lease; and RefsUnder's bound.
func refSetsScenario(t *testing.T, noGit bool) {
	dir := testenv.NewRepo(t)
	bare := testenv.BareRemote(t)
	r := open(t, dir)
	first := set(t, r, pub, "one", map[string]string{"knowledge/a.md": "a"})
	if noGit {
		hideGit(t)
	}
	// Two refs in one push: both land.
	sts, err := r.PushRefs(bg, bare, []string{spec, "refs/heads/ctx:refs/ctx/machines/m1"}, gitstore.TransferOptions{})
	if err != nil || len(sts) != 2 || sts[0].Err != nil || sts[1].Err != nil || sts[1].Ref != "refs/ctx/machines/m1" {
		t.Fatalf("push of two refs: %+v %v", sts, err)
	}
	// Another clone moves the shared branch: the next push of both takes the machine ref, refuses the
	// branch as a non-fast-forward, and is no error.
	other := filepath.Join(t.TempDir(), "other")
	gitWithPath(t, "", "clone", "-q", bare, other)
	gitWithPath(t, other, "fetch", "-q", "origin", "ctx:ctx")
	theirs := set(t, open(t, other), pub, "theirs", map[string]string{"knowledge/b.md": "b"})
	if err := open(t, other).Push(bg, bare, spec, gitstore.TransferOptions{}); err != nil {
		t.Fatal(err)
	}
	mine := set(t, r, pub, "mine", map[string]string{"knowledge/c.md": "c"})
	sts, err = r.PushRefs(bg, bare, []string{spec, "refs/heads/ctx:refs/ctx/machines/m1"}, gitstore.TransferOptions{})
	if err != nil || !errors.Is(sts[0].Err, gitstore.ErrNonFastForward) || sts[1].Err != nil {
		t.Fatalf("push that loses the branch: %+v %v", sts, err)
	}
	if got := gitWithPath(t, bare, "rev-parse", "refs/ctx/machines/m1"); got != mine.New.String() {
		t.Fatalf("machine ref on the remote: %s, want %s", got, mine.New)
	}
	if got := gitWithPath(t, bare, "rev-parse", "refs/heads/ctx"); got != theirs.New.String() {
		t.Fatalf("the refused ref moved: %s", got)
	}
	// The listing: only the names asked for, exactly or below a pattern's folder.
	gitWithPath(t, bare, "update-ref", "refs/ctx/machinesX", first.New.String())
	adv, err := r.LsRemote(bg, bare, []string{"refs/heads/ctx", "refs/ctx/machines/*"}, gitstore.TransferOptions{})
	if err != nil || len(adv) != 2 || adv["refs/heads/ctx"] != theirs.New || adv["refs/ctx/machines/m1"] != mine.New {
		t.Fatalf("ls-remote: %v %v", adv, err)
	}
	if _, err := r.LsRemote(bg, bare, []string{"refs/ctx/-x/*"}, gitstore.TransferOptions{}); err == nil {
		t.Errorf("ls-remote of an option-like pattern accepted")
	}
	// A fetch of an optional missing branch and a pattern: the pattern's refs land, the branch is missing.
	missing, err := r.FetchRefs(bg, bare, []string{"?+refs/heads/nope:refs/q/shared", "+refs/ctx/machines/*:refs/q/m/*"}, gitstore.TransferOptions{})
	if err != nil || len(missing) != 1 || missing[0] != "refs/heads/nope" {
		t.Fatalf("fetch with a missing optional branch: %v %v", missing, err)
	}
	refs, err := r.RefsUnder("refs/q/", 0)
	if err != nil || len(refs) != 1 || refs["refs/q/m/m1"] != mine.New {
		t.Fatalf("fetched refs: %v %v", refs, err)
	}
	missing, err = r.FetchRefs(bg, bare, []string{"?+refs/heads/ctx:refs/q/shared", "+refs/ctx/machines/*:refs/q/m/*"}, gitstore.TransferOptions{})
	if h, _ := r.Resolve(bg, "refs/q/shared"); err != nil || len(missing) != 0 || h != theirs.New {
		t.Fatalf("fetch of branch and pattern: %v %v %s", missing, err, h)
	}
	// A deletion under a lease that no longer holds keeps the ref; one that holds deletes it.
	err = r.DeleteRemoteRef(bg, bare, "refs/ctx/machines/m1", first.New, gitstore.TransferOptions{})
	if !errors.Is(err, gitstore.ErrNonFastForward) {
		t.Fatalf("deletion under a stale lease: %v", err)
	}
	if err := r.DeleteRemoteRef(bg, bare, "refs/ctx/machines/m1", mine.New, gitstore.TransferOptions{}); err != nil {
		t.Fatalf("deletion: %v", err)
	}
	if out, _ := testenv.GitErr(bare, "for-each-ref", "refs/ctx/machines/"); out != "" {
		t.Fatalf("the remote kept %s", out)
	}
}

func TestRefSets(t *testing.T) {
	t.Run("git", func(t *testing.T) { refSetsScenario(t, false) })
	t.Run("go-git", func(t *testing.T) { refSetsScenario(t, true) })
}

// TestRefspecPatterns: only a "*" as the whole last component of both sides is a pattern, and only for
// fetches; forced pushes and option-like names are refused before git runs.
func TestRefspecPatterns(t *testing.T) {
	dir := testenv.NewRepo(t)
	bare := testenv.BareRemote(t)
	r := open(t, dir)
	for _, bad := range []string{"refs/ctx/machines/*:refs/q/m", "refs/ctx/m*:refs/q/m*", "refs/ctx/*/x:refs/q/*/x", "refs/ctx/-x/*:refs/q/*"} {
		if _, err := r.FetchRefs(bg, bare, []string{bad}, gitstore.TransferOptions{}); err == nil || !strings.Contains(err.Error(), "refspec") {
			t.Errorf("fetch refspec %q: %v", bad, err)
		}
	}
	for _, bad := range []string{"+refs/heads/ctx:refs/heads/ctx", "refs/heads/*:refs/heads/*", "refs/heads/ctx:refs/ctx/machines/-x"} {
		if _, err := r.PushRefs(bg, bare, []string{spec, bad}, gitstore.TransferOptions{}); err == nil {
			t.Errorf("push refspec %q accepted", bad)
		}
	}
}

// TestRefsUnderAndContained: RefsUnder reads loose and packed refs and stops past its bound; Contained
// finds the tips reachable from other commits.
func TestRefsUnderAndContained(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	a := set(t, r, pub, "a", map[string]string{"k/a": "a"}).New
	b := set(t, r, pub, "b", map[string]string{"k/b": "b"}).New
	side := set(t, r, "refs/heads/side", "side", map[string]string{"k/s": "s"}).New
	var stdin strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&stdin, "create refs/m/x%d %s\n", i, a)
	}
	testenv.GitIn(t, dir, stdin.String(), "update-ref", "--stdin")
	testenv.Git(t, dir, "pack-refs", "--all")
	testenv.Git(t, dir, "update-ref", "refs/m/x0", b.String()) // loose over packed
	refs, err := r.RefsUnder("refs/m/", 5)
	if err != nil || len(refs) != 5 || refs["refs/m/x0"] != b || refs["refs/m/x4"] != a {
		t.Fatalf("refs under: %v %v", refs, err)
	}
	if _, err := r.RefsUnder("refs/m/", 4); !errors.Is(err, gitstore.ErrTooManyRefs) {
		t.Fatalf("past the bound: %v", err)
	}
	got, err := r.Contained(bg, []gitstore.Hash{a, b, side}, []gitstore.Hash{b, side})
	if err != nil || !got[a] || got[b] || got[side] {
		t.Fatalf("contained: %v %v", got, err)
	}
}
