package history

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"
)

// Benchmarks of import and search (figures in bench/README.md). Run:
//
//	go test -run='^$' -bench=. -benchtime=1x ./history/
//
// BenchmarkImportCorpus and BenchmarkSearchCorpus use the shared corpus as it is; BenchmarkGenerated
// imports and searches the larger history that bench/histgen writes (CTX_BENCH_HISTORY=DIR), and
// BenchmarkSearchIndex searches an index built beforehand (CTX_BENCH_INDEX=DIR). bench/history.sh
// measures the same as whole processes.

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
		bytes := corpusBytes(b, srcs)
		b.SetBytes(bytes)
		var cpu time.Duration
		defer func() { reportCPU(b, cpu, bytes) }()
		for b.Loop() {
			b.StopTimer()
			idx := filepath.Join(dir, "fresh")
			os.RemoveAll(idx)
			ix, err := Open(context.Background(), idx)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			before := processCPU()
			// A cancellable context, as the CLI's (SIGINT, SIGTERM): the driver treats it differently.
			ctx, cancel := context.WithCancel(context.Background())
			_, err = ix.Import(ctx, srcs)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - before
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
// `ctx history import` built over bench/histgen's output); $CTX_BENCH_QUERY narrows it to one query (and
// reports its CPU time), $CTX_BENCH_WINDOW sets the rank window.
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
	if w := os.Getenv("CTX_BENCH_WINDOW"); w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			b.Fatalf("CTX_BENCH_WINDOW=%q: not a positive number", w)
		}
		old := rankWindow
		rankWindow = n
		defer func() { rankWindow = old }()
	}
	if q := os.Getenv("CTX_BENCH_QUERY"); q != "" {
		before := processCPU()
		for b.Loop() {
			if _, err := ix.Search(context.Background(), Query{Text: q}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, processCPU()-before, 0)
		return
	}
	benchSearch(b, ix)
}

// BenchmarkOpenSearchIndex is what one `ctx history search` process does with the index besides the
// query's own work: open the index in $CTX_BENCH_INDEX (the schema version check), search a word that
// matches nothing, close (the floor of the process, bench/README.md "Agent history").
func BenchmarkOpenSearchIndex(b *testing.B) {
	dir := os.Getenv("CTX_BENCH_INDEX")
	if dir == "" {
		b.Skip("CTX_BENCH_INDEX is not set")
	}
	ctx := context.Background()
	for b.Loop() {
		ix, err := Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Search(ctx, Query{Text: "zzznomatch"}); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}
