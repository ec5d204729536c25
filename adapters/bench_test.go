package adapters

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// BenchmarkRefreshInStep is the steady-state refresh a git hook runs (within its 2 s budget): load the
// public context of a store with 500 knowledge entries, 100 conventions and 100 skills, plan the export
// of every client, find every file in step, write nothing.
func BenchmarkRefreshInStep(b *testing.B) {
	ctx := context.Background()
	st, dir := storetest.New(b)
	var batch store.Batch
	for i := range 500 {
		batch.Entries = append(batch.Entries, store.BatchEntry{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{
			Key: fmt.Sprintf("k%04d", i), Content: strings.Repeat("knowledge ", 100)}})
	}
	for i := range 100 {
		batch.Entries = append(batch.Entries, store.BatchEntry{Kind: store.ConventionKind, SetEntry: store.SetEntry{
			Key: fmt.Sprintf("c%04d", i), Content: strings.Repeat("convention ", 50)}})
		batch.Skills = append(batch.Skills, store.NewSkill{Name: fmt.Sprintf("s%04d", i),
			Content: []byte(fmt.Sprintf("---\nname: s%04d\ndescription: skill %d\n---\nDo it.\n", i, i))})
	}
	if _, _, err := st.Apply(ctx, store.Op{Name: "bench", Summary: "bench"}, batch); err != nil {
		b.Fatal(err)
	}
	opts := Options{Root: dir, StateDir: b.TempDir()}
	c, err := Load(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	pl, err := PlanExport(ctx, opts, c)
	if err != nil {
		b.Fatal(err)
	}
	if err := pl.Apply(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		c, err := Load(ctx, st)
		if err != nil {
			b.Fatal(err)
		}
		pl, err := PlanExport(ctx, opts, c)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(pl.Pending()); n != 0 {
			b.Fatalf("%d pending changes in step", n)
		}
	}
}
