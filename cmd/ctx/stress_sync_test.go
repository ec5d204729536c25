package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// The rest of the kill -9 suite (docs/locks.md, "Crash tests"): imports and pulls that merge, killed at
// random moments, and CLI processes writing at the same time as MCP servers. `make test` runs
// stressIterations (5) kills of each kind; `make stress` runs 100 and prints the figures.

// TestKillStressImport kills `ctx import` of a growing ADR folder at random moments. After each kill the
// next ctx command works; every acknowledged import is on the branch, no decision is imported twice
// (a re-import of the same files updates, never duplicates), no lock is left and fsck is clean.
func TestKillStressImport(t *testing.T) {
	n := stressIterations
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("seed %d, %d iterations", seed, n)
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	ctxFaultBin(t)
	adr := filepath.Join(dir, "doc", "adr")
	if err := os.MkdirAll(adr, 0o755); err != nil {
		t.Fatal(err)
	}
	writeADR := func(i int) {
		body := fmt.Sprintf("# %d. Decision number %d\n\nDate: 2026-11-30\n\n## Status\n\nAccepted\n\n## Context\n\nContext %d.\n\n## Decision\n\nWe do %d.\n\n## Consequences\n\nNone.\n", i, i, i, i)
		if err := os.WriteFile(filepath.Join(adr, fmt.Sprintf("%04d-decision-number-%d.md", i, i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeADR(1)
	importTime := timeIt(t, dir, "import", "doc/adr")
	stats := map[string]int{}
	acked := 1 // ADR 1, imported above
	start := time.Now()
	for i := 2; i < n+2; i++ {
		writeADR(i)
		fault := ""
		if rng.IntN(2) == 0 {
			fault = writeFaults[rng.IntN(4)] // the public ref's points: import writes one ref
		}
		outcome, out := runKilled(t, dir, "", fault, time.Duration(rng.Int64N(int64(importTime*3/2)+1)), "import", "doc/adr")
		stats[[]string{"finished", "failed", "killed"}[outcome]]++
		if outcome == failed {
			t.Fatalf("import %d failed without being killed:\n%s", i, out)
		}
		if outcome == finished {
			acked = i
		}
		if st := ctxEnv(dir, nil, "status"); st.code != 0 {
			t.Fatalf("status after import %d: exit %d\n%s", i, st.code, st.stderr)
		}
	}
	// A last import completes whatever the kills left: every ADR is there exactly once.
	run(t, dir, 0, "import", "doc/adr")
	noLocks(t, dir)
	fsck(t, dir)
	titles := map[string]int{}
	for _, f := range strings.Fields(testenv.Git(t, dir, "ls-tree", "--name-only", "ctx", "decisions/")) {
		body := testenv.Git(t, dir, "cat-file", "blob", "ctx:"+f)
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "title: ") {
				titles[strings.TrimSpace(line[strings.Index(line, " ")+1:])]++
				break
			}
		}
	}
	dups, lost := 0, 0
	for i := 1; i < n+2; i++ {
		found := 0
		for title, c := range titles {
			if strings.HasSuffix(title, fmt.Sprintf("Decision number %d", i)) {
				found += c
			}
		}
		switch {
		case found == 0:
			lost++
			t.Errorf("ADR %d is not on the branch after the last import (titles %v)", i, titles)
		case found > 1:
			dups++
			t.Errorf("ADR %d imported %d times", i, found)
		}
	}
	if len(titles) == 0 {
		t.Fatal("no decision on the branch")
	}
	t.Logf("imports: %d runs in %s (%s), last acknowledged ADR %d, %d lost, %d imported twice, fsck clean, no lock left",
		n, time.Since(start).Round(time.Millisecond), sortedStats(stats), acked, lost, dups)
}

// TestKillStressPullMerge kills `ctx pull` while it merges a teammate's commits into diverged local
// ones, at random moments and at the fault points of its ref update. After each kill `ctx status` works
// and the next `ctx pull` completes the merge: both sides' entries are there, no conflict record was made
// (the two sides never touch the same key), no hand edit is recorded, no lock is left, fsck is clean.
func TestKillStressPullMerge(t *testing.T) {
	n := stressIterations
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 3))
	t.Logf("seed %d, %d iterations", seed, n)
	_, origin := seededRemote(t, "origin.git")
	a := cloneURL(t, origin, "a")
	b := cloneURL(t, origin, "b")
	run(t, a, 0, "init")
	run(t, a, 0, "knowledge", "set", "seed", "s")
	run(t, a, 0, "push")
	run(t, b, 0, "init")
	run(t, b, 0, "pull")
	ctxFaultBin(t)
	// A pull that merges: B pushed, A wrote meanwhile.
	diverge := func(i int) {
		run(t, b, 0, "knowledge", "set", fmt.Sprintf("b%d", i), fmt.Sprintf("from B %d", i))
		run(t, b, 0, "push")
		run(t, a, 0, "knowledge", "set", fmt.Sprintf("a%d", i), fmt.Sprintf("from A %d", i))
	}
	diverge(0)
	pullTime := timeIt(t, a, "pull")
	faults := []string{"ref-marked:refs/heads/ctx", "ref-locked:refs/heads/ctx", "objects-written", "refs-prepared"}
	stats := map[string]int{}
	start := time.Now()
	for i := 1; i <= n; i++ {
		diverge(i)
		fault := ""
		if rng.IntN(2) == 0 {
			fault = faults[rng.IntN(len(faults))]
		}
		outcome, out := runKilled(t, a, "", fault, time.Duration(rng.Int64N(int64(pullTime*3/2)+1)), "pull")
		stats[[]string{"finished", "failed", "killed"}[outcome]]++
		if outcome == failed {
			t.Fatalf("pull %d failed without being killed:\n%s", i, out)
		}
		if fault != "" && outcome == killed {
			stats["killed at "+strings.SplitN(fault, ":", 2)[0]]++
		}
		st := ctxEnv(a, nil, "status")
		if st.code != 0 {
			t.Fatalf("status after pull %d: exit %d\n%s", i, st.code, st.stderr)
		}
		if strings.Contains(st.stdout, "record them with ctx commit") {
			t.Fatalf("a killed pull left hand edits:\n%s", st.stdout)
		}
		// The next pull completes the merge whatever the kill left, and records no hand edit first.
		if out := run(t, a, 0, "pull"); strings.Contains(out, "of .context/ first") {
			t.Fatalf("the pull after a killed pull recorded hand edits:\n%s", out)
		}
	}
	run(t, a, 0, "push")
	run(t, b, 0, "pull")
	for _, dir := range []string{a, b} {
		keys := strings.Fields(testenv.Git(t, dir, "ls-tree", "--name-only", "ctx", "knowledge/"))
		have := map[string]bool{}
		for _, k := range keys {
			have[strings.TrimSuffix(strings.TrimPrefix(k, "knowledge/"), ".md")] = true
		}
		for i := 0; i <= n; i++ {
			for _, k := range []string{fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)} {
				if !have[k] {
					t.Errorf("%s: entry %s lost", filepath.Base(dir), k)
				}
			}
		}
		if c := testenv.Git(t, dir, "ls-tree", "--name-only", "ctx", "conflicts/"); c != "" {
			t.Errorf("%s: conflict records made by killed pulls: %s", filepath.Base(dir), c)
		}
		noLocks(t, dir)
		fsck(t, dir)
	}
	if ga, gb := testenv.Git(t, a, "rev-parse", "ctx"), testenv.Git(t, b, "rev-parse", "ctx"); ga != gb {
		t.Errorf("A and B did not converge: %s vs %s", ga, gb)
	}
	t.Logf("pulls with a merge: %d runs in %s (%s), 0 lost, 0 conflict records, no hand edit, A = B = remote, fsck clean, no lock left",
		n, time.Since(start).Round(time.Millisecond), sortedStats(stats))
}

// TestConcurrentCLIAndMCPWriters runs CLI processes and MCP servers (real stdio clients) writing to the
// same repository at once. Every acknowledged write is on the branch as its own commit, fsck is clean.
func TestConcurrentCLIAndMCPWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	repo := testenv.NewRepo(t)
	run(t, repo, 0, "init", "--no-hooks")
	const cliProcs, servers, writes = 4, 2, 15
	var wg sync.WaitGroup
	errs := make(chan error, (cliProcs+servers)*writes+servers)
	start := time.Now()
	for p := 0; p < cliProcs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < writes; i++ {
				if _, stderr, code := runCode(repo, "", "knowledge", "set", fmt.Sprintf("cli-%d-%d", p, i), fmt.Sprintf("cli %d %d", p, i)); code != 0 {
					errs <- fmt.Errorf("cli %d write %d: exit %d: %s", p, i, code, stderr)
				}
			}
		}(p)
	}
	for s := 0; s < servers; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			c, err := client.NewStdioMCPClient(ctxBin, nil, "-C", repo, "mcp", "serve")
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			initReq := mcpgo.InitializeRequest{}
			initReq.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
			initReq.Params.ClientInfo = mcpgo.Implementation{Name: fmt.Sprintf("stress-%d", s), Version: "1"}
			if _, err := c.Initialize(ctx, initReq); err != nil {
				errs <- err
				return
			}
			for i := 0; i < writes; i++ {
				req := mcpgo.CallToolRequest{}
				req.Params.Name = "context_add_knowledge"
				req.Params.Arguments = map[string]any{"key": fmt.Sprintf("mcp-%d-%d", s, i), "content": fmt.Sprintf("mcp %d %d\n", s, i)}
				res, err := c.CallTool(ctx, req)
				if err != nil {
					errs <- fmt.Errorf("server %d write %d: %w", s, i, err)
				} else if res.IsError {
					errs <- fmt.Errorf("server %d write %d: tool error %v", s, i, res.Content)
				}
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	failures := 0
	for err := range errs {
		failures++
		t.Error(err)
	}
	total := (cliProcs + servers) * writes
	files := strings.Fields(testenv.Git(t, repo, "ls-tree", "--name-only", "ctx", "knowledge/"))
	if len(files) != total-failures || failures > 0 {
		t.Errorf("entries: %d, want %d", len(files), total)
	}
	if count := testenv.Git(t, repo, "rev-list", "--count", "ctx"); count != fmt.Sprint(total+1) {
		t.Errorf("commits: %s, want %d (+1 init)", count, total)
	}
	testenv.Git(t, repo, "fsck", "--strict", "--no-dangling")
	noLocks(t, repo)
	t.Logf("%d CLI processes and %d MCP servers wrote %d entries at once in %s: %d lost, fsck clean",
		cliProcs, servers, total, time.Since(start).Round(time.Millisecond), total-len(files))
}
