// Command mcpwrite measures the MCP write tool of a real `ctx mcp serve` process over stdio: a store of
// -entries knowledge entries, one server session that makes -writes calls of context_add_knowledge, the
// latency of each call (from the request's line written to the answer's line read), the server's CPU
// time per call (from /proc/<pid>/stat, the server alone, its git children excluded) and its resident
// memory after the writes (VmRSS, and the peak VmHWM). With -base OLD a second binary runs the same
// session on its own copy of the store, alternating with -ctx session by session, so that the machine's
// load hits both alike (bench/README.md "Third round").
//
// -benchfmt adds the table's lines in the Go benchmark format (BenchmarkMCPWrite/entries=N/writes=W/binary=B
// CALLS server-cpu-ms/call p50-ms p99-ms first-ms rss-MB peak-rss-MB), which bench/summary reads.
//
// usage: go run ./bench/mcpwrite -ctx NEW [-base OLD] [-entries 10000] [-writes 200] [-sessions 5] [-benchfmt]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/bench/internal/benchproc"
)

func main() {
	benchproc.Prog = "mcpwrite"
	ctxBin := flag.String("ctx", "bin/ctx", "the ctx binary to measure")
	baseBin := flag.String("base", "", "a second ctx binary measured in the same alternation (before a change)")
	entries := flag.Int("entries", 10000, "knowledge entries in the store")
	writes := flag.Int("writes", 200, "tool calls per server session")
	sessions := flag.Int("sessions", 5, "server sessions per binary (alternating)")
	benchfmt := flag.Bool("benchfmt", false, "also print each line of the table in the Go benchmark format (for bench/summary)")
	stderr := flag.String("stderr", "", "append the servers' standard error to this file (e.g. with GODEBUG=gctrace=1)")
	flag.Parse()
	if *stderr != "" {
		f, err := os.OpenFile(*stderr, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			benchproc.Fatal(err)
		}
		defer f.Close()
		serverStderr = f
	}

	bins := []string{abs(*ctxBin)}
	names := []string{"ctx"}
	if *baseBin != "" {
		bins = append([]string{abs(*baseBin)}, bins...)
		names = append([]string{"base"}, names...)
	}
	tmp, err := os.MkdirTemp("", "ctx-mcpwrite.")
	if err != nil {
		benchproc.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	benchproc.Hermetic(tmp)
	gitVersion, _ := exec.Command("git", "--version").Output()
	fmt.Printf("machine: %d CPUs, %s/%s, %s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), gitVersion)
	fmt.Printf("load average at start: %s\n", benchproc.LoadAvg())

	dirs := make([]string, len(bins))
	for i, bin := range bins {
		dirs[i] = prepare(tmp, names[i], bin, *entries)
	}
	type agg struct {
		lat          []float64 // ms, every call of every session
		cpu          []float64 // ms per call, one per session
		rss, hwm     []float64 // MB after each session's writes
		firstLatency []float64
	}
	res := make([]agg, len(bins))
	for s := range *sessions {
		for i, bin := range bins {
			lat, cpu, rss, hwm := session(dirs[i], bin, fmt.Sprintf("s%d", s), *writes)
			res[i].firstLatency = append(res[i].firstLatency, lat[0])
			res[i].lat = append(res[i].lat, lat[1:]...)
			res[i].cpu = append(res[i].cpu, cpu)
			res[i].rss = append(res[i].rss, rss)
			res[i].hwm = append(res[i].hwm, hwm)
		}
	}
	fmt.Printf("load average at end: %s\n\n", benchproc.LoadAvg())
	fmt.Printf("%d sessions of %d writes per binary at %d entries; latency over all calls but each session's first\n", *sessions, *writes, *entries)
	fmt.Printf("| binary | server cpu/call, median of sessions (ms) | p50 (ms) | p99 (ms) | first call (ms) | RSS after writes (MB) | peak RSS (MB) |\n")
	fmt.Printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for i := range bins {
		r := res[i]
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", names[i], benchproc.Median(r.cpu), pct(r.lat, 50), pct(r.lat, 99),
			benchproc.Median(r.firstLatency), benchproc.Median(r.rss), benchproc.Median(r.hwm))
	}
	if *benchfmt {
		for i := range bins {
			r := res[i]
			benchproc.Result(fmt.Sprintf("MCPWrite/entries=%d/writes=%d/binary=%s", *entries, *writes, names[i]), len(r.lat),
				benchproc.Metric{Value: benchproc.Median(r.cpu), Unit: "server-cpu-ms/call"},
				benchproc.Metric{Value: pct(r.lat, 50), Unit: "p50-ms"}, benchproc.Metric{Value: pct(r.lat, 99), Unit: "p99-ms"},
				benchproc.Metric{Value: benchproc.Median(r.firstLatency), Unit: "first-ms"},
				benchproc.Metric{Value: benchproc.Median(r.rss), Unit: "rss-MB"}, benchproc.Metric{Value: benchproc.Median(r.hwm), Unit: "peak-rss-MB"})
		}
	}
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		benchproc.Fatal(err)
	}
	return a
}

func pct(xs []float64, p int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)*p)/100]
}

func entry(text string) string {
	return "---\nauthor: Bench <bench@example.com>\nagent: cli\nupdated_at: \"2026-01-01T00:00:00Z\"\n" +
		"provenance: owner_instruction\nscope: public\n---\n" + text
}

// prepare makes a store of n entries for one binary: ctx init, one git fast-import commit adding
// knowledge/k0..k<n-1>, one ctx write (which fills .context/) and git gc.
func prepare(tmp, name, bin string, n int) string {
	dir := filepath.Join(tmp, name)
	benchproc.Run(tmp, nil, "git", "init", "-q", "-b", "main", dir)
	benchproc.Run(dir, nil, "git", "commit", "-q", "--allow-empty", "-m", "initial commit")
	benchproc.Run(dir, nil, bin, "init", "--no-hooks")
	var fi bytes.Buffer
	w := bufio.NewWriter(&fi)
	fmt.Fprintf(w, "commit refs/heads/ctx\ncommitter Bench <bench@example.com> 1767225600 +0000\n")
	msg := fmt.Sprintf("prefill %d entries\n", n)
	fmt.Fprintf(w, "data %d\n%s\nfrom %s\n", len(msg), msg, benchproc.Run(dir, nil, "git", "rev-parse", "refs/heads/ctx"))
	for i := range n {
		e := entry(fmt.Sprintf("entry %d", i))
		fmt.Fprintf(w, "M 100644 inline knowledge/k%d.md\ndata %d\n%s\n", i, len(e), e)
	}
	if err := w.Flush(); err != nil {
		benchproc.Fatal(err)
	}
	benchproc.Run(dir, &fi, "git", "fast-import", "--quiet")
	benchproc.Run(dir, nil, bin, "knowledge", "set", "warmup", "warm up")
	benchproc.Run(dir, nil, "git", "gc", "-q")
	return dir
}

// serverStderr receives the servers' standard error (-stderr).
var serverStderr io.Writer = io.Discard

const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// session starts `ctx mcp serve` in dir, initializes it and makes writes calls of context_add_knowledge
// (keys <tag>-w<i>). It returns each call's latency (ms), the server's CPU per call (ms) and its VmRSS
// and VmHWM (MB) after the last call.
func session(dir, bin, tag string, writes int) (lat []float64, cpuPerCall, rss, hwm float64) {
	cmd := exec.Command(bin, "mcp", "serve")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		benchproc.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		benchproc.Fatal(err)
	}
	cmd.Stderr = serverStderr
	if err := cmd.Start(); err != nil {
		benchproc.Fatal(err)
	}
	out := bufio.NewReaderSize(outPipe, 1<<20)
	answer := func(id int) string {
		want := fmt.Sprintf(`"id":%d,`, id)
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				benchproc.Fatal(fmt.Errorf("%s: reading the answer to %d: %v", bin, id, err))
			}
			if strings.Contains(line, want) {
				return line
			}
		}
	}
	if _, err := io.WriteString(in, initialize); err != nil {
		benchproc.Fatal(err)
	}
	answer(0)
	cpu0 := procCPU(cmd.Process.Pid)
	for i := 1; i <= writes; i++ {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"context_add_knowledge",`+
			`"arguments":{"key":"%s-w%05d","content":"write %d of the benchmark\n"}}}`+"\n", i, tag, i, i)
		t0 := time.Now()
		if _, err := io.WriteString(in, req); err != nil {
			benchproc.Fatal(err)
		}
		line := answer(i)
		lat = append(lat, benchproc.Ms(time.Since(t0)))
		if strings.Contains(line, `"isError":true`) || strings.Contains(line, `"error":{`) {
			benchproc.Fatal(fmt.Errorf("%s: call %d failed: %s", bin, i, line))
		}
	}
	cpuPerCall = benchproc.Ms(procCPU(cmd.Process.Pid)-cpu0) / float64(writes)
	rss, hwm = procMem(cmd.Process.Pid)
	_ = in.Close()
	_ = cmd.Wait()
	return lat, cpuPerCall, rss, hwm
}

// procCPU is the user and system time of process pid (its own, not its children's), from /proc/pid/stat.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		benchproc.Fatal(err)
	}
	// The command name may hold spaces: the fields after it follow its closing parenthesis.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / hz
}

// procMem is VmRSS and VmHWM of process pid in MB.
func procMem(pid int) (rss, hwm float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		benchproc.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		case "RssAnon:", "RssFile:":
			if os.Getenv("MCPWRITE_RSS_PARTS") != "" {
				fmt.Printf("%s %.1f MB\n", f[0], kb/1024)
			}
		}
	}
	return rss, hwm
}
