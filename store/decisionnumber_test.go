package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestDecisionNumberAfterTheLargest: with a decision numbered MaxDecisionID, a new decision (ctx decision
// add, an import batch) gets the lowest free number instead of "no decision number left"; otherwise one
// more than the largest (docs/format.md "Decisions").
func TestDecisionNumberAfterTheLargest(t *testing.T) {
	ctx := context.Background()
	s, _ := storetest.New(t)
	for _, n := range []int{1, 2, 4, store.MaxDecisionID} {
		d, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Taken", Number: n})
		if err != nil || d.ID != n {
			t.Fatalf("add decision %d: %+v, %v", n, d, err)
		}
	}
	d, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Next"})
	if err != nil || d.ID != 3 {
		t.Fatalf("a decision after %d: %+v, %v; want number 3", store.MaxDecisionID, d, err)
	}
	_, ds, err := s.Apply(ctx, store.Op{Name: "import"}, store.Batch{Decisions: []store.NewDecision{
		{Title: "Imported one", Source: "docs/adr/x.md"}, {Title: "Imported two", Source: "docs/adr/y.md"}}})
	if err != nil || len(ds) != 2 || ds[0].ID != 5 || ds[1].ID != 6 {
		t.Fatalf("an import after %d: %+v, %v; want numbers 5 and 6", store.MaxDecisionID, ds, err)
	}

	s2, _ := storetest.New(t)
	if _, _, err := s2.AddDecision(ctx, store.NewDecision{Title: "Seven", Number: 7}); err != nil {
		t.Fatal(err)
	}
	if d, _, err := s2.AddDecision(ctx, store.NewDecision{Title: "Eight"}); err != nil || d.ID != 8 {
		t.Fatalf("a decision after 7: %+v, %v; want number 8", d, err)
	}
}

// TestDecisionKeyIsItsNumber: a write to a decision named by its title (ctx decision set-status TITLE,
// ctx decision scope TITLE) records the decision's number as its Ctx-Key, as decision.add does: the title
// goes stale when the decision is renamed (an ADR retitled and imported again), the number does not
// (docs/architecture.md "Commits").
func TestDecisionKeyIsItsNumber(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	for _, title := range []string{"Use Go", "Use Postgres"} {
		if _, _, err := s.AddDecision(ctx, store.NewDecision{Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.SetDecisionStatus(ctx, "Use Postgres", "accepted", 0); err != nil {
		t.Fatal(err)
	}
	msg := storetest.LastMessage(t, dir, "refs/heads/ctx")
	if !strings.Contains(msg, "Ctx-Op: decision.status\n") || !strings.Contains(msg, "\nCtx-Key: 2\n") {
		t.Errorf("set-status by title: the commit's message is\n%s\nwant Ctx-Key: 2", msg)
	}
	if _, err := s.SetScope(ctx, "decision", "Use Postgres", store.Private); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"refs/heads/ctx", store.RefPrivate} {
		if msg := storetest.LastMessage(t, dir, ref); !strings.Contains(msg, "\nCtx-Key: 2\n") || strings.Contains(msg, "Ctx-Key: Use") {
			t.Errorf("scope by title: the commit of %s is\n%s\nwant Ctx-Key: 2", ref, msg)
		}
	}
}

// TestRenumberedDecisionsInMergeCommit: a decision renumbered by a merge (both sides added decision 1)
// keeps its old number in the Ctx-Key of the commit that added it; the merge commit records the mapping
// in its Ctx-Renumbered trailer, and Log reads it back.
func TestRenumberedDecisionsInMergeCommit(t *testing.T) {
	ctx := context.Background()
	sa, sb, a, _ := pair(t)
	if _, err := sb.Pull(ctx, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sa.AddDecision(ctx, store.NewDecision{Title: "A's decision"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.AddDecision(ctx, store.NewDecision{Title: "B's decision"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Pull(ctx, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	files := storetest.Files(t, a, "ctx")
	var nums []string
	for p := range files {
		if strings.HasPrefix(p, "decisions/") {
			nums = append(nums, p)
		}
	}
	if len(nums) != 2 {
		t.Fatalf("decisions after the merge: %v", nums)
	}
	msg := storetest.LastMessage(t, a, "refs/heads/ctx")
	if !strings.Contains(msg, "Ctx-Op: merge\n") || !strings.Contains(msg+"\n", "\nCtx-Renumbered: 1 -> 2\n") {
		t.Fatalf("the merge commit's message:\n%s\nwant Ctx-Renumbered: 1 -> 2", msg)
	}
	log, err := sa.Log(ctx, 1, "")
	if err != nil || len(log) != 1 || log[0].Renumbered != "1 -> 2" {
		t.Errorf("Log: %+v, %v; want the merge with Renumbered 1 -> 2", log, err)
	}
}
