// Command histsearch measures agent-history search as users meet it (bench/README.md "Agent history:
// import and search"): whole `ctx history search` processes, `search` calls to one warm `ctx mcp serve`
// over stdio (mcp-go's client), and the reference beside them, `rg` (or `grep -r` when rg is absent)
// over the same JSONL files for the same terms.
//
//	go run ./bench/histsearch -ctx bin/ctx -repo DIR -history DIR [-runs 5] [-mcp-runs 20] [-per-query] [-ref=false]
//	go run ./bench/histsearch -ctx NEW/ctx -old OLD/ctx -server -repo DIR -history DIR -ref=false -mcp-runs 0
//
// -repo is a git repository whose history index is built (`ctx history import` under the environment
// bench/histgen prints); -history is the folder histgen wrote. -per-query adds each query's median CPU
// time; -ref=false leaves the reference out (for a second binary in the same run). Each query runs -runs
// times as a process
// (queries interleaved, one warm-up round first) and -mcp-runs times over MCP. It prints p50 and p99 of
// wall time, the CPU time (user + sys) of the processes, and the server's CPU time per MCP call (Linux).
//
// -benchfmt LABEL adds, at the end, each figure as a line of the Go benchmark format named with LABEL
// (BenchmarkHistSearch/LABEL/what=process|server|oneshot|old-...|ref-rg|ref-grep|mcp N wall-p50-ms
// wall-p99-ms cpu-p50-ms cpu-p99-ms; bench/history.sh passes events=N), which bench/summary reads.
//
// -old runs a second ctx (the peer: an older build) alternated with -ctx query by query (the order
// switched every round) and reports both. -server measures -ctx through its warm search server
// (`ctx history server start`, docs/architecture.md "The search server"): one block of process runs with
// the server running (the server's CPU time per search added from /proc/PID/task/*/schedstat), then one
// with it stopped (the one-shot path), each beside -old when given.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// queries are common, middling and rare terms of the corpus, and one that matches nothing.
var queries = []string{"hello function", "onboarding", "todo", "npm run build", "apply_patch", "git commit",
	"zzznomatch", "README", "error", "the", "session", "test"}

func main() {
	ctxBin := flag.String("ctx", "bin/ctx", "the ctx binary")
	repo := flag.String("repo", "", "a git repository whose history index is built")
	hist := flag.String("history", "", "the folder of JSONL files the index was built from (for the rg reference)")
	runs := flag.Int("runs", 5, "process runs per query")
	mcpRuns := flag.Int("mcp-runs", 20, "MCP calls per query")
	perQuery := flag.Bool("per-query", false, "also print each query's median CPU time (whole processes)")
	withRef := flag.Bool("ref", true, "also run the reference (rg or grep) over the JSONL")
	oldBin := flag.String("old", "", "a second ctx binary (the peer), alternated with -ctx")
	withServer := flag.Bool("server", false, "measure -ctx through its search server, then without it")
	flag.StringVar(&benchLabel, "benchfmt", "", "also print each figure as a line of the Go benchmark format, named with this label (e.g. events=30000; for bench/summary)")
	flag.Parse()
	if *repo == "" || *hist == "" {
		fmt.Fprintln(os.Stderr, "usage: histsearch -ctx BIN -repo DIR -history DIR [-runs N] [-mcp-runs N]")
		os.Exit(2)
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at start: %s", la)
	}
	searchCmd := func(bin string) func(q string) *exec.Cmd {
		return func(q string) *exec.Cmd {
			return exec.Command(bin, append([]string{"-C", *repo, "history", "search", "--json"}, strings.Fields(q)...)...)
		}
	}
	if *withServer || *oldBin != "" {
		blocks := []bool{false}
		if *withServer {
			blocks = []bool{true, false}
		}
		for _, server := range blocks {
			srv := 0
			name, slug := "ctx history search (process)", "process"
			if server {
				out, err := exec.Command(*ctxBin, "-C", *repo, "history", "server", "start", "--idle", "1h").CombinedOutput()
				if err != nil {
					fmt.Fprintf(os.Stderr, "histsearch: start the search server: %v\n%s", err, out)
					os.Exit(1)
				}
				srv = serverPID(*ctxBin, *repo)
				name, slug = "ctx history search, search server", "server"
			} else if *withServer {
				name, slug = "ctx history search, one-shot (no server)", "oneshot"
			}
			sides := []side{{name: "new " + name, slug: slug, cmd: searchCmd(*ctxBin), server: srv}}
			if *oldBin != "" {
				sides = append(sides, side{name: "old ctx history search (process)", slug: "old-" + slug, cmd: searchCmd(*oldBin)})
			}
			alternate(*runs, sides)
			for _, sd := range sides {
				report(sd.slug, sd.name, sd.wall, sd.cpu)
				if sd.server > 0 {
					report(sd.slug+"-server-cpu", "  server CPU per search", nil, sd.srvCPU)
					sum := make([]time.Duration, len(sd.cpu))
					for i := range sum {
						sum[i] = sd.cpu[i] + sd.srvCPU[i]
					}
					report(sd.slug+"-total-cpu", "  client + server CPU per search", nil, sum)
				}
				if *perQuery {
					perQueryCPU(sd.cpu)
				}
			}
			if server {
				if out, err := exec.Command(*ctxBin, "-C", *repo, "history", "server", "stop").CombinedOutput(); err != nil {
					fmt.Fprintf(os.Stderr, "histsearch: stop the search server: %v\n%s", err, out)
					os.Exit(1)
				}
			}
		}
	} else {
		ctxWall, ctxCPU := procRuns(*runs, searchCmd(*ctxBin))
		report("process", "ctx history search (process)", ctxWall, ctxCPU)
		if *perQuery {
			perQueryCPU(ctxCPU)
		}
	}
	if *withRef {
		ref := "rg"
		if _, err := exec.LookPath("rg"); err != nil {
			ref = "grep"
		}
		refWall, refCPU := procRuns(*runs, func(q string) *exec.Cmd {
			term := strings.Fields(q)[0]
			if ref == "rg" {
				return exec.Command("rg", "-l", "-i", "-F", "--", term, *hist)
			}
			return exec.Command("grep", "-r", "-l", "-i", "-F", "--", term, *hist)
		})
		report("ref-"+ref, ref+" -l -i over the JSONL (first term)", refWall, refCPU)
	}
	if *mcpRuns > 0 {
		mcpWall, mcpCPU, err := mcpRunsOf(*ctxBin, *repo, *mcpRuns)
		if err != nil {
			fmt.Fprintln(os.Stderr, "histsearch: mcp:", err)
			os.Exit(1)
		}
		report("mcp", "MCP search (warm ctx mcp serve)", mcpWall, mcpCPU)
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at end: %s", la)
	}
	for _, l := range benchLines {
		fmt.Println(l)
	}
}

func procRuns(runs int, cmd func(q string) *exec.Cmd) (wall, cpu []time.Duration) {
	for round := -1; round < runs; round++ {
		for _, q := range queries {
			c := cmd(q)
			t0 := time.Now()
			out, err := c.CombinedOutput()
			d := time.Since(t0)
			if err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 { // rg and grep exit 1 on no match
					fmt.Fprintf(os.Stderr, "histsearch: %v: %v\n%s", c.Args, err, out)
					os.Exit(1)
				}
			}
			if round < 0 {
				continue // warm-up
			}
			wall = append(wall, d)
			if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
				cpu = append(cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
			}
		}
	}
	return wall, cpu
}

// side is one program of alternate's runs and its samples.
type side struct {
	name   string
	slug   string // its name in -benchfmt's lines
	cmd    func(q string) *exec.Cmd
	server int // the pid of its search server, 0 without
	wall   []time.Duration
	cpu    []time.Duration // the process's user + sys (wait4)
	srvCPU []time.Duration // the server's CPU time during the process (server > 0)
}

// alternate runs each query runs times with each side (after one warm-up round), the sides alternated
// query by query and their order switched every round.
func alternate(runs int, sides []side) {
	for round := -1; round < runs; round++ {
		for _, q := range queries {
			for k := range sides {
				i := k
				if round%2 != 0 {
					i = len(sides) - 1 - k
				}
				sd := &sides[i]
				c := sd.cmd(q)
				s0 := runTime(sd.server)
				t0 := time.Now()
				out, err := c.CombinedOutput()
				d := time.Since(t0)
				s1 := runTime(sd.server)
				if err != nil {
					fmt.Fprintf(os.Stderr, "histsearch: %v: %v\n%s", c.Args, err, out)
					os.Exit(1)
				}
				if round < 0 {
					continue
				}
				sd.wall = append(sd.wall, d)
				if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
					sd.cpu = append(sd.cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
				}
				if sd.server > 0 {
					sd.srvCPU = append(sd.srvCPU, s1-s0)
				}
			}
		}
	}
}

// serverPID is the pid of the search server of ctxBin's index in repo, from its lock file.
func serverPID(ctxBin, repo string) int {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	if err != nil {
		return 0
	}
	b, _ := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "ctx", "history", "search.lock"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// perQueryCPU prints the median CPU time of each query; cpu holds procRuns' samples, queries interleaved.
func perQueryCPU(cpu []time.Duration) {
	for i, q := range queries {
		var ds []time.Duration
		for j := i; j < len(cpu); j += len(queries) {
			ds = append(ds, cpu[j])
		}
		fmt.Printf("  %-16s cpu p50 %7.1f ms  max %7.1f ms\n", q, float64(pct(ds, 50).Microseconds())/1000, float64(pct(ds, 100).Microseconds())/1000)
	}
}

// mcpRunsOf calls search runs times per query on one warm server and returns each call's wall time and,
// on Linux, the server's CPU time during the call (the sum of its threads' run time from
// /proc/PID/task/*/schedstat, in nanoseconds; none elsewhere).
func mcpRunsOf(ctxBin, repo string, runs int) (wall, cpu []time.Duration, err error) {
	c, err := client.NewStdioMCPClient(ctxBin, nil, "-C", repo, "mcp", "serve")
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	ctx := context.Background()
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgo.Implementation{Name: "histsearch", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, nil, err
	}
	server := childPID()
	for round := -1; round < runs; round++ {
		for _, q := range queries {
			req := mcpgo.CallToolRequest{}
			req.Params.Name = "search"
			req.Params.Arguments = map[string]any{"query": q}
			c0 := runTime(server)
			t0 := time.Now()
			res, err := c.CallTool(ctx, req)
			d := time.Since(t0)
			c1 := runTime(server)
			if err != nil {
				return nil, nil, err
			}
			if res.IsError {
				return nil, nil, fmt.Errorf("search %q: %v", q, res.Content)
			}
			if round >= 0 {
				wall = append(wall, d)
				if server > 0 {
					cpu = append(cpu, c1-c0)
				}
			}
		}
	}
	return wall, cpu, nil
}

// childPID is the pid of this process's one child (the server), 0 when not known.
func childPID() int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []string
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		pids = append(pids, strings.Fields(string(b))...)
	}
	if len(pids) != 1 {
		return 0
	}
	pid, _ := strconv.Atoi(pids[0])
	return pid
}

// runTime is the CPU time process pid has run, summed over its threads (0 when unknown).
func runTime(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, p := range stats {
		b, _ := os.ReadFile(p)
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			ns += v
		}
	}
	return time.Duration(ns)
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s[min(len(s)-1, len(s)*p/100)]
}

// benchLabel is -benchfmt's label: when set, report also keeps each figure as a line of the Go benchmark
// format, printed at the end (BenchmarkHistSearch/LABEL/what=SLUG N wall-p50-ms wall-p99-ms cpu-p50-ms
// cpu-p99-ms), which bench/summary reads.
var (
	benchLabel string
	benchLines []string
)

// report prints one figure (slug names it in -benchfmt's line): p50 and p99 of wall and CPU time.
func report(slug, what string, wall, cpu []time.Duration) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if benchLabel != "" {
		line := fmt.Sprintf("BenchmarkHistSearch/%s/what=%s %d", benchLabel, slug, max(len(wall), len(cpu)))
		if len(wall) > 0 {
			line += fmt.Sprintf(" %g wall-p50-ms %g wall-p99-ms", ms(pct(wall, 50)), ms(pct(wall, 99)))
		}
		if len(cpu) > 0 {
			line += fmt.Sprintf(" %g cpu-p50-ms %g cpu-p99-ms", ms(pct(cpu, 50)), ms(pct(cpu, 99)))
		}
		benchLines = append(benchLines, line)
	}
	fmt.Printf("%-44s n=%-4d", what, max(len(wall), len(cpu)))
	if len(wall) > 0 {
		fmt.Printf(" wall p50 %7.1f ms  p99 %7.1f ms", ms(pct(wall, 50)), ms(pct(wall, 99)))
	}
	if len(cpu) > 0 {
		fmt.Printf("  cpu p50 %7.1f ms  p99 %7.1f ms", ms(pct(cpu, 50)), ms(pct(cpu, 99)))
	}
	fmt.Println()
}
