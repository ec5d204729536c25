package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestSkillRemovedAndRated: A removes a skill while B rates it; B's pull keeps the skill (SKILL.md as B has
// it) with a conflict whose lost version is A's delete, instead of a feedback log in a folder without a
// skill that no reader lists and that a later skill of that name inherited (docs/merge.md). A folder
// without SKILL.md that reaches the branch otherwise (plain git) is a skill-orphaned clash of ctx doctor.
func TestSkillRemovedAndRated(t *testing.T) {
	ctx := context.Background()
	sa, sb, a, b := pair(t)
	if _, _, err := sa.AddSkill(ctx, "sky", "skill y", "do y\n", store.Public); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(ctx, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.RemoveSkill(ctx, "sky"); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.RateSkill(ctx, "sky", 2, "meh"); err != nil {
		t.Fatal(err)
	}
	res, err := sb.Pull(ctx, store.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "skills/sky/SKILL.md" || !res.Conflicts[0].LostDeleted {
		t.Fatalf("the pull's conflicts: %+v; want one on skills/sky/SKILL.md whose lost version is the delete", res.Conflicts)
	}
	if files := storetest.Files(t, b, "ctx"); !files["skills/sky/SKILL.md"] {
		t.Fatalf("the rated skill was not kept: %v", files)
	}
	v, err := sb.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats, err := v.SkillStats(ctx); err != nil || len(stats) != 1 || stats[0].RatingCount != 1 {
		t.Errorf("skill stats after the merge: %+v, %v; want sky with its rating", stats, err)
	}
	if cs, err := sb.Clashes(ctx); err != nil || len(cs) != 0 {
		t.Errorf("clashes after the merge: %+v, %v", cs, err)
	}

	// The same folder left without its SKILL.md by plain git: ctx doctor reports it.
	idx := filepath.Join(t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	testenv.GitEnv(t, b, env, "read-tree", "refs/heads/ctx")
	testenv.GitEnv(t, b, env, "rm", "-q", "--cached", "skills/sky/SKILL.md")
	tree := testenv.GitEnv(t, b, env, "write-tree")
	c := testenv.Git(t, b, "commit-tree", tree, "-p", "refs/heads/ctx", "-m", "plain git")
	testenv.Git(t, b, "update-ref", "refs/heads/ctx", c)
	cs, err := sb.Clashes(ctx)
	if err != nil || len(cs) != 1 || cs[0].Kind != "skill-orphaned" || len(cs[0].Paths) != 1 || cs[0].Paths[0].Path != "skills/sky/" {
		t.Fatalf("clashes of a skill folder without SKILL.md: %+v, %v; want one skill-orphaned at skills/sky/", cs, err)
	}
	d, err := sb.Doctor(ctx)
	if err != nil || len(d.Clashes) != 1 {
		t.Errorf("doctor: %+v, %v; want the skill-orphaned clash", d, err)
	}
	_ = a
}

// TestSkillRemovedAndProposed: A removes a skill while B proposes a change to it (a file of its folder that
// a pull merges as one-sided). Both sides' pulls keep the skill with its proposal and a conflict whose lost
// version is A's delete; before, the one-sided shortcut took the proposal as it was and the delete of
// SKILL.md, leaving a skill-orphaned folder (docs/merge.md "A skill removed on one side, changed on the
// other").
func TestSkillRemovedAndProposed(t *testing.T) {
	ctx := context.Background()
	sa, sb, a, b := pair(t)
	if _, _, err := sa.AddSkill(ctx, "sky", "skill y", "do y\n", store.Public); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(ctx, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.RemoveSkill(ctx, "sky"); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _, err := sb.ProposeSkill(ctx, "sky", "---\nname: sky\ndescription: skill y\n---\ndo y better\n", "clearer")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sb.Pull(ctx, store.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "skills/sky/SKILL.md" || !res.Conflicts[0].LostDeleted {
		t.Fatalf("the pull's conflicts: %+v; want one on skills/sky/SKILL.md whose lost version is the delete", res.Conflicts)
	}
	if _, err := sb.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Pull(ctx, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		s    *store.Store
		repo string
	}{{sa, a}, {sb, b}} {
		files := storetest.Files(t, side.repo, "ctx")
		if !files["skills/sky/SKILL.md"] || !files["skills/sky/"+store.SkillProposalsDir+"/"+p.ID+".json"] {
			t.Fatalf("the proposed skill was not kept with its proposal: %v", files)
		}
		if cs, err := side.s.Clashes(ctx); err != nil || len(cs) != 0 {
			t.Errorf("clashes after the merge: %+v, %v", cs, err)
		}
	}
}
