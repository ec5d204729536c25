package mcp

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
)

// The server's memory stays bounded over writes: a server spawned as a process (mcp-go's stdio client)
// makes 200 writes through context_add_knowledge into a store of 10,000 entries; its peak RSS must stay
// under 80 MiB (the decoded-tree and object caches are bounded in bytes and the server sets a soft
// memory limit, mcp.LimitMemory; the goal is 60 MiB, measured 59.9 MiB). Before
// they were, the same run reached ~250 MiB. CTX_MEMORY_WRITES and CTX_MEMORY_ENTRIES change the run
// (make stress runs it with CTX_STRESS_MEMORY=1).
func TestWritesBoundedMemory(t *testing.T) {
	if os.Getenv("CTX_STRESS_MEMORY") == "" {
		t.Skip("writes 10,000 entries and 200 commits (a minute or more): run by make stress, or with CTX_STRESS_MEMORY=1")
	}
	entries, writes := envInt("CTX_MEMORY_ENTRIES", 10000), envInt("CTX_MEMORY_WRITES", 200)
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	manyEntries(t, st, entries, 200)
	p := spawn(t, buildTestServer(t), dir, "ctx-test")
	ctx := context.Background()
	took := make([]time.Duration, 0, writes)
	for i := range writes {
		start := time.Now()
		res, err := p.c.CallTool(ctx, callReq("context_add_knowledge", map[string]any{
			"key": fmt.Sprintf("note-%04d", i%entries), "content": fmt.Sprintf("rewritten %d\n", i)}))
		if err != nil || res.IsError {
			t.Fatalf("write %d: %v %v", i, err, res)
		}
		took = append(took, time.Since(start))
		if i == 9 || i == writes-1 {
			t.Logf("after %d writes: peak RSS %.1f MiB", i+1, float64(p.peakRSS(t))/mib)
		}
	}
	// Reported, not asserted (speed is measured, never asserted in a test: docs/testing.md).
	slices.Sort(took)
	t.Logf("write latency (wall, whole tool call): p50 %v, p90 %v", took[len(took)/2], took[len(took)*9/10])
	res, err := p.read(fmt.Sprintf("context://knowledge/note-%04d", (writes-1)%entries))
	if err != nil || fmt.Sprint(res.Contents) == "" {
		t.Fatalf("read after the writes: %v", err)
	}
	if peak := p.peakRSS(t); peak > 80*mib {
		t.Errorf("server peak RSS %.1f MiB after %d writes at %d entries, want at most 80 MiB", float64(peak)/mib, writes, entries)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
