// Command mcpread measures resources/read on one session of a real `ctx mcp serve` process over stdio
// pipes, with 1, 2, 4, ... requests in flight (JSON-RPC lets a client send a request before the previous
// one is answered; the server answers each by id): reads/s, the latency of each read (from its request
// line written to its answer line read), and the server's CPU time per read (from /proc/<pid>/stat, the
// server alone). The client is this program writing and reading raw JSON lines, so that it costs little
// beside the server. Each session first reads every entry once (the reads measured are warm: served from
// the read cache), then reads context://knowledge/k<i> in key order, -reads per in-flight level.
//
// The floor is this program itself serving with mcp-go's own StdioServer (default options) a resource
// template context://knowledge/{key} whose handler returns a constant: the JSON-RPC decoding, template
// matching and encoding and the stdio transport that every read costs without any of ctx's work. With
// -base OLD a second ctx binary runs the same sessions on its own copy of the store, alternating with
// -ctx round by round (bench/README.md "Fifth round").
//
// -benchfmt adds the table's lines in the Go benchmark format (BenchmarkMCPRead/entries=N/server=S/inflight=K
// READS reads/s p50-ms p99-ms server-cpu-us/read; S is ctx, base or mcp-go-floor), which bench/summary reads.
//
// usage: go run ./bench/mcpread -ctx NEW [-base OLD] [-entries 10000] [-reads 5000] [-inflight 1,2,4,8,16] [-rounds 3] [-benchfmt]
package main

import (
	"bufio"
	"bytes"
	"context"
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctx-dev/ctx/bench/internal/benchproc"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	benchproc.Prog = "mcpread"
	ctxBin := flag.String("ctx", "bin/ctx", "the ctx binary to measure")
	baseBin := flag.String("base", "", "a second ctx binary measured in the same alternation (before a change)")
	entries := flag.Int("entries", 10000, "knowledge entries in the store")
	reads := flag.Int("reads", 5000, "reads measured per in-flight level and session")
	inflight := flag.String("inflight", "1,2,4,8,16", "requests in flight, one level after the other")
	rounds := flag.Int("rounds", 3, "sessions per binary (alternating)")
	benchfmt := flag.Bool("benchfmt", false, "also print each line of the table in the Go benchmark format (for bench/summary)")
	serveFloor := flag.Bool("serve-floor", false, "serve the floor on stdin and stdout (internal)")
	flag.Parse()
	if *serveFloor {
		floor()
		return
	}
	var levels []int
	for _, f := range strings.Split(*inflight, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			benchproc.Fatal(fmt.Errorf("-inflight: %q", f))
		}
		levels = append(levels, n)
	}
	self, err := os.Executable()
	if err != nil {
		benchproc.Fatal(err)
	}
	type target struct {
		name string
		cmd  []string
		dir  string
	}
	var targets []target
	if *baseBin != "" {
		targets = append(targets, target{name: "base", cmd: []string{abs(*baseBin), "mcp", "serve"}})
	}
	targets = append(targets, target{name: "ctx", cmd: []string{abs(*ctxBin), "mcp", "serve"}},
		target{name: "mcp-go floor", cmd: []string{self, "-serve-floor"}})

	tmp, err := os.MkdirTemp("", "ctx-mcpread.")
	if err != nil {
		benchproc.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	benchproc.Hermetic(tmp)
	gitVersion, _ := exec.Command("git", "--version").Output()
	fmt.Printf("machine: %d CPUs, %s/%s, %s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), gitVersion)
	fmt.Printf("load average at start: %s\n", benchproc.LoadAvg())
	for i := range targets {
		if targets[i].name == "mcp-go floor" {
			targets[i].dir = tmp
			continue
		}
		targets[i].dir = prepare(tmp, targets[i].name, targets[i].cmd[0], *entries)
	}
	time.Sleep(2100 * time.Millisecond) // the store's files older than the read cache's race margin

	type key struct {
		target string
		n      int
	}
	rate, cpu := map[key][]float64{}, map[key][]float64{}
	lat := map[key][]float64{}
	for range *rounds {
		for _, t := range targets {
			s := start(t.dir, t.cmd)
			s.run(*entries, *entries, 16, 0) // every entry read once: the reads below are warm
			for _, n := range levels {
				cpu0 := procCPU(s.cmd.Process.Pid)
				t0 := time.Now()
				l := s.run(*reads, *entries, n, 0)
				el := time.Since(t0)
				k := key{t.name, n}
				rate[k] = append(rate[k], float64(*reads)/el.Seconds())
				cpu[k] = append(cpu[k], float64(procCPU(s.cmd.Process.Pid)-cpu0)/float64(time.Microsecond)/float64(*reads))
				lat[k] = append(lat[k], l...)
			}
			s.stop()
		}
	}
	fmt.Printf("load average at end: %s\n\n", benchproc.LoadAvg())
	fmt.Printf("%d sessions per server, %d warm reads per in-flight level, %d entries; medians of the sessions' reads/s and CPU, latency over all reads\n",
		*rounds, *reads, *entries)
	fmt.Printf("| server | in flight | reads/s | p50 (ms) | p99 (ms) | server CPU per read (µs) |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range levels {
		for _, t := range targets {
			k := key{t.name, n}
			fmt.Printf("| %s | %d | %.0f | %.3f | %.3f | %.1f |\n", t.name, n, benchproc.Median(rate[k]), pct(lat[k], 50), pct(lat[k], 99),
				benchproc.Median(cpu[k]))
		}
	}
	if *benchfmt {
		for _, n := range levels {
			for _, t := range targets {
				k := key{t.name, n}
				benchproc.Result(fmt.Sprintf("MCPRead/entries=%d/server=%s/inflight=%d", *entries, strings.ReplaceAll(t.name, " ", "-"), n),
					len(lat[k]), benchproc.Metric{Value: benchproc.Median(rate[k]), Unit: "reads/s"},
					benchproc.Metric{Value: pct(lat[k], 50), Unit: "p50-ms"}, benchproc.Metric{Value: pct(lat[k], 99), Unit: "p99-ms"},
					benchproc.Metric{Value: benchproc.Median(cpu[k]), Unit: "server-cpu-us/read"})
			}
		}
	}
}

// floor serves context://knowledge/{key} with a constant answer through mcp-go's StdioServer.
func floor() {
	s := server.NewMCPServer("floor", "1", server.WithResourceCapabilities(false, false))
	s.AddResourceTemplate(mcp.NewResourceTemplate("context://knowledge/{key}", "knowledge-entry",
		mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json",
				Text: `{"key":"k0","content":"entry 0"}`}}, nil
		})
	if err := server.ServeStdio(s); err != nil {
		benchproc.Fatal(err)
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
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)*p)/100]
}

// prepare makes a store of n entries for one binary: ctx init, one git fast-import commit adding
// knowledge/k0..k<n-1>, one ctx write (which fills .context/) and git gc (as bench/mcpwrite does).
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
		e := "---\nauthor: Bench <bench@example.com>\nagent: cli\nupdated_at: \"2026-01-01T00:00:00Z\"\n" +
			"provenance: owner_instruction\nscope: public\n---\n" + fmt.Sprintf("entry %d", i)
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

const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// proc is one server process and the client's side of its pipes.
type proc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
}

func start(dir string, argv []string) *proc {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		benchproc.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		benchproc.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		benchproc.Fatal(err)
	}
	p := &proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), nextID: 1}
	if _, err := io.WriteString(in, initialize); err != nil {
		benchproc.Fatal(err)
	}
	if line, err := p.out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":0`) {
		benchproc.Fatal(fmt.Errorf("%s: initialize: %q %v", argv[0], line, err))
	}
	return p
}

func (p *proc) stop() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

// run reads context://knowledge/k<(first+i) mod entries> for i < count with n requests in flight and
// returns each read's latency in ms.
func (p *proc) run(count, entries, n, first int) []float64 {
	base := p.nextID
	p.nextID += count
	sent := make([]atomic.Int64, count) // UnixNano of each request's write
	lat := make([]float64, count)
	slots := make(chan struct{}, n)
	var wg sync.WaitGroup
	wg.Go(func() { // the reader: one answer line per request, in any order
		for range count {
			line, err := p.out.ReadString('\n')
			now := time.Now().UnixNano()
			if err != nil {
				benchproc.Fatal(fmt.Errorf("reading an answer: %v", err))
			}
			i, ok := answerID(line)
			if !ok || i < base || i >= base+count || strings.Contains(line, `"error":{`) {
				benchproc.Fatal(fmt.Errorf("unexpected answer: %.300s", line))
			}
			lat[i-base] = float64(now-sent[i-base].Load()) / 1e6
			<-slots
		}
	})
	w := bufio.NewWriter(p.in)
	for i := range count {
		slots <- struct{}{}
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"context://knowledge/k%d"}}`+"\n",
			base+i, (first+i)%entries)
		sent[i].Store(time.Now().UnixNano())
		if _, err := w.WriteString(req); err != nil {
			benchproc.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			benchproc.Fatal(err)
		}
	}
	wg.Wait()
	return lat
}

// answerID is the numeric id of an answer line.
func answerID(line string) (int, bool) {
	_, rest, ok := strings.Cut(line, `"id":`)
	if !ok {
		return 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return 0, false
	}
	id, err := strconv.Atoi(rest[:end])
	return id, err == nil
}

// procCPU is the user and system time of process pid (its own, not its children's), from /proc/pid/stat.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		benchproc.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / hz
}
