package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// corpusDir is the shared corpus of real transcripts (../shared/corpus/agent-history from the project
// root); tests that need it skip when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	t.Skip("agent-history corpus not found (set CTX_HISTORY_CORPUS)")
	return ""
}

func openTestIndex(t testing.TB) *Index {
	t.Helper()
	ix, err := Open(context.Background(), filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func importCorpus(t testing.TB, ix *Index) ImportStats {
	t.Helper()
	ctx := context.Background()
	dir := corpusDir(t)
	var srcs []Source
	for _, p := range Providers {
		s, err := Discover(ctx, p, filepath.Join(dir, string(p)), true)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	st, err := ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCorpusImportsWithoutHardErrors(t *testing.T) {
	ix := openTestIndex(t)
	st := importCorpus(t, ix)
	for _, r := range st.Results {
		t.Logf("%-12s %-18s %-9s ev=%-4d skip=%-3d bad=%d unknown=%v %s", r.Source.Provider, r.Source.Format, r.Action, r.Events, r.Skipped, r.BadLines, r.Unknown, filepath.Base(r.Source.Path))
		if r.Action == "failed" || r.BadLines != 0 {
			t.Errorf("%s: action %s, %d bad lines, err %q, %v", r.Source.Path, r.Action, r.BadLines, r.Err, r.Errors)
		}
	}
}
