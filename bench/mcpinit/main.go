// Command mcpinit measures the start of `ctx mcp serve` as a client sees it: the process is spawned, sent
// initialize, and at the moment the answer's line is read the wall time since the spawn and the CPU time
// of all the server's threads so far (the first field of /proc/<pid>/task/*/schedstat, in nanoseconds:
// unlike the process's rusage it is available while the server runs, and not rounded to 10 ms ticks)
// are taken; then notifications/initialized and tools/list are sent and the same is taken at the tools/list
// answer, whose bytes are hashed (the tool list must be the same for every binary). Binaries alternate run
// by run, on one store of -entries knowledge entries (built with the first binary); 2 warm-up runs each;
// medians.
//
// usage: go run ./bench/mcpinit [-entries 100] [-runs 21] BIN...
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/bench/internal/benchproc"
)

const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	list = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
)

func main() {
	benchproc.Prog = "mcpinit"
	entries := flag.Int("entries", 100, "knowledge entries in the store")
	runs := flag.Int("runs", 21, "timed runs per binary (after 2 warm-up runs each)")
	flag.Parse()
	bins := flag.Args()
	if len(bins) == 0 {
		benchproc.Fatal(errors.New("usage: mcpinit [-entries N] [-runs N] BIN [BIN ...]"))
	}
	for i, b := range bins {
		a, err := filepath.Abs(b)
		if err != nil {
			benchproc.Fatal(err)
		}
		bins[i] = a
	}
	tmp, err := os.MkdirTemp("", "ctx-mcpinit.")
	if err != nil {
		benchproc.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	benchproc.Hermetic(tmp)
	dir := filepath.Join(tmp, "repo")
	benchproc.Run(tmp, nil, "git", "init", "-q", "-b", "main", dir)
	benchproc.Run(dir, nil, "git", "commit", "-q", "--allow-empty", "-m", "initial commit")
	benchproc.Run(dir, nil, bins[0], "init", "--no-hooks")
	var fi bytes.Buffer
	fmt.Fprintf(&fi, "commit refs/heads/ctx\ncommitter Bench <bench@example.com> 1767225600 +0000\ndata 8\nprefill\n\nfrom %s\n",
		benchproc.Run(dir, nil, "git", "rev-parse", "refs/heads/ctx"))
	for i := range *entries {
		e := "---\nauthor: Bench <bench@example.com>\nagent: cli\nupdated_at: \"2026-01-01T00:00:00Z\"\n" +
			"provenance: owner_instruction\nscope: public\n---\n" + fmt.Sprintf("entry %d", i)
		fmt.Fprintf(&fi, "M 100644 inline knowledge/k%d.md\ndata %d\n%s\n", i, len(e), e)
	}
	benchproc.Run(dir, &fi, "git", "fast-import", "--quiet")
	benchproc.Run(dir, nil, bins[0], "knowledge", "set", "warmup", "warm up")
	benchproc.Run(dir, nil, "git", "gc", "-q")

	fmt.Printf("load average at start: %s\n", benchproc.LoadAvg())
	type acc struct {
		w1, c1, w2, c2 []float64
		sums           map[string]int
	}
	a := make([]acc, len(bins))
	for i := range a {
		a[i].sums = map[string]int{}
	}
	for r := range *runs + 2 {
		for i, b := range bins {
			w1, c1, w2, c2, sum := one(b, dir)
			if r < 2 {
				continue
			}
			a[i].w1, a[i].c1 = append(a[i].w1, w1), append(a[i].c1, c1)
			a[i].w2, a[i].c2 = append(a[i].w2, w2), append(a[i].c2, c2)
			a[i].sums[sum]++
		}
	}
	fmt.Printf("load average at end: %s\n\n%d runs per binary, %d entries, medians\n", benchproc.LoadAvg(), *runs, *entries)
	fmt.Println("| binary | initialize answer: wall ms | server CPU ms | tools/list answer: wall ms | server CPU ms | tools/list sha256 (runs) |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | --- |")
	for i, b := range bins {
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %.1f | %v |\n", b, benchproc.Median(a[i].w1), benchproc.Median(a[i].c1),
			benchproc.Median(a[i].w2), benchproc.Median(a[i].c2), a[i].sums)
	}
}

// one is one start of bin in dir: wall and server CPU (ms) at the initialize answer and at the tools/list
// answer, and the tools/list answer's hash.
func one(bin, dir string) (w1, c1, w2, c2 float64, sum string) {
	cmd := exec.Command(bin, "mcp", "serve")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		benchproc.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		benchproc.Fatal(err)
	}
	cmd.Stderr = io.Discard
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		benchproc.Fatal(err)
	}
	r := bufio.NewReaderSize(out, 1<<20)
	ask := func(req, id string) (float64, float64, string) {
		if _, err := io.WriteString(in, req); err != nil {
			benchproc.Fatal(err)
		}
		l, err := r.ReadString('\n')
		w := benchproc.Ms(time.Since(t0))
		c := float64(cpuNS(cmd.Process.Pid)) / 1e6
		if err != nil || !strings.Contains(l, `"id":`+id) || !strings.Contains(l, `"result"`) {
			benchproc.Fatal(fmt.Errorf("%s: answer %s: %q %v", bin, id, l, err))
		}
		return w, c, l
	}
	w1, c1, _ = ask(initialize, "1")
	w2, c2, l := ask(list, "2")
	_ = in.Close()
	_ = cmd.Wait()
	return w1, c1, w2, c2, fmt.Sprintf("%x", sha256.Sum256([]byte(l)))[:12]
}

// cpuNS is the CPU time of every thread of process pid so far, in nanoseconds (schedstat's first field).
func cpuNS(pid int) int64 {
	ds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var t int64
	for _, d := range ds {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			t += n
		}
	}
	return t
}
