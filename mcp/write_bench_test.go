package mcp

import (
	"fmt"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// BenchmarkWriteTool measures context_add_knowledge, the MCP write tool, through mcp-go's stdio client
// on one session of a server whose store holds 100 or 10,000 knowledge entries: each call is one commit
// on the context branch and a refresh of .context/. It reports, besides ns/op, the median and 99th
// percentile latency of a whole tool call (p50-ms, p99-ms) and the process's CPU time per call
// (cpu-ms/op: client and server run in this process; the client's share is small). Results:
// bench/README.md "MCP write tool".
//
//	go test -run '^$' -bench WriteTool -benchtime 200x ./mcp
func BenchmarkWriteTool(b *testing.B) {
	for _, entries := range []int{100, 10000} {
		b.Run(fmt.Sprint(entries), func(b *testing.B) {
			st := benchStore(b, entries)
			s := serve(b, st, Options{Agent: "bench"}, "")
			call := func(i int) {
				res, err := s.callErr("context_add_knowledge", map[string]any{
					"key": fmt.Sprintf("w%05d", i), "content": fmt.Sprintf("write %d of the benchmark\n", i)})
				if err != nil {
					b.Fatal(err)
				}
				if res.IsError {
					b.Fatalf("tool error: %s", resultText(res))
				}
			}
			call(-1) // first call: the schema compiles, caches fill
			lat := make([]time.Duration, b.N)
			cpu0 := testenv.CPUTime(syscall.RUSAGE_SELF)
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				call(i)
				lat[i] = time.Since(t0)
			}
			b.StopTimer()
			cpu := testenv.CPUTime(syscall.RUSAGE_SELF) - cpu0
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[(len(lat)*99)/100])/1e6, "p99-ms")
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
