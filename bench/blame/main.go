// Command blame measures whole `ctx blame FILE --json` processes against C git's `git blame --porcelain`
// of the same file (docs/blame.md; issue target: within 1.5× of git). It builds a throw-away repository
// whose big.go has 2,000 lines changed by 300 commits (git fast-import), imports the agent-history corpus
// into an index when one is given (so each commit is looked up among real sessions), then runs the two
// sides alternately and prints the medians of wall and CPU (user+sys) time and the load average.
//
//	go build -o bin/ctx ./cmd/ctx && go run ./bench/blame -ctx bin/ctx [-runs 21] [-corpus DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/bench/internal/benchproc"
)

func main() {
	benchproc.Prog = "blame bench"
	ctxBin := flag.String("ctx", "bin/ctx", "the ctx binary to measure")
	runs := flag.Int("runs", 21, "timed runs of each side (after 2 warm-up runs each), alternating")
	lines := flag.Int("lines", 2000, "lines of big.go")
	commits := flag.Int("commits", 300, "commits that change big.go")
	corpus := flag.String("corpus", "", "an agent-history corpus folder (one sub-folder per provider) to import into ctx's index first")
	flag.Parse()

	bin, err := filepath.Abs(*ctxBin)
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "ctx-blame-bench.")
	if err != nil {
		fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	hermetic(tmp)
	repo := filepath.Join(tmp, "repo")
	index := filepath.Join(tmp, "index")
	run("", nil, "git", "init", "-q", "-b", "main", repo)
	run(repo, strings.NewReader(history(*lines, *commits)), "git", "fast-import", "--quiet")
	run(repo, nil, "git", "reset", "-q", "--hard", "main")
	if *corpus != "" {
		for _, p := range []string{"claude-code", "codex", "gemini-cli", "opencode", "cursor", "copilot-cli"} {
			if fi, err := os.Stat(filepath.Join(*corpus, p)); err == nil && fi.IsDir() {
				run(repo, nil, bin, "history", "import", "--provider", p, "--path", filepath.Join(*corpus, p), "--index", index)
			}
		}
	}

	gitVersion, _ := exec.Command("git", "--version").Output()
	fmt.Printf("machine: %d CPUs, %s/%s, %s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), gitVersion)
	fmt.Printf("big.go: %d lines, %d commits; corpus: %q\n", *lines, *commits, *corpus)
	fmt.Printf("load average at start: %s\n", loadavg())
	type side struct {
		name string
		args []string
	}
	ctxSide := side{"ctx blame big.go --json --no-import", []string{bin, "blame", "big.go", "--json", "--no-import", "--index", index}}
	gitSide := side{"git blame --porcelain HEAD -- big.go", []string{"git", "blame", "--porcelain", "HEAD", "--", "big.go"}}
	for i := 0; i < 2; i++ {
		proc(repo, ctxSide.args)
		proc(repo, gitSide.args)
	}
	var cw, cc, gw, gc []float64
	for i := 0; i < *runs; i++ {
		w, c := proc(repo, ctxSide.args)
		cw, cc = append(cw, ms(w)), append(cc, ms(c))
		w, c = proc(repo, gitSide.args)
		gw, gc = append(gw, ms(w)), append(gc, ms(c))
	}
	fmt.Printf("%d runs per side, alternating; medians (ms); cpu = user+sys of the process and its children\n", *runs)
	fmt.Printf("%-40s %10s %10s\n", "", "wall ms", "cpu ms")
	fmt.Printf("%-40s %10.1f %10.1f\n", ctxSide.name, median(cw), median(cc))
	fmt.Printf("%-40s %10.1f %10.1f\n", gitSide.name, median(gw), median(gc))
	fmt.Printf("%-40s %10.2f %10.2f\n", "ratio ctx/git", median(cw)/median(gw), median(cc)/median(gc))
	fmt.Printf("load average at end: %s\n", loadavg())
}

// history is a fast-import stream: commit 0 writes big.go, each later commit changes 7 of its lines.
func history(n, commits int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tvalue%d := compute(%d) // first version", i, i)
	}
	var b strings.Builder
	for c := 0; c < commits; c++ {
		if c > 0 {
			for k := 0; k < 7; k++ {
				i := (c*37 + k*281) % n
				lines[i] = fmt.Sprintf("\tvalue%d := compute(%d) // changed by commit %d", i, i, c)
			}
		}
		body := strings.Join(lines, "\n") + "\n"
		msg := fmt.Sprintf("commit %d\n", c)
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s", 1700000000+c*60, len(msg), msg)
		fmt.Fprintf(&b, "M 100644 inline big.go\ndata %d\n%s\n", len(body), body)
	}
	return b.String()
}

// The helpers shared with the other process benchmarks (bench/internal/benchproc).
var (
	fatal    = benchproc.Fatal
	loadavg  = benchproc.LoadAvg
	hermetic = benchproc.Hermetic
	run      = benchproc.Run
	ms       = benchproc.Ms
	median   = benchproc.Median
)

// proc runs argv in dir (benchproc.Proc) and returns its wall and CPU time.
func proc(dir string, argv []string) (time.Duration, time.Duration) {
	return benchproc.Proc(dir, "", argv[0], argv[1:]...)
}
