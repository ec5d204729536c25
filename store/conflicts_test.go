package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// pair makes a bare remote and two clones A and B with one store history (A pushes, B adopts it).
func pair(t *testing.T) (sa, sb *store.Store, a, b string) {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, "", "init", "-q", "--bare", remote)
	a = storetest.Repo(t)
	testenv.Git(t, a, "remote", "add", "origin", remote)
	sa = storetest.Open(t, a, store.Actor{Agent: "a", Machine: "machine-a"})
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	b = storetest.Repo(t)
	testenv.Git(t, b, "remote", "add", "origin", remote)
	sb = storetest.Open(t, b, store.Actor{Agent: "b", Machine: "machine-b"})
	return sa, sb, a, b
}

// clash makes A and B write different contents to one knowledge key from a common base; B pushes first,
// so A's next pull merges. It returns the two versions of the file as each side wrote it.
func clash(t *testing.T, sa, sb *store.Store, a, b, key, base string) (ours, theirs string) {
	t.Helper()
	if base != "" {
		mustSet(t, sa, key, base)
		if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Contents without a newline of their own: the file is the content and one newline, which the
	// versions below add back to git's trimmed output.
	mustSet(t, sa, key, "A says: "+key)
	mustSet(t, sb, key, "B says: "+key)
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	p := "knowledge/" + key + ".md"
	return storetest.Show(t, a, "ctx", p) + "\n", storetest.Show(t, b, "ctx", p) + "\n"
}

func mustSet(t *testing.T, s *store.Store, key, content string) {
	t.Helper()
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: key, Content: content}); err != nil {
		t.Fatal(err)
	}
}

func conflictFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for p := range storetest.Files(t, dir, "ctx") {
		if strings.HasPrefix(p, "conflicts/") {
			out = append(out, p)
		}
	}
	return out
}

// TestConflictsListGetResolve: a pull that conflicts records one conflict (merge commit with Ctx-Conflicts:
// 1); ListConflicts maps kept/lost to ours/theirs from the merge's parents; GetConflict finds it by path,
// id and record path; ResolveConflict --theirs writes their version and deletes the record in one commit.
func TestConflictsListGetResolve(t *testing.T) {
	sa, sb, a, b := pair(t)
	ours, theirs := clash(t, sa, sb, a, b, "arch", "base text\n")
	pr, err := sa.Pull(bg, store.PullOptions{})
	if err != nil || pr.Action != "merge" || len(pr.Conflicts) != 1 {
		t.Fatalf("pull: %+v %v", pr, err)
	}
	msg := storetest.LastMessage(t, a, "ctx")
	if !strings.Contains(msg, "Ctx-Op: merge") || !strings.Contains(msg, "Ctx-Conflicts: 1") {
		t.Errorf("merge message: %s", msg)
	}
	if p := strings.Fields(testenv.Git(t, a, "log", "-1", "--format=%P", "ctx")); len(p) != 2 {
		t.Errorf("merge parents: %v", p)
	}
	v, err := sa.RefView(bg)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := sa.ListConflicts(bg, v)
	if err != nil || len(recs) != 1 {
		t.Fatalf("ListConflicts: %+v %v", recs, err)
	}
	r := recs[0]
	// The meta fields (author, agent, updated_at) come from the winner in both versions (merge's metaKeys):
	// compare bodies.
	if r.Path != "knowledge/arch.md" || body(r.Ours) != body(ours) || body(r.Theirs) != body(theirs) || r.BaseAbsent || !strings.Contains(r.Base, "base text") {
		t.Errorf("record: %+v\nwant ours %q theirs %q", r, ours, theirs)
	}
	if r.Diff != store.UnifiedDiff(r.Kept, r.Lost, 3) || !strings.Contains(r.Diff, "says") {
		t.Errorf("diff: %q", r.Diff)
	}
	for _, key := range []string{"knowledge/arch.md", r.ID, "conflicts/" + r.ID + ".json", r.ID[:4], strings.ToUpper(r.ID[:8])} {
		if g, err := sa.GetConflict(bg, v, key); err != nil || g.ID != r.ID || g.Ours != r.Ours {
			t.Errorf("GetConflict(%s): %+v %v", key, g, err)
		}
	}
	var nf *store.NotFoundError
	if _, err := sa.GetConflict(bg, v, "knowledge/none.md"); !errors.As(err, &nf) || err.Error() != "Conflict 'knowledge/none.md' not found" {
		t.Errorf("missing conflict: %v", err)
	}
	// An id prefix shorter than 4, or one no id has, is no conflict.
	for _, key := range []string{r.ID[:3], "zzzz", flipFirst(r.ID[:6])} {
		if _, err := sa.GetConflict(bg, v, key); !errors.As(err, &nf) {
			t.Errorf("GetConflict(%s): %v, want not found", key, err)
		}
	}
	if _, _, err := sa.ResolveConflict(bg, r.ID, "both", nil); err == nil {
		t.Errorf("invalid choice accepted")
	}
	before := storetest.Count(t, a, "ctx")
	// Pick the side the merge did not keep, so the file changes.
	choice, want := "theirs", r.Theirs
	if r.OursIs == "lost" {
		choice, want = "ours", r.Ours
	}
	_, c, err := sa.ResolveConflict(bg, "knowledge/arch.md", choice, nil)
	if err != nil || !c.Changed() {
		t.Fatalf("resolve: %v", err)
	}
	if storetest.Count(t, a, "ctx") != before+1 {
		t.Errorf("resolve made %d commits", storetest.Count(t, a, "ctx")-before)
	}
	// The chosen version's text, written by the resolver (the front matter names them and the time).
	if got := storetest.Show(t, a, "ctx", "knowledge/arch.md") + "\n"; body(got) != body(want) || want != r.Lost || !strings.Contains(got, "agent: a\n") {
		t.Errorf("resolved file %q, want %q", got, want)
	}
	if f := conflictFiles(t, a); len(f) != 0 {
		t.Errorf("records left: %v", f)
	}
	if msg := storetest.LastMessage(t, a, "ctx"); !strings.Contains(msg, "Ctx-Op: conflict.resolve") || !strings.Contains(msg, "Ctx-Key: knowledge/arch.md") {
		t.Errorf("resolve message: %s", msg)
	}
	changed := testenv.Git(t, a, "diff-tree", "--no-commit-id", "--name-only", "-r", "ctx")
	if changed != "conflicts/"+r.ID+".json\nknowledge/arch.md" {
		t.Errorf("resolve commit changed %q", changed)
	}
	if _, _, err := sa.ResolveConflict(bg, r.ID, "ours", nil); !errors.As(err, &nf) {
		t.Errorf("resolving twice: %v", err)
	}
}

// TestConflictsSeveralOnOnePath: two merges conflicting on one path leave two records; the path is then
// ambiguous (the error lists both ids) and each id resolves alone; "file" writes given content; the other
// record is then changed: a recorded version is refused over the hand merge, "current" closes it.
func TestConflictsSeveralOnOnePath(t *testing.T) {
	sa, sb, a, b := pair(t)
	clash(t, sa, sb, a, b, "k", "v0\n")
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil { // merges, 1 conflict, publishes
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sa, "k", "A again\n")
	mustSet(t, sb, "k", "B again\n")
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if pr, err := sa.Pull(bg, store.PullOptions{}); err != nil || len(pr.Conflicts) != 1 {
		t.Fatalf("second pull: %+v %v", pr, err)
	}
	v, _ := sa.RefView(bg)
	recs, err := sa.ListConflicts(bg, v)
	if err != nil || len(recs) != 2 {
		t.Fatalf("ListConflicts: %d %v", len(recs), err)
	}
	_, err = sa.GetConflict(bg, v, "knowledge/k.md")
	if err == nil || !strings.Contains(err.Error(), recs[0].ID) || !strings.Contains(err.Error(), recs[1].ID) {
		t.Errorf("ambiguous path: %v", err)
	}
	if _, _, err := sa.ResolveConflict(bg, recs[0].ID, "file", []byte("hand merged\n")); err != nil {
		t.Fatal(err)
	}
	// The entry keeps its front matter; the body is the given content.
	if got := storetest.Show(t, a, "ctx", "knowledge/k.md"); !strings.HasSuffix(got, "\n---\nhand merged") || !strings.Contains(got, "scope: public\n") {
		t.Errorf("file resolution: %q", got)
	}
	// The other record's file now holds the hand merge: taking a recorded version would undo it.
	v, _ = sa.RefView(bg)
	if r, err := sa.GetConflict(bg, v, "knowledge/k.md"); err != nil || !r.Changed {
		t.Errorf("the last conflict of the path after the hand merge: changed %v, %v", r.Changed, err)
	}
	if _, _, err := sa.ResolveConflict(bg, "knowledge/k.md", "kept", nil); !errors.Is(err, store.ErrConflictChanged) {
		t.Errorf("kept over a newer hand merge: %v, want ErrConflictChanged", err)
	}
	if _, _, err := sa.ResolveConflict(bg, "knowledge/k.md", "current", nil); err != nil {
		t.Errorf("the last conflict of the path: %v", err)
	}
	if got := storetest.Show(t, a, "ctx", "knowledge/k.md"); !strings.HasSuffix(got, "\n---\nhand merged") {
		t.Errorf("--current changed the file: %q", got)
	}
	if f := conflictFiles(t, a); len(f) != 0 {
		t.Errorf("records left: %v", f)
	}
}

// TestPullStrategy: --strategy ours/theirs decides the conflict in the merge commit itself: the chosen
// side's version in the file, no record, trailers Ctx-Conflicts: 0, Ctx-Strategy and Ctx-Decided.
func TestPullStrategy(t *testing.T) {
	for _, st := range []store.Strategy{store.StrategyOurs, store.StrategyTheirs} {
		t.Run(string(st), func(t *testing.T) {
			sa, sb, a, b := pair(t)
			ours, theirs := clash(t, sa, sb, a, b, "x", "base\n")
			pr, err := sa.Pull(bg, store.PullOptions{Strategy: st})
			if err != nil || pr.Action != "merge" || len(pr.Conflicts) != 0 || len(pr.Decided) != 1 {
				t.Fatalf("pull: %+v %v", pr, err)
			}
			want := ours
			if st == store.StrategyTheirs {
				want = theirs
			}
			if got := storetest.Show(t, a, "ctx", "knowledge/x.md") + "\n"; body(got) != body(want) {
				t.Errorf("file %q, want %q", got, want)
			}
			if f := conflictFiles(t, a); len(f) != 0 {
				t.Errorf("records written: %v", f)
			}
			msg := storetest.LastMessage(t, a, "ctx")
			for _, tr := range []string{"Ctx-Op: merge", "Ctx-Conflicts: 0", "Ctx-Strategy: " + string(st), "Ctx-Decided: 1"} {
				if !strings.Contains(msg, tr) {
					t.Errorf("merge message lacks %q: %s", tr, msg)
				}
			}
		})
	}
	sa, _, _, _ := pair(t)
	if _, err := sa.Pull(bg, store.PullOptions{Strategy: "mine"}); err == nil {
		t.Errorf("invalid strategy accepted")
	}
}

// TestPullCommitsHandEditsFirst: hand edits pending in .context/ are committed before the merge (Pull →
// CommitHandEdits), survive the merge, and reach the other clone.
func TestPullCommitsHandEditsFirst(t *testing.T) {
	sa, sb, a, b := pair(t)
	mustSet(t, sb, "from-b", "b\n")
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sa, "from-a", "a\n") // diverge, so the pull merges
	hand := filepath.Join(a, ".context", "knowledge", "hand.md")
	if err := os.WriteFile(hand, []byte("typed by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, err := sa.Pull(bg, store.PullOptions{})
	if err != nil || len(pr.HandEdits) != 1 || pr.Action != "merge" {
		t.Fatalf("pull: %+v %v", pr, err)
	}
	if got, _ := os.ReadFile(hand); string(got) != "typed by hand\n" {
		t.Errorf("hand edit after pull: %q", got)
	}
	if _, err := os.Stat(filepath.Join(a, ".context", "knowledge", "from-b.md")); err != nil {
		t.Errorf("pulled entry not checked out: %v", err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Show(t, b, "ctx", "knowledge/hand.md"); got != "typed by hand" {
		t.Errorf("B reads %q", got)
	}
}

// body is a markdown entry's text after its front matter.
func body(s string) string {
	if _, rest, ok := strings.Cut(s, "\n---\n"); ok {
		return rest
	}
	return s
}

// TestPullSeesFetchedPack: a fetch of more than fetch.unpackLimit (100) objects is stored by git as a new
// packfile; the merge that follows in the same process must read it (found by TestConvergence: "read
// commit ...: object not found").
func TestPullSeesFetchedPack(t *testing.T) {
	sa, sb, _, _ := pair(t)
	for i := 0; i < 50; i++ {
		mustSet(t, sb, "many-"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26)), "entry\n")
	}
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sa, "mine", "a\n")
	if _, err := sa.RefView(bg); err != nil { // the object storage has indexed its packs
		t.Fatal(err)
	}
	pr, err := sa.Pull(bg, store.PullOptions{})
	if err != nil || pr.Action != "merge" {
		t.Fatalf("pull: %+v %v", pr, err)
	}
}

// TestOursIsTheResolversVersion: ours/theirs are defined by the user and machine that read or resolve the
// conflict, not by the machine that made the merge. A merges (its merge commit's first parent is A's side)
// and pushes; B fast-forwards: for B, ours is B's version, for A, A's. The record names both writers.
func TestOursIsTheResolversVersion(t *testing.T) {
	sa, sb, a, b := pair(t)
	clash(t, sa, sb, a, b, "arch", "base\n")
	if pr, err := sa.Pull(bg, store.PullOptions{}); err != nil || len(pr.Conflicts) != 1 {
		t.Fatalf("pull: %+v %v", pr, err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if pr, err := sb.Pull(bg, store.PullOptions{}); err != nil || pr.Action != "fast-forward" {
		t.Fatalf("B pull: %+v %v", pr, err)
	}
	for _, side := range []struct {
		s              *store.Store
		ours, theirs   string
		machine, other string
	}{{sa, "A says", "B says", "machine-a", "machine-b"}, {sb, "B says", "A says", "machine-b", "machine-a"}} {
		v, err := side.s.RefView(bg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := side.s.GetConflict(bg, v, "knowledge/arch.md")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Ours, side.ours) || !strings.Contains(r.Theirs, side.theirs) || r.OursFrom != "machine" {
			t.Errorf("%s: ours %q theirs %q (from %s)", side.machine, body(r.Ours), body(r.Theirs), r.OursFrom)
		}
		if r.OursBy == nil || r.TheirsBy == nil || r.OursBy.Machine != side.machine || r.TheirsBy.Machine != side.other ||
			!strings.Contains(r.OursBy.Author, "<") || len(r.OursBy.Commit) != 40 {
			t.Errorf("%s: writers %+v %+v", side.machine, r.OursBy, r.TheirsBy)
		}
	}
	rec := storetest.Show(t, b, "ctx", "conflicts/"+conflictID(t, b)+".json")
	if !strings.Contains(rec, `"kept_by"`) || !strings.Contains(rec, `"lost_by"`) || !strings.Contains(rec, `"machine": "machine-b"`) {
		t.Errorf("record does not name both writers:\n%s", rec)
	}
	// B resolves with --ours: B's version.
	if _, _, err := sb.ResolveConflict(bg, "knowledge/arch.md", "ours", nil); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Show(t, b, "ctx", "knowledge/arch.md"); !strings.Contains(got, "B says") {
		t.Errorf("B resolved --ours to %q", got)
	}
}

func conflictID(t *testing.T, dir string) string {
	t.Helper()
	f := conflictFiles(t, dir)
	if len(f) != 1 {
		t.Fatalf("conflict records: %v", f)
	}
	return strings.TrimSuffix(strings.TrimPrefix(f[0], "conflicts/"), ".json")
}

// TestDeleteVsEditConflict: A deletes an entry B edits. The edit is kept, and the delete is an open
// conflict: for A (who deleted) ours is the delete, and resolve --ours deletes the entry.
func TestDeleteVsEditConflict(t *testing.T) {
	sa, sb, a, b := pair(t)
	mustSet(t, sa, "old", "v1\n")
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.RemoveEntry(bg, store.KnowledgeKind, "old"); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sb, "old", "v2 by B\n")
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	pr, err := sa.Pull(bg, store.PullOptions{})
	if err != nil || len(pr.Conflicts) != 1 || len(pr.Notes) != 1 || pr.Notes[0].Kind != "delete-vs-edit" {
		t.Fatalf("pull: %+v %v", pr, err)
	}
	if got := storetest.Show(t, a, "ctx", "knowledge/old.md"); !strings.Contains(got, "v2 by B") {
		t.Errorf("the edit was not kept: %q", got)
	}
	v, _ := sa.RefView(bg)
	r, err := sa.GetConflict(bg, v, "knowledge/old.md")
	if err != nil || !r.LostDeleted || !r.OursDeleted || r.TheirsDeleted || !strings.Contains(r.Theirs, "v2 by B") {
		t.Fatalf("conflict: %+v %v", r, err)
	}
	if _, _, err := sa.ResolveConflict(bg, r.ID, "ours", nil); err != nil {
		t.Fatal(err)
	}
	if out := testenv.Git(t, a, "ls-tree", "--name-only", "-r", "ctx", "knowledge/", "conflicts/"); out != "" {
		t.Errorf("after resolve --ours (the delete): %q", out)
	}
	_ = b
}

// TestResolveFileKeepsMetadata: `resolve --file` with a body only keeps the entry's front matter, with the
// resolver as the writer of the new version; a JSON record keeps the fields the given content lacks.
func TestResolveFileKeepsMetadata(t *testing.T) {
	sa, sb, a, b := pair(t)
	clash(t, sa, sb, a, b, "arch", "base\n")
	if _, err := sa.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	sa.Actor.Agent = "resolver-agent"
	// Empty content is refused, as for every write of an entry; the record stays open.
	for _, empty := range []string{"", "\n  \n", "---\nagent: x\n---\n\n"} {
		if _, _, err := sa.ResolveConflict(bg, "knowledge/arch.md", "file", []byte(empty)); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "is empty") {
			t.Errorf("resolve with %q: %v", empty, err)
		}
	}
	if out := testenv.Git(t, a, "ls-tree", "--name-only", "ctx", "conflicts/"); out == "" {
		t.Fatal("a refused resolution closed the record")
	}
	// A resolution labelled private is refused: the conflict's file is public, and a public file saying
	// scope: private would trip every later hand edit of it (a tester's `ctx resolve --file`).
	for _, other := range []string{"---\nscope: private\n---\nmerged by hand\n", "---\nscope: ephemeral\n---\nmerged\n"} {
		if _, _, err := sa.ResolveConflict(bg, "knowledge/arch.md", "file", []byte(other)); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "a hand edit of scope: does not move an entry") {
			t.Errorf("resolve with %q: %v", other, err)
		}
	}
	if out := testenv.Git(t, a, "ls-tree", "--name-only", "ctx", "conflicts/"); out == "" {
		t.Fatal("a refused resolution closed the record")
	}
	if _, _, err := sa.ResolveConflict(bg, "knowledge/arch.md", "file", []byte("---\nscope: public\n---\nboth A and B\n")); err != nil {
		t.Fatal(err)
	}
	e, err := mustView(t, sa).GetEntry(bg, store.KnowledgeKind, "arch")
	if err != nil {
		t.Fatal(err)
	}
	if e.Content != "both A and B" || e.Agent != "resolver-agent" || e.Author == "" || e.Provenance == "" || e.Scope != store.Public || e.UpdatedAt == "" {
		t.Errorf("resolved entry: %+v", e)
	}
}

func mustView(t *testing.T, s *store.Store) *store.View {
	t.Helper()
	v, err := s.RefView(bg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPullStrategyDeleteVsEdit: --strategy decides a delete against an edit too: ours (the side that
// deleted) deletes the file, theirs keeps the edit; no record either way.
func TestPullStrategyDeleteVsEdit(t *testing.T) {
	for _, st := range []store.Strategy{store.StrategyOurs, store.StrategyTheirs} {
		t.Run(string(st), func(t *testing.T) {
			sa, sb, a, _ := pair(t)
			mustSet(t, sa, "old", "v1\n")
			if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := sa.RemoveEntry(bg, store.KnowledgeKind, "old"); err != nil {
				t.Fatal(err)
			}
			mustSet(t, sb, "old", "v2 by B\n")
			if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
				t.Fatal(err)
			}
			pr, err := sa.Pull(bg, store.PullOptions{Strategy: st})
			if err != nil || len(pr.Conflicts) != 0 || len(pr.Decided) != 1 {
				t.Fatalf("pull: %+v %v", pr, err)
			}
			ls := testenv.Git(t, a, "ls-tree", "--name-only", "-r", "ctx", "knowledge/", "conflicts/")
			want := ""
			if st == store.StrategyTheirs {
				want = "knowledge/old.md"
			}
			if ls != want {
				t.Errorf("--strategy %s left %q, want %q", st, ls, want)
			}
		})
	}
}

// TestOppositeResolutionsConflictAgain: a delete-vs-edit conflict that A settles by keeping the edit and B
// by keeping the delete, each pushing: the keep is a write of A's (it names A and the time), so B's push
// merges a delete against a change, the entry survives and a conflict records the delete again: nothing of
// either explicit choice is lost silently.
func TestOppositeResolutionsConflictAgain(t *testing.T) {
	sa, sb, a, b := pair(t)
	mustSet(t, sa, "old", "v1\n")
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.RemoveEntry(bg, store.KnowledgeKind, "old"); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sb, "old", "v2 by B\n")
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Pull(bg, store.PullOptions{}); err != nil { // merges (the conflict)
		t.Fatal(err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil { // and publishes
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(conflictFiles(t, a)[0], "conflicts/"), ".json")
	// A keeps the edit (the version in the file); B keeps the delete.
	if _, _, err := sa.ResolveConflict(bg, id, "kept", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.ResolveConflict(bg, id, "lost", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil { // merges A's resolution
		t.Fatal(err)
	}
	if got := storetest.Show(t, b, "ctx", "knowledge/old.md"); !strings.Contains(got, "v2 by B") {
		t.Fatalf("the entry A chose to keep is gone after B's opposite resolution: %q", got)
	}
	if len(conflictFiles(t, b)) != 1 {
		t.Fatalf("the opposite resolutions left no conflict to settle: %v", conflictFiles(t, b))
	}
}

// flipFirst changes the first hex digit of id.
func flipFirst(id string) string {
	c := "0"
	if id[0] == '0' {
		c = "1"
	}
	return c + id[1:]
}

// TestRenameAgainstDeleteSides: A renames an entry (by hand: the file moves, its text stays) while B
// deletes it; B's pull keeps the renamed file and records the delete as the lost version. Ours is the
// local side for each user (docs/format.md "Conflicts"): for B the delete (lost_by names B's delete
// commit), for A the rename; and with neither writer this machine's, B's merge commit still says the
// delete is ours (its first parent has no file at the new path). B's resolve --ours deletes the file.
func TestRenameAgainstDeleteSides(t *testing.T) {
	sa, sb, a, b := pair(t)
	text := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"
	mustSet(t, sa, "shared", text)
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	old := []byte(storetest.Show(t, a, "ctx", "knowledge/shared.md") + "\n")
	if _, err := sa.Write(bg, store.Op{Name: "commit", Summary: "rename shared"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Del(store.Public, "knowledge/shared.md")
		ed.Put(store.Public, "knowledge/shared2.md", old)
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.RemoveEntry(bg, store.KnowledgeKind, "shared"); err != nil {
		t.Fatal(err)
	}
	if pr, err := sb.Pull(bg, store.PullOptions{}); err != nil || len(pr.Conflicts) != 1 {
		t.Fatalf("B pull: %+v %v", pr, err)
	}
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		s       *store.Store
		machine string
		deleted bool // ours is the delete
	}{{sb, "machine-b", true}, {sa, "machine-a", false}} {
		r, err := side.s.GetConflict(bg, mustView(t, side.s), "knowledge/shared2.md")
		if err != nil {
			t.Fatal(err)
		}
		if r.OursDeleted != side.deleted || r.TheirsDeleted == side.deleted || r.OursFrom != "machine" ||
			r.OursBy == nil || r.OursBy.Machine != side.machine || r.TheirsBy == nil {
			t.Errorf("%s: ours deleted %v, theirs deleted %v (from %s), by %+v / %+v", side.machine, r.OursDeleted, r.TheirsDeleted, r.OursFrom, r.OursBy, r.TheirsBy)
		}
	}
	if rec := storetest.Show(t, b, "ctx", "conflicts/"+conflictID(t, b)+".json"); !strings.Contains(rec, `"lost_by"`) {
		t.Errorf("the record does not name the deleter:\n%s", rec)
	}
	sb.Actor.Machine = "machine-c" // neither writer's machine: B's merge commit decides
	r, err := sb.GetConflict(bg, mustView(t, sb), "knowledge/shared2.md")
	if err != nil || !r.OursDeleted || r.OursFrom != "merge" {
		t.Fatalf("from the merge: %+v %v", r, err)
	}
	sb.Actor.Machine = "machine-b"
	if _, _, err := sb.ResolveConflict(bg, r.ID, "ours", nil); err != nil {
		t.Fatal(err)
	}
	if out := testenv.Git(t, b, "ls-tree", "--name-only", "-r", "ctx", "knowledge/", "conflicts/"); out != "" {
		t.Errorf("after B's resolve --ours (the delete): %q", out)
	}
}

// TestResolveRefusesSupersedeCycle: A supersedes 1 by 2 while B supersedes 2 by 1; A's pull breaks the
// cycle into a conflict (docs/merge.md "Supersede cycles"). Resolving it with the version that closes the
// cycle is refused, naming the decisions (ctx decision supersede refuses that state too); the other
// version settles it. ctx doctor reports a cycle that reached the branch otherwise (plain git).
func TestResolveRefusesSupersedeCycle(t *testing.T) {
	sa, sb, _, _ := pair(t)
	var paths []string
	for _, title := range []string{"One", "Two"} {
		d, _, err := sa.AddDecision(bg, store.NewDecision{Title: title, Status: "accepted"})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, d.Path)
	}
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sa.SetDecisionStatus(bg, "1", "superseded", 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.SetDecisionStatus(bg, "2", "superseded", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	pr, err := sa.Pull(bg, store.PullOptions{})
	if err != nil || len(pr.Conflicts) != 1 {
		t.Fatalf("pull: %+v %v", pr, err)
	}
	id := pr.Conflicts[0].ID
	_, _, err = sa.ResolveConflict(bg, id, "lost", nil)
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "supersede cycle") || !strings.Contains(err.Error(), "--file") {
		t.Fatalf("resolve with the cycle: %v", err)
	}
	if _, _, err := sa.ResolveConflict(bg, id, "kept", nil); err != nil {
		t.Fatal(err)
	}
	d, err := sa.Doctor(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Clashes {
		if c.Kind == "supersede-cycle" {
			t.Errorf("a clash after the conflict was settled: %+v", c)
		}
	}
	// Plain git (here a raw write) closes the cycle: doctor names both decisions.
	var edits []string
	if _, err := sa.Write(bg, store.Op{Name: "commit", Summary: "hand edit"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		for i, p := range paths {
			b, err := v.ReadIn(bg, store.Public, p)
			if err != nil {
				return nil, err
			}
			s := strings.Replace(string(b), "status: accepted", "status: superseded\nsuperseded_by: "+strconv.Itoa(2-i), 1)
			edits = append(edits, s)
			ed.Put(store.Public, p, []byte(s))
		}
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
	if d, err = sa.Doctor(bg); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range d.Clashes {
		if c.Kind == "supersede-cycle" && len(c.Paths) == 2 && c.Paths[0].Path == paths[0] && c.Paths[1].Path == paths[1] && strings.Contains(c.Fix, "1 -> 2 -> 1") {
			found = true
		}
	}
	if !found {
		t.Errorf("doctor: %+v\nfiles:\n%s", d.Clashes, strings.Join(edits, "\n"))
	}
}
