package store_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/merge"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

func TestSetScopeKnowledge(t *testing.T) {
	f := newFixture(t)
	if _, err := f.s.SetEntry(f.ctx, store.KnowledgeKind, store.SetEntry{Key: "creds", Content: "body\n"}); err != nil {
		t.Fatal(err)
	}
	priv := f.count(store.RefPrivate)
	f.commits("ctx", 1, func() {
		if _, err := f.s.SetScope(f.ctx, "knowledge", "creds", store.Private); err != nil {
			t.Fatal(err)
		}
	})
	if f.count(store.RefPrivate) != priv+1 {
		t.Fatal("no commit on the private ref")
	}
	f.trailers("ctx", "knowledge.scope", "creds")
	f.trailers(store.RefPrivate, "knowledge.scope", "creds")
	if storetest.Files(t, f.dir, "ctx")["knowledge/creds.md"] {
		t.Fatal("still on ctx")
	}
	if !storetest.Files(t, f.dir, store.RefPrivate)["knowledge/creds.md"] {
		t.Fatal("not on the private ref")
	}
	got := storetest.Show(t, f.dir, store.RefPrivate, "knowledge/creds.md")
	if !strings.Contains(got, "scope: private") || !strings.HasSuffix(got, "---\nbody") {
		t.Fatalf("moved file:\n%s", got)
	}
	e, err := f.view().GetEntry(f.ctx, store.KnowledgeKind, "creds")
	if err != nil || e.Scope != store.Private || e.Content != "body\n" {
		t.Fatalf("entry: %+v %v", e, err)
	}
	// Already there, missing, bad kind or scope: nothing written.
	f.commits("ctx", 0, func() {
		if _, err := f.s.SetScope(f.ctx, "knowledge", "creds", store.Private); err != nil {
			t.Fatal(err)
		}
		var nf *store.NotFoundError
		if _, err := f.s.SetScope(f.ctx, "convention", "creds", store.Private); !errors.As(err, &nf) || err.Error() != "Convention 'creds' not found" {
			t.Fatalf("missing: %v", err)
		}
		if _, err := f.s.SetScope(f.ctx, "widget", "creds", store.Private); err == nil {
			t.Fatal("bad kind")
		}
		if _, err := f.s.SetScope(f.ctx, "knowledge", "creds", "secret"); err == nil {
			t.Fatal("bad scope")
		}
	})
	if f.count(store.RefPrivate) != priv+1 {
		t.Fatal("private ref moved on a no-op")
	}
}

func TestSetScopeSkillAndDecision(t *testing.T) {
	f := newFixture(t)
	must[store.Skill](t)(f.s.AddSkill(f.ctx, "deploy", "Deploy", "steps", ""))
	rated := must[store.SkillFeedback](t)(f.s.RateSkill(f.ctx, "deploy", 5, "great"))
	sk := storetest.Show(t, f.dir, "ctx", "skills/deploy/SKILL.md")
	f.commits("ctx", 1, func() {
		if _, err := f.s.SetScope(f.ctx, "skill", "deploy", store.Private); err != nil {
			t.Fatal(err)
		}
	})
	pub, priv := storetest.Files(t, f.dir, "ctx"), storetest.Files(t, f.dir, store.RefPrivate)
	fbLog := merge.LogMonthPath("skills/deploy", "feedback", mustMonth(t, rated.Timestamp))
	if pub["skills/deploy/SKILL.md"] || pub[fbLog] || !priv["skills/deploy/SKILL.md"] || !priv[fbLog] {
		t.Fatalf("skill folder not moved: public %v private %v", pub, priv)
	}
	if storetest.Show(t, f.dir, store.RefPrivate, "skills/deploy/SKILL.md") != sk {
		t.Fatal("SKILL.md changed by the move")
	}
	// Sidecars keep working in the new scope.
	used := must[store.SkillUsage](t)(f.s.ReportSkillUsage(f.ctx, "deploy", ""))
	if !storetest.Files(t, f.dir, store.RefPrivate)[merge.LogMonthPath("skills/deploy", "usage", mustMonth(t, used.Timestamp))] {
		t.Fatal("usage not written next to the moved skill")
	}

	d, _, err := f.s.AddDecision(f.ctx, store.NewDecision{Title: "Use PostgreSQL", Context: "c", Decision: "d", Consequences: "q"})
	if err != nil {
		t.Fatal(err)
	}
	f.commits("ctx", 1, func() {
		if _, err := f.s.SetScope(f.ctx, "decision", "Use PostgreSQL", store.Ephemeral); err != nil {
			t.Fatal(err)
		}
	})
	if storetest.Files(t, f.dir, "ctx")[d.Path] || !storetest.Files(t, f.dir, store.RefEphemeral)[d.Path] {
		t.Fatal("decision not moved")
	}
	f.commits("ctx", 1, func() {
		if _, err := f.s.SetScope(f.ctx, "decisions", "1", store.Public); err != nil {
			t.Fatal(err)
		}
	})
	if !storetest.Files(t, f.dir, "ctx")[d.Path] || len(storetest.Files(t, f.dir, store.RefEphemeral)) != 0 {
		t.Fatal("decision not moved back")
	}
}

// TestSetScopeRepairsTwoScopes: an entry a merge left in two scopes (this machine moved it to the private
// scope, another machine's edit of the public one came back with a pull; made here with git plumbing on
// the public branch) is a "scopes" clash, and SetScope keeps the copy of the scope asked for and removes
// the other, in either direction.
func TestSetScopeRepairsTwoScopes(t *testing.T) {
	for _, keep := range []store.Scope{store.Public, store.Private} {
		t.Run(string(keep), func(t *testing.T) {
			f := newFixture(t)
			if _, err := f.s.SetEntry(f.ctx, store.KnowledgeKind, store.SetEntry{Key: "shared", Content: "v1\n"}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.SetScope(f.ctx, "knowledge", "shared", store.Private); err != nil {
				t.Fatal(err)
			}
			// The other machine's edit of the public entry, as its merge left it on the branch.
			idx := filepath.Join(t.TempDir(), "index")
			env := []string{"GIT_INDEX_FILE=" + idx}
			testenv.GitEnv(t, f.dir, env, "read-tree", "refs/heads/ctx")
			b := storetest.GitRef(t, f.dir, "ctx", "rev-parse", "ctx")
			blob := gitStdin(t, f.dir, "---\nscope: public\n---\nB edit\n", "hash-object", "-w", "--stdin")
			testenv.GitEnv(t, f.dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+",knowledge/shared.md")
			tree := testenv.GitEnv(t, f.dir, env, "write-tree")
			c := testenv.Git(t, f.dir, "commit-tree", "-p", b, "-m", "merge of another machine", tree)
			testenv.Git(t, f.dir, "update-ref", "refs/heads/ctx", c)

			cs, err := f.s.Clashes(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []store.ScopedPath{{Scope: store.Private, Path: "knowledge/shared.md"}, {Scope: store.Public, Path: "knowledge/shared.md"}}
			if len(cs) != 1 || cs[0].Kind != "scopes" || !reflect.DeepEqual(cs[0].Paths, want) ||
				!strings.Contains(cs[0].Fix, "ctx knowledge scope shared SCOPE") {
				t.Fatalf("clashes: %+v", cs)
			}
			if _, err := f.s.SetScope(f.ctx, "knowledge", "shared", keep); err != nil {
				t.Fatal(err)
			}
			e, err := f.view().GetEntry(f.ctx, store.KnowledgeKind, "shared")
			wantBody := map[store.Scope]string{store.Public: "B edit", store.Private: "v1\n"}[keep]
			if err != nil || e.Scope != keep || e.Content != wantBody {
				t.Fatalf("after scope %s: %+v, %v", keep, e, err)
			}
			for _, ref := range []string{"ctx", store.RefPrivate} {
				has := storetest.Files(t, f.dir, ref)["knowledge/shared.md"]
				if has != ((ref == "ctx") == (keep == store.Public)) {
					t.Errorf("%s holds knowledge/shared.md: %v", ref, has)
				}
			}
			if cs, err := f.s.Clashes(f.ctx); err != nil || len(cs) != 0 {
				t.Fatalf("clashes after the repair: %+v, %v", cs, err)
			}
		})
	}
}

func gitStdin(t *testing.T, dir, in string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
