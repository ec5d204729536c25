// Command blame measures whole `ctx blame FILE --json` processes against C git's `git blame --porcelain`
// of the same file (docs/blame.md; issue target: within 1.5× of git). It builds a throw-away repository
// whose big.go has 2,000 lines changed by 300 commits (git fast-import), imports the agent-history corpus
// into an index when one is given (so each commit is looked up among real sessions), then runs the two
// sides alternately and prints the medians of wall and CPU (user+sys) time and the load average.
//
//	go build -o bin/ctx ./cmd/ctx && go run ./bench/blame -ctx bin/ctx [-runs 21] [-corpus DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
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

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "blame bench:", err)
	os.Exit(1)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// hermetic makes git ignore the user's and the system's configuration and the agents' session variables.
func hermetic(tmp string) {
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		fatal(err)
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
		"GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
	} {
		_ = os.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "CTX_AGENT", "CTX_SESSION", "CODEX_THREAD_ID", "CLAUDE_CODE_SESSION_ID"} {
		_ = os.Unsetenv(k)
	}
}

func run(dir string, stdin io.Reader, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdin = dir, stdin
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		fatal(fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String()))
	}
}

// proc runs one process and returns its wall time and its CPU time (user+sys, children included: ctx's
// git processes count).
func proc(dir string, argv []string) (time.Duration, time.Duration) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		fatal(fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, errb.String()))
	}
	wall := time.Since(t0)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
