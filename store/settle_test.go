package store_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// sharedConflict makes A and B hold one open conflict on path: B pushed its side first, A merged it
// (recording the conflict) and pushed, B fast-forwarded. It returns the conflict's id.
func sharedConflict(t *testing.T, sa, sb *store.Store, a, path string) string {
	t.Helper()
	if pr, err := sa.Pull(bg, store.PullOptions{}); err != nil || len(pr.Conflicts) != 1 || pr.Conflicts[0].Path != path {
		t.Fatalf("A pull: %+v %v", pr, err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if pr, err := sb.Pull(bg, store.PullOptions{}); err != nil || pr.Action != "fast-forward" {
		t.Fatalf("B pull: %+v %v", pr, err)
	}
	return conflictID(t, a)
}

// settledTwice has A and B settle conflict id each with its own version (--ours), A pushing first; B's
// pull merges the two settlements. It returns B's pull and the records of B's branch after it.
func settledTwice(t *testing.T, sa, sb *store.Store, b, id string) (*store.PullResult, []store.ConflictRecord) {
	t.Helper()
	if _, _, err := sa.ResolveConflict(bg, id, "ours", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.ResolveConflict(bg, id, "ours", nil); err != nil {
		t.Fatal(err)
	}
	pr, err := sb.Pull(bg, store.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := sb.ListConflicts(bg, mustView(t, sb))
	if err != nil {
		t.Fatal(err)
	}
	return pr, recs
}

// TestSettlementsOfOneConflictDisagree: A and B each settle the same conflict of a knowledge entry with
// their own version (`ctx resolve --ours` on each side means a different version). B's settlement keeps
// the version the file already held, so its commit changed nothing but the stamps: before, the merge took
// A's body and dropped B's choice without a conflict. Now the merge of the two settlements records a new
// conflict, and the file and the record together still hold both choices.
func TestSettlementsOfOneConflictDisagree(t *testing.T) {
	sa, sb, a, b := pair(t)
	clash(t, sa, sb, a, b, "kc", "base\n")
	id := sharedConflict(t, sa, sb, a, "knowledge/kc.md")
	pr, recs := settledTwice(t, sa, sb, b, id)
	if len(pr.Conflicts) != 1 || pr.Conflicts[0].ID == id || len(recs) != 1 || recs[0].ID != pr.Conflicts[0].ID {
		t.Fatalf("the two settlements of %s recorded no new conflict: pull %+v, open %+v", id, pr.Conflicts, recs)
	}
	noted := false
	for _, n := range pr.Notes {
		noted = noted || n.Kind == "settled-twice" && strings.Contains(n.Message, id)
	}
	if !noted {
		t.Errorf("no settled-twice note naming %s: %+v", id, pr.Notes)
	}
	file := storetest.Show(t, b, "ctx", "knowledge/kc.md")
	both := file + "\n" + recs[0].Lost
	if !strings.Contains(both, "A says") || !strings.Contains(both, "B says") || strings.TrimSpace(recs[0].Kept) != file {
		t.Errorf("a settlement is lost: file %q, record kept %q lost %q", file, recs[0].Kept, recs[0].Lost)
	}
	// Either side can settle the new conflict; the history converges.
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if pr, err := sa.Pull(bg, store.PullOptions{}); err != nil || pr.Action != "fast-forward" {
		t.Fatalf("A pull: %+v %v", pr, err)
	}
}

// TestDecisionSettlementsDisagree: the same with a decision's status, which has no updated_at: B's
// settlement (keeping the status the file held) did not touch the decision file at all, and A's status
// replaced it silently. Now the two statuses meet in a new conflict.
func TestDecisionSettlementsDisagree(t *testing.T) {
	sa, sb, a, b := pair(t)
	d, _, err := sa.AddDecision(bg, store.NewDecision{Title: "Use a queue", Decision: "We use a queue."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := d.Title
	if _, _, err := sa.SetDecisionStatus(bg, ref, "rejected", 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.SetDecisionStatus(bg, ref, "deprecated", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	id := sharedConflict(t, sa, sb, a, d.Path)
	pr, recs := settledTwice(t, sa, sb, b, id)
	if len(pr.Conflicts) != 1 || len(recs) != 1 || recs[0].Path != d.Path {
		t.Fatalf("the two settlements of %s recorded no new conflict: pull %+v, open %+v", id, pr.Conflicts, recs)
	}
	both := storetest.Show(t, b, "ctx", d.Path) + "\n" + recs[0].Lost
	if !strings.Contains(both, "status: rejected") || !strings.Contains(both, "status: deprecated") {
		t.Errorf("a settlement is lost: file and record:\n%s", both)
	}
}

// manifestOf reads manifest.json of ref in dir.
func manifestOf(t *testing.T, dir, ref string) store.Manifest {
	t.Helper()
	var m store.Manifest
	if err := json.Unmarshal([]byte(storetest.Show(t, dir, ref, "manifest.json")), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOfflineInitKeepsTheTeamsIdentity: a newcomer whose `ctx init` could not reach the remote starts a
// store of its own (another project id, name and created_at) and writes an entry into it. Merging it with
// the team's store, in either direction, keeps the team's identity (the store created first), with a
// conflict record holding the newcomer's manifest; the newcomer's entry is kept; the remote ends with the
// team's identity.
func TestOfflineInitKeepsTheTeamsIdentity(t *testing.T) {
	sa, _, a, _ := pair(t)
	team := manifestOf(t, a, "ctx")
	remote := strings.TrimSpace(testenv.Git(t, a, "remote", "get-url", "origin"))
	// created_at has whole seconds: the newcomer's store is created in a later second than the team's (on a
	// tie the smaller id would keep its identity, whichever store that is).
	for time.Now().UTC().Format(time.RFC3339) <= team.CreatedAt {
		time.Sleep(20 * time.Millisecond)
	}

	b := storetest.Repo(t)
	testenv.Git(t, b, "remote", "add", "origin", filepath.Join(t.TempDir(), "nowhere", "x.git"))
	sb, err := store.Open(bg, b, store.Actor{Agent: "b", Machine: "machine-b"})
	if err != nil {
		t.Fatal(err)
	}
	ir, err := sb.Init(bg, store.InitOptions{})
	if err != nil || ir.Unreachable == nil || !ir.Created {
		t.Fatalf("offline init: %+v %v", ir, err)
	}
	mustSet(t, sb, "newcomer", "written offline\n")
	mine := manifestOf(t, b, "ctx")
	if mine.Project.ID == team.Project.ID {
		t.Fatal("the offline store has the team's id")
	}

	// A merges the newcomer's store first (the other order).
	testenv.Git(t, a, "fetch", "-q", b, "+refs/heads/ctx:refs/peer/b")
	if _, err := sa.MergeCommit(bg, gitstore.NewHash(testenv.Git(t, a, "rev-parse", "refs/peer/b")), store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	// The newcomer reaches the remote and syncs.
	testenv.Git(t, b, "remote", "set-url", "origin", remote)
	pr, err := sb.Pull(bg, store.PullOptions{})
	if err != nil || pr.Action != "merge" {
		t.Fatalf("newcomer pull: %+v %v", pr, err)
	}
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, at := range []struct{ dir, name string }{{a, "A's merge"}, {b, "the newcomer's merge"}, {remote, "the remote"}} {
		m := manifestOf(t, at.dir, "ctx")
		if m.Project != team.Project || m.CreatedAt != team.CreatedAt {
			t.Errorf("%s: project %+v created %s, want the team's %+v created %s", at.name, m.Project, m.CreatedAt, team.Project, team.CreatedAt)
		}
	}
	if got := storetest.Show(t, remote, "ctx", "knowledge/newcomer.md"); !strings.Contains(got, "written offline") {
		t.Errorf("the newcomer's entry is gone: %q", got)
	}
	recs, err := sb.ListConflicts(bg, mustView(t, sb))
	if err != nil || len(recs) != 1 || recs[0].Path != "manifest.json" || !strings.Contains(recs[0].Lost, mine.Project.ID) {
		t.Fatalf("no record of the newcomer's identity: %+v %v", recs, err)
	}
	noted := false
	for _, n := range pr.Notes {
		noted = noted || n.Kind == "identity" && strings.Contains(n.Message, team.Project.ID)
	}
	if !noted {
		t.Errorf("no identity note: %+v", pr.Notes)
	}
}
