package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestHandRenameKeepsPrivateScope: a private decision renamed by hand, the folder of a private skill
// renamed by hand (with a file added in it) and a private decision renamed and edited stay private: ctx
// commit records the new paths on the private ref, and nothing of them reaches the public branch.
func TestHandRenameKeepsPrivateScope(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	d, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Secret vendor", Scope: store.Private,
		Context: "acme pricing", Decision: "buy from acme", Consequences: "pay acme"})
	must(err)
	d2, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Secret second", Scope: store.Private,
		Context: "zeta pricing is the one we looked at in detail", Decision: "buy from zeta for the next year", Consequences: "pay zeta monthly"})
	must(err)
	_, _, err = s.AddSkill(ctx, "internal-deploy", "private runbook", "ssh prod-db\nrestart\n", store.Private)
	must(err)
	_, err = s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "shared", Content: "public\n"})
	must(err)
	v, err := s.RefView(ctx)
	must(err)
	ds, err := v.ListDecisions(ctx)
	must(err)
	paths := map[int]string{}
	for _, x := range ds {
		paths[x.ID] = x.Path
	}
	root := filepath.Join(dir, store.CheckoutDir)
	p1, p2 := paths[d.ID], paths[d2.ID]
	must(os.Rename(filepath.Join(root, p1), filepath.Join(root, "decisions", "0001-secret-vendor-acme.md")))
	b, err := os.ReadFile(filepath.Join(root, p2))
	must(err)
	must(os.Remove(filepath.Join(root, p2)))
	must(os.WriteFile(filepath.Join(root, "decisions", "0002-secret-second-zeta.md"), append(b, []byte("\nA line added while renaming.\n")...), 0o644))
	must(os.Rename(filepath.Join(root, "skills", "internal-deploy"), filepath.Join(root, "skills", "internal-deploy2")))
	must(os.WriteFile(filepath.Join(root, "skills", "internal-deploy2", "notes.md"), []byte("db host list\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "knowledge", "fresh.md"), []byte("a new public entry\n"), 0o644))

	edits, err := s.HandEdits(ctx)
	must(err)
	for _, e := range edits {
		want := store.Private
		if e.Path == "knowledge/fresh.md" {
			want = store.Public
		}
		if e.Scope != want {
			t.Errorf("hand edit %s %s: scope %s, want %s", e.Change, e.Path, e.Scope, want)
		}
	}
	_, _, err = s.CommitHandEdits(ctx, "")
	must(err)
	pub := storetest.Files(t, dir, "ctx")
	for p := range pub {
		if strings.Contains(p, "secret") || strings.Contains(p, "internal-deploy") {
			t.Errorf("a private entry is on the public branch: %s", p)
		}
	}
	if !pub["knowledge/fresh.md"] {
		t.Errorf("the new public entry was not committed publicly: %v", pub)
	}
	priv := storetest.Files(t, dir, store.RefPrivate)
	for _, p := range []string{"decisions/0001-secret-vendor-acme.md", "decisions/0002-secret-second-zeta.md",
		"skills/internal-deploy2/SKILL.md", "skills/internal-deploy2/notes.md"} {
		if !priv[p] {
			t.Errorf("%s is not on the private ref: %v", p, priv)
		}
	}
	for _, p := range []string{p1, p2, "skills/internal-deploy/SKILL.md"} {
		if priv[p] {
			t.Errorf("the old path %s is still on the private ref", p)
		}
	}
	if out := storetest.GitRef(t, dir, "ctx", "log", "--format=%B", "ctx"); strings.Contains(out, "secret") || strings.Contains(out, "internal-deploy") ||
		strings.Contains(out, "Ctx-Renamed") {
		t.Errorf("a public commit message names a private entry:\n%s", out)
	}
	// The private commit names the decisions' old paths (the second renamed and edited: the same uid),
	// as git reads its trailers.
	renamed := storetest.GitRef(t, dir, store.RefPrivate, "log", "-1", "--format=%(trailers:key=Ctx-Renamed,valueonly)", store.RefPrivate)
	if want := p1 + " -> decisions/0001-secret-vendor-acme.md\n" + p2 + " -> decisions/0002-secret-second-zeta.md"; strings.TrimSpace(renamed) != want {
		t.Errorf("Ctx-Renamed of the private commit: %q, want %q", renamed, want)
	}
}
