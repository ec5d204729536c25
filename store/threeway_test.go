package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/merge"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// teamClone is a clone of remote with the machine name m-<name>, its store initialised (adopting the
// remote's branch when it has one).
func teamClone(t *testing.T, remote, name string) (*store.Store, string) {
	t.Helper()
	dir := storetest.Repo(t)
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	return storetest.Open(t, dir, store.Actor{Agent: "cli", Machine: "m-" + name}), dir
}

func mustPull(t *testing.T, s *store.Store, who string) *store.PullResult {
	t.Helper()
	r, err := s.Pull(bg, store.PullOptions{})
	if err != nil {
		t.Fatalf("pull of %s: %v", who, err)
	}
	return r
}

func mustPush(t *testing.T, s *store.Store, who string) {
	t.Helper()
	if _, err := s.Push(bg, store.PushOptions{}); err != nil {
		t.Fatalf("push of %s: %v", who, err)
	}
}

// TestPushRefusesWhatPullRefuses: a context branch holding a conflict record whose path is another
// conflict record (what an older ctx's merge wrote) is not pushed: the push says why and how to fix it,
// and nothing reaches the remote; after ctx doctor --fix the push goes through.
func TestPushRefusesWhatPullRefuses(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, a := teamClone(t, remote, "a")
	mustPush(t, sa, "a")
	before := testenv.Git(t, remote, "for-each-ref")
	// A record about a record, committed with plain git as an older ctx's merge left it.
	inner := merge.Conflict{ID: "1111111111111111", Path: "knowledge/k.md", Field: "body", Kept: []byte("x\n"), Lost: []byte("y\n")}
	outer := merge.Conflict{ID: "2222222222222222", Path: inner.RecordPath(), Field: "lost_by.commit", Kept: inner.Record(), Lost: inner.Record()}
	tree := testenv.WithEntry(t, a, testenv.Git(t, a, "rev-parse", "ctx^{tree}"), []string{"conflicts", outer.ID + ".json"}, "100644",
		testenv.Blob(t, a, string(outer.Record())))
	testenv.Git(t, a, "update-ref", "refs/heads/ctx", testenv.CommitTree(t, a, tree, testenv.Git(t, a, "rev-parse", "ctx"), "older merge"))
	_, err := sa.Push(bg, store.PushOptions{})
	var pe *store.PublishRefusedError
	if !errors.As(err, &pe) || !errors.Is(err, store.ErrRejected) {
		t.Fatalf("push of a tree pulls refuse: %v", err)
	}
	for _, w := range []string{"conflicts/" + outer.ID + ".json", "is no file of the store", "nothing was pushed", "ctx doctor --fix"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal lacks %q: %v", w, err)
		}
	}
	if after := testenv.Git(t, remote, "for-each-ref"); after != before {
		t.Errorf("a refused push moved the remote's refs:\n%s\n%s", before, after)
	}
	if _, _, err := sa.RemoveProblems(bg); err != nil {
		t.Fatal(err)
	}
	mustPush(t, sa, "a after doctor --fix")
	if storetest.Files(t, remote, "refs/heads/ctx")["conflicts/"+outer.ID+".json"] {
		t.Error("the record about a record reached the remote")
	}
}
