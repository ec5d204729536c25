package store_test

import (
	"context"
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
