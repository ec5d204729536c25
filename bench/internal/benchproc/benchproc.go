// Package benchproc holds what the process benchmarks under bench/ share: a hermetic git environment,
// running and timing whole processes (wall and CPU time), medians and the load average. A failure stops
// the benchmark (Fatal): the drivers are programs, not libraries.
package benchproc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Prog names the benchmark in Fatal's message; each driver sets it first.
var Prog = "bench"

// Fatal prints err and exits with status 1.
func Fatal(err error) {
	fmt.Fprintln(os.Stderr, Prog+":", err)
	os.Exit(1)
}

// LoadAvg is the 1, 5 and 15 minute load averages of /proc/loadavg, or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Hermetic makes git ignore the user's and the system's configuration (HOME is tmp/home), gives it a
// fixed identity and removes the variables that would point git or ctx elsewhere (GIT_DIR, an agent's
// session id, ...), for this process and the processes it starts.
func Hermetic(tmp string) {
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		Fatal(err)
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

// Run runs name with args in dir (stdin may be nil) and returns its standard output, trimmed; a failure
// stops the benchmark.
func Run(dir string, stdin io.Reader, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdin = dir, stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		Fatal(fmt.Errorf("%s %s in %s: %v: %s", name, strings.Join(args, " "), dir, err, errb.String()))
	}
	return strings.TrimSpace(out.String())
}

// Proc runs one process in dir with stdin and returns its wall time and its CPU time (user+sys, its
// children included: ctx's git processes count); a failure stops the benchmark.
func Proc(dir, stdin, name string, args ...string) (wall, cpu time.Duration) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		Fatal(fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.String()))
	}
	return time.Since(t0), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Median is the median of xs (the mean of the two middle values for an even count).
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Metric is one value of a result line and its unit ("ms", "reads/s", "p99-ms"; no spaces).
type Metric struct {
	Value float64
	Unit  string
}

// Result prints one result line in the Go benchmark format, the one `go test -bench` prints and benchstat
// reads ("Benchmark" + name, the iterations n, then value-unit pairs; golang.org/x/perf's benchfmt):
// the machine-readable output of the drivers under -benchfmt, which bench/summary collects.
func Result(name string, n int, metrics ...Metric) {
	var b strings.Builder
	fmt.Fprintf(&b, "Benchmark%s %d", name, n)
	for _, m := range metrics {
		fmt.Fprintf(&b, " %s %s", strconv.FormatFloat(m.Value, 'g', 6, 64), m.Unit)
	}
	fmt.Println(b.String())
}
