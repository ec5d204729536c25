package history

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestImportCanceledMidTransaction: the writer's statements run without the import's cancellation
// (writer.sctx), so the writer checks the context itself. An import whose context is canceled inside
// its third transaction returns context.Canceled, keeps the two committed transactions' whole sources
// and nothing of the third; the next import completes the index to what an uninterrupted one holds.
func TestImportCanceledMidTransaction(t *testing.T) {
	dir := corpusDir(t)
	var srcs []Source
	for _, p := range Providers {
		s, err := Discover(context.Background(), p, filepath.Join(dir, string(p)), true)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	oldMax, oldHook := batchMaxSources, testHookWritten
	t.Cleanup(func() { batchMaxSources, testHookWritten = oldMax, oldHook })
	batchMaxSources = 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	testHookWritten = func() {
		n++
		if n == 2*batchMaxSources+2 {
			cancel()
		}
	}
	ix := openTestIndex(t)
	_, err := ix.Import(ctx, srcs)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled import: %v, want context.Canceled", err)
	}
	testHookWritten = nil
	bg := context.Background()
	partial, err := ix.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if partial.Sources != 2*batchMaxSources {
		t.Fatalf("the canceled import left %d sources, want the %d of its two committed transactions", partial.Sources, 2*batchMaxSources)
	}
	clean := openTestIndex(t)
	want := importCorpus(t, clean)
	st, err := ix.Import(bg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unchanged != partial.Sources || st.Imported != want.Imported-partial.Sources {
		t.Fatalf("completing import: %d unchanged, %d imported; want %d and %d", st.Unchanged, st.Imported, partial.Sources, want.Imported-partial.Sources)
	}
	got, _ := ix.Stats(bg)
	wantStats, _ := clean.Stats(bg)
	if got.Sources != wantStats.Sources || got.Sessions != wantStats.Sessions || got.Events != wantStats.Events {
		t.Fatalf("after the completing import %+v, want %+v", got, wantStats)
	}
}
