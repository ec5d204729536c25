package history

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// withBulkState makes every Import read the sources' states in one query (as imports of many sources
// do), for the length of the test.
func withBulkState(t *testing.T) {
	old := bulkStateMin
	bulkStateMin = 1
	t.Cleanup(func() { bulkStateMin = old })
}

// TestBulkStateIncremental: through Import's bulk read of the recorded states, turn 2 of a session is
// appended with the ids of turn 1 unchanged, and a third import is a no-op.
func TestBulkStateIncremental(t *testing.T) {
	withBulkState(t)
	corpus := corpusDir(t)
	ctx := context.Background()
	ix := openTestIndex(t)
	path := filepath.Join(t.TempDir(), "sessions", "x", "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl")
	src := Source{Provider: Codex, Format: FormatCodex, Path: path}
	importAll := func() SourceResult {
		t.Helper()
		st, err := ix.Import(ctx, []Source{src})
		if err != nil || len(st.Results) != 1 {
			t.Fatal(st, err)
		}
		return st.Results[0]
	}
	copyFile(t, filepath.Join(corpus, "codex/codemie-incremental", "turn-1.jsonl"), path)
	r1 := importAll()
	if r1.Action != "imported" || r1.Events == 0 {
		t.Fatalf("turn 1: %+v", r1)
	}
	ids1 := eventIDs(t, ix, r1.SessionID)
	copyFile(t, filepath.Join(corpus, "codex/codemie-incremental", "turn-2.jsonl"), path)
	r2 := importAll()
	if r2.Action != "appended" || r2.Events == 0 {
		t.Fatalf("turn 2: %+v", r2)
	}
	ids2 := eventIDs(t, ix, r1.SessionID)
	if len(ids2) != len(ids1)+r2.Events || strings.Join(ids2[:len(ids1)], ",") != strings.Join(ids1, ",") {
		t.Fatalf("turn 2 changed the ids of turn 1 or added the wrong count: %d → %d (+%d)", len(ids1), len(ids2), r2.Events)
	}
	if r3 := importAll(); r3.Action != "unchanged" {
		t.Fatalf("third import: %+v", r3)
	}
}

// TestBulkStateCorpusReimportIsNoop: the corpus imported and re-imported through the bulk read gives
// the counts of the per-source read, and the re-import changes nothing.
func TestBulkStateCorpusReimportIsNoop(t *testing.T) {
	per := openTestIndex(t)
	importCorpus(t, per)
	want, _ := per.Stats(context.Background())

	withBulkState(t)
	ix := openTestIndex(t)
	first := importCorpus(t, ix)
	got, _ := ix.Stats(context.Background())
	if got.Events != want.Events || got.Sessions != want.Sessions || got.Sources != want.Sources {
		t.Fatalf("bulk import %+v, per-source import %+v", got, want)
	}
	second := importCorpus(t, ix)
	if second.Unchanged != second.Sources || second.Events != 0 || second.Sources != first.Sources {
		t.Fatalf("second import: %+v", second)
	}
}
