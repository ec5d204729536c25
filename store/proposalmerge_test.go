package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestAcceptOldProposalKeepsLaterEdits: accepting a proposal made against an older SKILL.md merges it
// three-way with the skill as it is now (an edit made since is kept); changes that overlap are refused and
// nothing is accepted. The proposal's base is read back from its diff, also without a trailing newline.
func TestAcceptOldProposalKeepsLaterEdits(t *testing.T) {
	ctx := context.Background()
	for _, nl := range []string{"\n", ""} {
		s, _ := storetest.New(t)
		if _, _, err := s.AddSkill(ctx, "deploy", "deploy it", "step 1: build\nstep 2: ship"+nl, store.Public); err != nil {
			t.Fatal(err)
		}
		v, err := s.RefView(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := v.GetSkill(ctx, "deploy")
		if err != nil {
			t.Fatal(err)
		}
		body := cur.Content
		proposed := strings.Replace(body, "step 2: ship", "step 2: ship\nstep 3: verify", 1)
		p, _, err := s.ProposeSkill(ctx, "deploy", proposed, "add verify")
		if err != nil {
			t.Fatal(err)
		}
		clash, _, err := s.ProposeSkill(ctx, "deploy", strings.Replace(body, "step 1: build", "step 1: compile", 1), "rename")
		if err != nil {
			t.Fatal(err)
		}
		// Meanwhile the skill is updated.
		if _, _, err := s.AddSkill(ctx, "deploy", "deploy it", "step 0: SECURITY CHECK\nstep 1: build\nstep 2: ship"+nl, store.Public); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ResolveProposal(ctx, "deploy", p.ID, "accept"); err != nil {
			t.Fatal(err)
		}
		v, _ = s.RefView(ctx)
		got, err := v.GetSkill(ctx, "deploy")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"step 0: SECURITY CHECK", "step 3: verify"} {
			if !strings.Contains(got.Content, want) {
				t.Errorf("newline %q: accepted SKILL.md lost %q:\n%s", nl, want, got.Content)
			}
		}
		// The other proposal changes line 1, which is changed again now: the changes overlap.
		if _, _, err := s.AddSkill(ctx, "deploy", "deploy it", "step 0: SECURITY CHECK\nstep 1: build fast\nstep 2: ship"+nl, store.Public); err != nil {
			t.Fatal(err)
		}
		before, _ := s.RefView(ctx)
		keep, _ := before.GetSkill(ctx, "deploy")
		if _, _, err := s.ResolveProposal(ctx, "deploy", clash.ID, "accept"); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), clash.ID) {
			t.Errorf("newline %q: an overlapping proposal: %v, want ErrInvalid naming it", nl, err)
		}
		after, _ := s.RefView(ctx)
		now, _ := after.GetSkill(ctx, "deploy")
		if now.Content != keep.Content {
			t.Errorf("newline %q: a refused accept changed the skill:\n%s", nl, now.Content)
		}
	}
}

// TestProposalWithoutFrontMatterKeepsSkillMeta: a proposal that is only a body (no front matter) is a new
// body under the skill's front matter: accepting it keeps the name and description (it used to erase them).
func TestProposalWithoutFrontMatterKeepsSkillMeta(t *testing.T) {
	ctx := context.Background()
	s, _ := storetest.New(t)
	if _, _, err := s.AddSkill(ctx, "review", "Review a PR", "Step 1\n", store.Public); err != nil {
		t.Fatal(err)
	}
	p, _, err := s.ProposeSkill(ctx, "review", "no front matter\n", "shorter")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.ProposedContent, "---\n") || strings.Contains(p.DiffSummary, "-description") {
		t.Errorf("proposal without front matter: content %q, diff %q; want the skill's front matter kept", p.ProposedContent, p.DiffSummary)
	}
	if _, _, err := s.ResolveProposal(ctx, "review", p.ID, "accept"); err != nil {
		t.Fatal(err)
	}
	v, _ := s.RefView(ctx)
	got, err := v.GetSkill(ctx, "review")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "review" || got.Description != "Review a PR" || !strings.HasSuffix(got.Content, "\nno front matter\n") {
		t.Errorf("accepted skill: name %q description %q content %q", got.Name, got.Description, got.Content)
	}
	// The same body again is the same SKILL.md: nothing to propose.
	if _, _, err := s.ProposeSkill(ctx, "review", "no front matter\n", "again"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("proposing the current body again: %v, want ErrInvalid", err)
	}
}
