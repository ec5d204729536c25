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

// TestThreeMachinesOneConflict: clones a, b and c; a and b set one key with different texts, c sets
// another; each pushes, then b, c, a pull, then a, b, c sync. Every machine that merged the two texts
// recorded the same conflict; the records meet in later merges and stay one record (before: c's merge
// made a conflict record of the two records, whose path is a conflict record, and every pull after it
// was refused). The record credits each text to the commit that wrote it (a's and b's own sets), not to
// the machine whose merge brought it (before: "c <c@x> on m-c" for a's text), and every pull and push
// succeeds.
func TestThreeMachinesOneConflict(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, a := teamClone(t, remote, "a")
	mustPush(t, sa, "a")
	sb, b := teamClone(t, remote, "b")
	sc, c := teamClone(t, remote, "c")
	mustSet(t, sa, "k", "from a\n")
	mustSet(t, sb, "k", "from b\n")
	mustSet(t, sc, "other", "c\n")
	setBy := map[string]string{
		"a": testenv.Git(t, a, "rev-parse", "ctx"),
		"b": testenv.Git(t, b, "rev-parse", "ctx"),
	}
	clones := []struct {
		name string
		s    *store.Store
		dir  string
	}{{"a", sa, a}, {"b", sb, b}, {"c", sc, c}}
	for _, x := range clones {
		mustPush(t, x.s, x.name)
	}
	for _, i := range []int{1, 2, 0} {
		mustPull(t, clones[i].s, clones[i].name)
	}
	for _, x := range clones {
		mustPull(t, x.s, x.name)
		mustPush(t, x.s, x.name)
	}
	for _, x := range clones {
		mustPull(t, x.s, x.name)
	}
	for _, x := range clones {
		var recs []string
		for p := range storetest.Files(t, x.dir, "ctx") {
			if strings.HasPrefix(p, "conflicts/") {
				recs = append(recs, p)
			}
		}
		if len(recs) != 1 {
			t.Fatalf("%s: want one conflict record, have %v", x.name, recs)
		}
		rec, err := merge.ParseRecord([]byte(storetest.Show(t, x.dir, "ctx", recs[0])))
		if err != nil || rec.Path != "knowledge/k.md" {
			t.Fatalf("%s: record %s: %+v %v", x.name, recs[0], rec, err)
		}
		for _, sd := range []merge.Side{rec.KeptBy, rec.LostBy} {
			who := strings.TrimPrefix(sd.Machine, "m-")
			if setBy[who] == "" || sd.Commit != setBy[who] || sd.Agent != "cli" ||
				sd.Author != testenv.Git(t, x.dir, "log", "-1", "--format=%an <%ae>", sd.Commit) {
				t.Errorf("%s: a version credited to %+v, want the set of a or b (%v)", x.name, sd, setBy)
			}
		}
		if rec.KeptBy.Machine == rec.LostBy.Machine {
			t.Errorf("%s: both versions credited to %s", x.name, rec.KeptBy.Machine)
		}
		if probs, err := x.s.TreeProblems(bg); err != nil || len(probs) != 0 {
			t.Errorf("%s: problems %v %v", x.name, probs, err)
		}
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
