package history

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// ftsPolicy is ev_fts's recorded automerge and crisismerge (-1 when FTS5 never recorded one: its
// default applies).
func ftsPolicy(t *testing.T, ix *Index) (automerge, crisismerge int64) {
	t.Helper()
	have, err := ftsConfig(context.Background(), ix.db)
	if err != nil {
		t.Fatal(err)
	}
	automerge, crisismerge = -1, -1
	if v, ok := have["automerge"]; ok {
		automerge = v
	}
	if v, ok := have["crisismerge"]; ok {
		crisismerge = v
	}
	return automerge, crisismerge
}

// A first import writes with automerge off and crisis merges at ftsFirstCrisismerge segments (its
// committed transactions show it to another connection), and ends with FTS5's default policy and one
// segment. An import interrupted before its end (canceled in its third transaction: a kill leaves the
// same committed state, TestImportKilledMidTransaction) leaves the first import's policy recorded; the
// next import, which is not a first one, writes with the default policy again. A later import into a
// non-empty index never turns automerge off.
func TestFirstImportMergePolicy(t *testing.T) {
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
	ix := openTestIndex(t)
	n := 0
	var during [2]int64
	testHookWritten = func() {
		n++
		if n == 2*batchMaxSources+1 { // two transactions committed, the third open
			during[0], during[1] = ftsPolicy(t, ix)
		}
		if n == 2*batchMaxSources+2 {
			cancel()
		}
	}
	if _, err := ix.Import(ctx, srcs); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled import: %v, want context.Canceled", err)
	}
	if during != [2]int64{0, ftsFirstCrisismerge} {
		t.Fatalf("during a first import: automerge %d, crisismerge %d; want 0 and %d", during[0], during[1], ftsFirstCrisismerge)
	}
	if a, c := ftsPolicy(t, ix); a != 0 || c != ftsFirstCrisismerge {
		t.Fatalf("after the interrupted first import: automerge %d, crisismerge %d; want its policy left (0, %d)", a, c, ftsFirstCrisismerge)
	}
	// The completing import is not a first one: its transactions restore the default policy.
	testHookWritten = nil
	if _, err := ix.Import(context.Background(), srcs); err != nil {
		t.Fatal(err)
	}
	if a, c := ftsPolicy(t, ix); a != ftsAutomerge || c != ftsCrisismerge {
		t.Fatalf("after the completing import: automerge %d, crisismerge %d; want %d and %d", a, c, ftsAutomerge, ftsCrisismerge)
	}

	// An uninterrupted first import ends with the default policy and one segment.
	batchMaxSources = oldMax
	whole := openTestIndex(t)
	importCorpus(t, whole)
	if a, c := ftsPolicy(t, whole); a != ftsAutomerge || c != ftsCrisismerge {
		t.Fatalf("after a first import: automerge %d, crisismerge %d; want %d and %d", a, c, ftsAutomerge, ftsCrisismerge)
	}
	if s := ftsSegments(t, whole); s != 1 {
		t.Fatalf("after a first import: %d segments, want 1", s)
	}
}

// A first import's merge policy changes only the full-text index's segments while it writes: the index
// it ends with gives the same hits, ids and scores as one written with FTS5's default policy.
func TestFirstImportMergePolicySameHits(t *testing.T) {
	ix := openTestIndex(t)
	importCorpus(t, ix)
	defer func(v bool) { firstImportPolicy = v }(firstImportPolicy)
	firstImportPolicy = false
	ref := openTestIndex(t)
	importCorpus(t, ref)
	if a, c := ftsPolicy(t, ref); a != -1 || c != -1 {
		t.Fatalf("without the first import's policy: automerge %d, crisismerge %d recorded", a, c)
	}
	ctx := context.Background()
	for _, q := range []string{"README", "git commit", "the", "error", "apply_patch", "hello function", "session", "zzznomatch"} {
		a, err := ix.Search(ctx, Query{Text: q, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ref.Search(ctx, Query{Text: q, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Hits) != len(b.Hits) || a.MoreAvailable != b.MoreAvailable || (q != "zzznomatch" && len(a.Hits) == 0) {
			t.Fatalf("%q: %d hits (more %v), %d with the default policy (more %v)", q, len(a.Hits), a.MoreAvailable, len(b.Hits), b.MoreAvailable)
		}
		for k := range a.Hits {
			if a.Hits[k].Event.ID != b.Hits[k].Event.ID || a.Hits[k].Score != b.Hits[k].Score || a.Hits[k].More != b.Hits[k].More {
				t.Fatalf("%q: hit %d differs: %s %v / %s %v", q, k, a.Hits[k].Event.ID, a.Hits[k].Score, b.Hits[k].Event.ID, b.Hits[k].Score)
			}
		}
	}
}

// A first import killed after its last commit (before its end restored the policy and merged) leaves
// the first import's policy; the next import, with nothing new to write, restores the default policy
// and merges the full-text index into one segment.
func TestFirstImportKilledAfterLastCommit(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	var srcs []Source
	for _, r := range importCorpus(t, ix).Results {
		srcs = append(srcs, r.Source)
	}
	// The state a first import killed after its last commit leaves: its policy, several segments.
	for _, q := range []string{
		`INSERT INTO ev_fts(ev_fts, rank) VALUES('automerge', 0)`,
		`INSERT INTO ev_fts(ev_fts, rank) VALUES('crisismerge', 64)`,
		`INSERT INTO ev_fts(rowid, body) VALUES(1000000, 'one more segment')`,
		`DELETE FROM ev_fts WHERE rowid=1000000`,
	} {
		if _, err := ix.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if s := ftsSegments(t, ix); s < 2 {
		t.Fatalf("set-up: %d segments, want several", s)
	}
	st, err := ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Imported+st.Appended != 0 {
		t.Fatalf("second import wrote: %+v", st)
	}
	if a, c := ftsPolicy(t, ix); a != ftsAutomerge || c != ftsCrisismerge {
		t.Fatalf("after an import with nothing new: automerge %d, crisismerge %d; want %d and %d", a, c, ftsAutomerge, ftsCrisismerge)
	}
	if s := ftsSegments(t, ix); s != 1 {
		t.Fatalf("after an import with nothing new: %d segments, want 1", s)
	}
}
