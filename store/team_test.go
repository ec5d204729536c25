package store_test

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

func TestMembers(t *testing.T) {
	f := newFixture(t)
	before := storetest.Show(t, f.dir, "ctx", "manifest.json")
	f.commits("ctx", 1, func() { must[store.Member](t)(f.s.AddMember(f.ctx, "alice", "laptop")) })
	f.trailers("ctx", "team.add", "alice")
	f.commits("ctx", 0, func() {
		must[store.Member](t)(f.s.AddMember(f.ctx, "alice", "laptop"))
		if _, _, err := f.s.AddMember(f.ctx, "Alice Smith", "laptop"); err == nil {
			t.Fatal("bad name accepted")
		}
	})
	f.commits("ctx", 1, func() { must[store.Member](t)(f.s.AddMember(f.ctx, "alice", "desktop")) })
	ms, err := f.view().ListMembers(f.ctx)
	if err != nil || len(ms) != 2 || ms[0].Machine != "laptop" || ms[1].Machine != "desktop" || ms[0].Added == "" {
		t.Fatalf("members: %+v %v", ms, err)
	}
	after := storetest.Show(t, f.dir, "ctx", "manifest.json")
	if after == before || !strings.Contains(after, `"name": "alice"`) {
		t.Fatalf("manifest:\n%s", after)
	}
	m, _ := f.view().ReadManifest(f.ctx)
	if m.UpdatedAt < m.CreatedAt || m.SchemaVersion != store.SchemaVersion {
		t.Fatalf("manifest: %+v", m)
	}
}

func TestMembersKeepUnknownManifestFields(t *testing.T) {
	f := newFixture(t)
	v := f.view()
	m, _ := v.ReadManifest(f.ctx)
	raw := `{"schema_version":"0.4.0","project":{"name":"p","id":"` + m.Project.ID + `","repo_url":""},"adapters":{},` +
		`"team":{"members":[],"lead":"ada"},"created_at":"2025-05-01T10:00:00Z","updated_at":"2025-05-01T10:00:00Z","x-extra":true}`
	if _, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "manifest.json", []byte(raw))
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
	must[store.Member](t)(f.s.AddMember(f.ctx, "bob", "laptop"))
	got := storetest.Show(t, f.dir, "ctx", "manifest.json")
	for _, w := range []string{`"lead": "ada"`, `"x-extra": true`, `"machine": "laptop"`} {
		if !strings.Contains(got, w) {
			t.Fatalf("manifest lacks %s:\n%s", w, got)
		}
	}
	if strings.Contains(got, `"updated_at": "2025-05-01T10:00:00Z"`) {
		t.Fatal("updated_at not bumped")
	}
}

func TestSummary(t *testing.T) {
	f := newFixture(t)
	sum, err := f.view().Summary(f.ctx)
	if err != nil || sum.Project == "" || sum.Blockers == nil || sum.KnowledgeCount != 0 {
		t.Fatalf("empty summary: %+v %v", sum, err)
	}
	if _, err := f.s.SetEntry(f.ctx, store.KnowledgeKind, store.SetEntry{Key: "arch", Content: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetEntry(f.ctx, store.KnowledgeKind, store.SetEntry{Key: "secret", Content: "s", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetEntry(f.ctx, store.ConventionKind, store.SetEntry{Key: "git", Content: "g"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.s.AddDecision(f.ctx, store.NewDecision{Title: "Use PostgreSQL"}); err != nil {
		t.Fatal(err)
	}
	must[store.Skill](t)(f.s.AddSkill(f.ctx, "run-tests", "Run tests", "go test", ""))
	must[store.ActiveState](t)(f.s.UpdateState(f.ctx, store.StatePatch{CurrentTask: ptr("auth"), Blockers: &[]string{"spec"}}))
	sum, err = f.view().Summary(f.ctx)
	want := store.ProjectSummary{Project: sum.Project, KnowledgeCount: 2, ConventionCount: 1, DecisionsCount: 1, SkillsCount: 1, CurrentTask: "auth", Blockers: []string{"spec"}}
	if err != nil || sum.CurrentTask != want.CurrentTask || sum.KnowledgeCount != 2 || sum.ConventionCount != 1 || sum.DecisionsCount != 1 || sum.SkillsCount != 1 || len(sum.Blockers) != 1 {
		t.Fatalf("summary: %+v, want %+v (%v)", sum, want, err)
	}
}

// TestSetAdapters: SetAdapters writes adapters.<name>.enabled in manifest.json (docs/format.md "Records"),
// one commit when a value changes and none otherwise, keeps an adapter's other fields and the manifest's
// unknown fields, and refuses a name that is not a manifest adapter key (nothing committed).
func TestSetAdapters(t *testing.T) {
	f := newFixture(t)
	m, _ := f.view().ReadManifest(f.ctx)
	raw := `{"schema_version":"0.4.0","project":{"name":"p","id":"` + m.Project.ID + `","repo_url":""},` +
		`"adapters":{"cursor":{"enabled":false,"rules":"x"}},"team":{"members":[]},` +
		`"created_at":"2025-05-01T10:00:00Z","updated_at":"2025-05-01T10:00:00Z","x-extra":true}`
	if _, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "manifest.json", []byte(raw))
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
	f.commits("ctx", 1, func() {
		if _, err := f.s.SetAdapters(f.ctx, map[string]bool{"claude_code": true, "cursor": true}); err != nil {
			t.Fatal(err)
		}
	})
	f.trailers("ctx", "adapters.set", "claude_code,cursor")
	f.commits("ctx", 0, func() {
		if c, err := f.s.SetAdapters(f.ctx, map[string]bool{"claude_code": true}); err != nil || c.Changed() {
			t.Fatalf("enabling again: %+v %v", c, err)
		}
		for _, bad := range []string{"claude-code", "", "a__b", "../x", "Claude"} {
			if _, err := f.s.SetAdapters(f.ctx, map[string]bool{bad: true}); err == nil {
				t.Errorf("adapter name %q accepted", bad)
			}
		}
	})
	m, err := f.view().ReadManifest(f.ctx)
	if err != nil || !m.Adapters["claude_code"].Enabled || !m.Adapters["cursor"].Enabled || len(m.Adapters) != 2 {
		t.Fatalf("adapters %+v %v", m.Adapters, err)
	}
	got := storetest.Show(t, f.dir, "ctx", "manifest.json")
	for _, w := range []string{`"rules": "x"`, `"x-extra": true`} {
		if !strings.Contains(got, w) {
			t.Errorf("manifest lacks %s:\n%s", w, got)
		}
	}
	if strings.Contains(got, `"updated_at": "2025-05-01T10:00:00Z"`) {
		t.Error("updated_at not bumped")
	}
}

// TestManifestAdaptersKeys: ReadManifest (what context://manifest, ctx doctor and the check of a fetched
// tip read) refuses a manifest.json whose adapters has a key that is not a client name in the form
// SetAdapters writes (docs/format.md "Records"), naming the key quoted; SetAdapters then commits nothing.
func TestManifestAdaptersKeys(t *testing.T) {
	f := newFixture(t)
	m, _ := f.view().ReadManifest(f.ctx)
	put := func(key string) {
		t.Helper()
		raw := `{"schema_version":"0.4.0","project":{"name":"p","id":"` + m.Project.ID + `","repo_url":""},` +
			`"adapters":{"codex":{"enabled":true},` + key + `:{"enabled":true}},"team":{"members":[]},` +
			`"created_at":"2025-05-01T10:00:00Z","updated_at":"2025-05-01T10:00:00Z"}`
		if _, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
			ed := store.Edits{}
			ed.Put(store.Public, "manifest.json", []byte(raw))
			return ed, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for key, quoted := range map[string]string{
		`"../../x\u0000y"`: `"../../x\x00y"`, `"<script>"`: `"<script>"`, `"claude-code"`: `"claude-code"`,
		`"Claude"`: `"Claude"`, `"a__b"`: `"a__b"`, `""`: `""`,
	} {
		put(key)
		if _, err := f.view().ReadManifest(f.ctx); err == nil || !strings.Contains(err.Error(), "adapters key "+quoted+" is not a client name") {
			t.Errorf("adapters key %s: ReadManifest %v", key, err)
		}
		f.commits("ctx", 0, func() {
			if _, err := f.s.SetAdapters(f.ctx, map[string]bool{"cursor": true}); err == nil {
				t.Errorf("adapters key %s: SetAdapters wrote", key)
			}
		})
	}
	put(`"claude_code"`)
	if got, err := f.view().ReadManifest(f.ctx); err != nil || len(got.Adapters) != 2 {
		t.Errorf("valid keys: %+v %v", got.Adapters, err)
	}
}
