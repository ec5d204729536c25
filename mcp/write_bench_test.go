package mcp

import (
	"context"
	"fmt"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
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
			st, _ := storetest.New(b)
			if _, err := st.Write(context.Background(), store.Op{Name: "bench", Summary: "bench"}, func(v *store.View) (store.Edits, error) {
				ed := store.Edits{}
				for i := range entries {
					ed.Put(store.Public, fmt.Sprintf("knowledge/k%05d.md", i), []byte(fmt.Sprintf("---\nauthor: a\n---\nentry %d\n", i)))
				}
				return ed, nil
			}); err != nil {
				b.Fatal(err)
			}
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
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				call(i)
				lat[i] = time.Since(t0)
			}
			b.StopTimer()
			cpu := cpuTime() - cpu0
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[(len(lat)*99)/100])/1e6, "p99-ms")
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
