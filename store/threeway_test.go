package store_test

import (
	"errors"
	"path/filepath"
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

// TestOfflineInitAdoptsTrackingRef: a clone whose remote-tracking ref refs/remotes/origin/ctx holds the
// team's branch (fetched earlier) and whose remote cannot be reached now: ctx init adopts that ref, as it
// adopts the remote's branch online, with the transfer error reported; the team's identity is kept and a
// later sync merges nothing of a second store (before: a store of its own, and a manifest conflict at the
// next sync). A tracking ref that a pull would refuse is refused by init too, nothing written.
func TestOfflineInitAdoptsTrackingRef(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, _ := teamClone(t, remote, "a")
	mustSet(t, sa, "team", "the team's\n")
	mustPush(t, sa, "a")
	b := testenv.Clone(t, remote, "b")
	tracked := testenv.Git(t, b, "rev-parse", "refs/remotes/origin/ctx")
	testenv.Git(t, b, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "nowhere", "x.git"))
	sb, err := store.Open(bg, b, store.Actor{Agent: "cli", Machine: "m-b"})
	if err != nil {
		t.Fatal(err)
	}
	ir, err := sb.Init(bg, store.InitOptions{})
	if err != nil || ir.Unreachable == nil || ir.Created || ir.Adopted != "origin" || ir.FromTracking != "refs/remotes/origin/ctx" || ir.Tip.String() != tracked {
		t.Fatalf("offline init beside a tracking ref: %+v %v", ir, err)
	}
	if got := storetest.Show(t, b, "ctx", "knowledge/team.md"); !strings.Contains(got, "the team's") {
		t.Errorf("adopted branch lacks the team's entry: %s", got)
	}
	mustSet(t, sb, "mine", "b's\n")
	testenv.Git(t, b, "remote", "set-url", "origin", remote)
	if r := mustPull(t, sb, "b"); r.Action != store.PullUpToDate || len(r.Conflicts) != 0 {
		t.Errorf("pull after the offline init: %+v", r)
	}
	mustPush(t, sb, "b")
	if r := mustPull(t, sa, "a"); r.Action != store.PullFastForward {
		t.Errorf("a's pull: %+v", r)
	}

	// A tracking ref to a tip holding a symbolic link: refused as a pull refuses it, no branch made.
	c := testenv.Clone(t, remote, "c")
	tip := testenv.Git(t, c, "rev-parse", "refs/remotes/origin/ctx")
	tree := testenv.WithEntry(t, c, testenv.Git(t, c, "rev-parse", tip+"^{tree}"), []string{"knowledge", "link.md"}, "120000", testenv.Blob(t, c, "/etc/passwd"))
	testenv.Git(t, c, "update-ref", "refs/remotes/origin/ctx", testenv.CommitTree(t, c, tree, tip, "link"))
	testenv.Git(t, c, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "nowhere", "x.git"))
	sc, err := store.Open(bg, c, store.Actor{Agent: "cli", Machine: "m-c"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Init(bg, store.InitOptions{}); !errors.Is(err, store.ErrRejected) {
		t.Errorf("offline init from a hostile tracking ref: %v", err)
	}
	if out, _ := testenv.GitErr(c, "rev-parse", "-q", "--verify", "refs/heads/ctx"); out != "" {
		t.Errorf("a refused init made the branch: %s", out)
	}
}

// TestNewerKindAdvice: a tip holding files in a top-level folder this ctx does not know (what a newer
// ctx's new kind looks like, as transcripts/ did to the ctx before it) is refused with the advice to
// upgrade ctx, not only to remove the teammate's data with git (a tester's older teammate was told to
// git rm the shared sessions). A file at the root, or a link, keeps the repair advice alone.
func TestNewerKindAdvice(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, a := teamClone(t, remote, "a")
	mustPush(t, sa, "a")
	sb, _ := teamClone(t, remote, "b")
	mustPull(t, sb, "b")
	for _, c := range []struct {
		names   []string
		upgrade bool
	}{
		{[]string{"futurekind", "2026", "12", "x.ndjson"}, true},
		{[]string{"futurekind", "y.json"}, true},
		{[]string{"evil.sh"}, false},
		{[]string{"knowledge", "sub", "x.md"}, false},
		// A known folder with a name its key rules refuse: which rule, no upgrade hint.
		{[]string{"knowledge", "Readme.md"}, false},
		{[]string{"knowledge", "cafe\u0301.md"}, false},
		{[]string{"skills", "Review", "SKILL.md"}, false},
	} {
		base := testenv.Git(t, a, "rev-parse", "ctx")
		tree := testenv.WithEntry(t, a, testenv.Git(t, a, "rev-parse", "ctx^{tree}"), c.names, "100644", testenv.Blob(t, a, "{}\n"))
		testenv.Git(t, a, "push", "-q", "--force", remote, testenv.CommitTree(t, a, tree, base, "a newer ctx's kind")+":refs/heads/ctx")
		_, err := sb.Pull(bg, store.PullOptions{})
		if !errors.Is(err, store.ErrRejected) {
			t.Fatalf("%v: pull: %v", c.names, err)
		}
		if got := strings.Contains(err.Error(), "upgrade ctx") && strings.Contains(err.Error(), c.names[0]+"/ (a folder this ctx does not know)"); got != c.upgrade {
			t.Errorf("%v: upgrade advice %v, want %v: %v", c.names, got, c.upgrade, err)
		}
		if !c.upgrade && strings.Contains(err.Error(), "upgrade ctx") {
			t.Errorf("%v: an upgrade hint: %v", c.names, err)
		}
		if c.names[0] == "skills" || len(c.names) == 2 && c.names[0] == "knowledge" {
			if !strings.Contains(err.Error(), "Keys and names") {
				t.Errorf("%v: the refusal does not name the key rules: %v", c.names, err)
			}
		}
		testenv.Git(t, a, "push", "-q", "--force", remote, base+":refs/heads/ctx")
	}
}
