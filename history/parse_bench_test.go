package history

import (
	"context"
	"syscall"
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
	if per > 0 {
		b.ReportMetric(float64(bytes)/1e6/per, "MB/cpu-s")
	}
}

// processCPU is the user+sys CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
