package store_test

import (
	"errors"
	"github.com/ctx-dev/ctx/merge"
	"strings"
	"testing"

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
