package history

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// Benchmarks of import and search (figures in bench/README.md). Run:
//
//	go test -run='^$' -bench=. -benchtime=1x ./history/
//
// BenchmarkImportCorpus and BenchmarkSearchCorpus use the shared corpus as it is; the Scaled ones
// generate a larger history from its two largest real sessions (renamed ids, same shapes).

var benchQueries = []string{"hello function", "onboarding", "todo", "npm run build", "apply_patch", "git commit", "zzznomatch", "README"}

func corpusBytes(b *testing.B, srcs []Source) int64 {
	var n int64
	for _, s := range srcs {
		if fi, err := os.Stat(s.Path); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func corpusSources(b *testing.B) []Source {
	dir := corpusDir(b)
	var srcs []Source
	for _, p := range Providers {
		s, err := Discover(context.Background(), p, filepath.Join(dir, string(p)), true)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	return srcs
}

func BenchmarkImportCorpus(b *testing.B) {
	srcs := corpusSources(b)
	b.SetBytes(corpusBytes(b, srcs))
	for b.Loop() {
		ix, err := Open(context.Background(), b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Import(context.Background(), srcs); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}

func BenchmarkReimportUnchangedCorpus(b *testing.B) {
	srcs := corpusSources(b)
	ix, err := Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Import(context.Background(), srcs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, err := ix.Import(context.Background(), srcs)
		if err != nil || st.Unchanged != len(srcs) {
			b.Fatal(st, err)
		}
	}
}

func benchSearch(b *testing.B, ix *Index) {
	ctx := context.Background()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := ix.Search(ctx, Query{Text: benchQueries[i%len(benchQueries)]}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

func BenchmarkSearchCorpus(b *testing.B) {
	ix, err := Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Import(context.Background(), corpusSources(b)); err != nil {
		b.Fatal(err)
	}
	benchSearch(b, ix)
}

// scaledHistory writes copies of the corpus's large Claude and Codex sessions under dir with new session
// ids until about events events exist, and returns the sources.
func scaledHistory(b *testing.B, dir string, events int) []Source {
	corpus := corpusDir(b)
	claude, err := os.ReadFile(filepath.Join(corpus, "claude-code/claude-code-viewer/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	const codexID = "019e1625-789d-76c0-80ab-3724b5ddb799"
	codex, err := os.ReadFile(filepath.Join(corpus, "codex/codemie/rollout-2026-05-11T11-26-55-"+codexID+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	var srcs []Source
	for i, n := 0, 0; n < events; i++ {
		id := fmt.Sprintf("0199%04x-0000-7000-8000-%012x", i, i)
		cp := filepath.Join(dir, "claude", "-p", id+".jsonl")
		xp := filepath.Join(dir, "codex", "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-"+id+".jsonl")
		for p, data := range map[string][]byte{cp: claude, xp: bytes.ReplaceAll(codex, []byte(codexID), []byte(id))} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		srcs = append(srcs, Source{Provider: ClaudeCode, Format: FormatClaude, Path: cp}, Source{Provider: Codex, Format: FormatCodex, Path: xp})
		n += 438 + 228
	}
	return srcs
}

func BenchmarkScaled(b *testing.B) {
	for _, events := range []int{30_000, 100_000} {
		dir := b.TempDir()
		srcs := scaledHistory(b, dir, events)
		b.Run(fmt.Sprintf("import/events=%d", events), func(b *testing.B) {
			b.SetBytes(corpusBytes(b, srcs))
			for b.Loop() {
				b.StopTimer()
				idx := filepath.Join(b.TempDir(), "index")
				ix, err := Open(context.Background(), idx)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := ix.Import(context.Background(), srcs); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				ix.Close()
				os.RemoveAll(idx)
				b.StartTimer()
			}
		})
		// One imported index for the refresh and search measurements (set up outside the timings).
		ix, err := Open(context.Background(), filepath.Join(dir, "index"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Import(context.Background(), srcs); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("refresh-unchanged/events=%d", events), func(b *testing.B) {
			for b.Loop() {
				st, err := ix.Import(context.Background(), srcs)
				if err != nil || st.Unchanged != len(srcs) {
					b.Fatal(st.Unchanged, err)
				}
			}
		})
		b.Run(fmt.Sprintf("search/events=%d", events), func(b *testing.B) { benchSearch(b, ix) })
		ix.Close()
	}
}

// generatedSources discovers the history that bench/histgen wrote under $CTX_BENCH_HISTORY (one folder
// per provider); the benchmark is skipped when the variable is not set.
func generatedSources(b *testing.B) []Source {
	dir := os.Getenv("CTX_BENCH_HISTORY")
	if dir == "" {
		b.Skip("CTX_BENCH_HISTORY is not set (make bench-history generates one)")
	}
	var srcs []Source
	for _, p := range Providers {
		root := filepath.Join(dir, string(p))
		if _, err := os.Stat(root); err != nil {
			continue
		}
		s, err := Discover(context.Background(), p, root, true)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	return srcs
}

func BenchmarkGenerated(b *testing.B) {
	srcs := generatedSources(b)
	dir := b.TempDir()
	b.Run("import", func(b *testing.B) {
		b.SetBytes(corpusBytes(b, srcs))
		for b.Loop() {
			b.StopTimer()
			idx := filepath.Join(dir, "fresh")
			os.RemoveAll(idx)
			ix, err := Open(context.Background(), idx)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := ix.Import(context.Background(), srcs); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			ix.Close()
			b.StartTimer()
		}
	})
	ix, err := Open(context.Background(), filepath.Join(dir, "fresh"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if st, err := ix.Import(context.Background(), srcs); err != nil || st.Unchanged != len(srcs) {
		b.Fatal(st.Unchanged, err)
	}
	b.Run("refresh-unchanged", func(b *testing.B) {
		for b.Loop() {
			st, err := ix.Import(context.Background(), srcs)
			if err != nil || st.Unchanged != len(srcs) {
				b.Fatal(st.Unchanged, err)
			}
		}
	})
	b.Run("search", func(b *testing.B) { benchSearch(b, ix) })
}

// BenchmarkSearchIndex searches an existing index (the folder in $CTX_BENCH_INDEX, e.g. one that
// `ctx history import` built over bench/histgen's output); $CTX_BENCH_QUERY narrows it to one query.
func BenchmarkSearchIndex(b *testing.B) {
	dir := os.Getenv("CTX_BENCH_INDEX")
	if dir == "" {
		b.Skip("CTX_BENCH_INDEX is not set")
	}
	ix, err := Open(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if q := os.Getenv("CTX_BENCH_QUERY"); q != "" {
		for b.Loop() {
			if _, err := ix.Search(context.Background(), Query{Text: q}); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	benchSearch(b, ix)
}
