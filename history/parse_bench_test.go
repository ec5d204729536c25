package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkParseGenerated reads, parses and encodes histgen's history ($CTX_BENCH_HISTORY) as a first
// import does on its parsing goroutines, without writing the index: the parse side of an import, on one
// goroutine (bench/README.md "Agent history: import and search"). Besides wall time it reports the
// process's CPU time (user+sys, getrusage, GC included) as cpu-ms/op and MB-per-cpu-s: wall time on the
// shared machine measures its load.
func BenchmarkParseGenerated(b *testing.B) {
	srcs := generatedSources(b)
	bytes := corpusBytes(b, srcs)
	b.SetBytes(bytes)
	ctx := context.Background()
	ix := &Index{}
	var cpu time.Duration
	for b.Loop() {
		before := processCPU()
		events := 0
		for _, s := range srcs {
			r, p, err := ix.prepareFrom(ctx, s, nil)
			if err != nil || r.Action == "failed" {
				b.Fatal(s.Path, err, r.Err)
			}
			events += len(p.pr.Events)
		}
		cpu += processCPU() - before
		b.ReportMetric(float64(events), "events")
	}
	reportCPU(b, cpu, bytes)
}

// reportCPU reports the CPU time per op and the megabytes of input per CPU second.
func reportCPU(b *testing.B, cpu time.Duration, bytes int64) {
	per := cpu.Seconds() / float64(b.N)
	b.ReportMetric(per*1000, "cpu-ms/op")
	if per > 0 && bytes > 0 {
		b.ReportMetric(float64(bytes)/1e6/per, "MB/cpu-s")
	}
}

// BenchmarkRefreshIndex is `ctx history import` with nothing new: the discovery of every provider's
// root (with the directory cache) under histgen's history ($CTX_BENCH_HISTORY, laid out as bench/history.sh points the providers'
// variables at it) and the import of what it finds into an index built beforehand over it
// ($CTX_BENCH_INDEX, e.g. the .git/ctx/history of bench/history.sh's repository).
func BenchmarkRefreshIndex(b *testing.B) {
	dir, hist := os.Getenv("CTX_BENCH_INDEX"), os.Getenv("CTX_BENCH_HISTORY")
	if dir == "" || hist == "" {
		b.Skip("CTX_BENCH_INDEX and CTX_BENCH_HISTORY are not set")
	}
	vars := map[string]string{"CLAUDE_CONFIG_DIR": "claude-code", "CODEX_HOME": "codex", "GEMINI_CLI_HOME": "gemini-cli",
		"CURSOR_DATA_DIR": "cursor", "COPILOT_HOME": "copilot-cli", "XDG_DATA_HOME": "home"}
	env := Env{Home: filepath.Join(hist, "home"), Getenv: func(k string) string {
		if v, ok := vars[k]; ok {
			return filepath.Join(hist, v)
		}
		return ""
	}}
	ctx := context.Background()
	ix, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	var cpu time.Duration
	for b.Loop() {
		before := processCPU()
		var srcs []Source
		dirs := ix.LoadDirCache(ctx) // as ctx history import does
		for _, r := range Roots(env) {
			if !r.Exists {
				continue
			}
			s, err := DiscoverCached(ctx, r.Provider, r.Path, false, dirs)
			if err != nil {
				b.Fatal(err)
			}
			srcs = append(srcs, s...)
		}
		st, err := ix.Import(ctx, srcs)
		if err != nil || st.Unchanged != len(srcs) {
			b.Fatal(st.Unchanged, len(srcs), err)
		}
		if err := ix.SaveDirCache(ctx, dirs); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - before
		b.ReportMetric(float64(len(srcs)), "sources")
	}
	reportCPU(b, cpu, 0)
}
