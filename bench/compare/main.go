// Command compare times whole ctx processes against the C git command that does the same work, on
// stores generated at several sizes, and prints medians and ratios (bench/README.md "bench/compare").
//
// Each row runs its two commands alternately (A, B, A, B, ...) after a warm-up of each, so that a
// change of the machine's load hits both sides alike; the figures are medians of wall time, and the
// ratio is ctx's median over git's. Every repository is made with the git CLI under a temporary folder,
// with a hermetic git configuration, and removed at the end.
//
// With -base OTHER, a second ctx binary (the branch before a change) runs in the same alternation
// (base, ctx, git, base, ctx, git, ...), so that a before/after comparison shares the machine's load;
// its medians and its CPU ratio to git are printed too.
//
// -benchfmt adds, after the table, each row's medians as a line of the Go benchmark format
// (BenchmarkCompare/entries=N/commits=C/row=ROW RUNS ctx-ms ctx-cpu-ms git-ms git-cpu-ms [base-ms
// base-cpu-ms]), which bench/summary reads.
//
// usage: go run ./bench/compare -ctx bin/ctx [-base OLD] [-sizes 100,10000] [-runs 15] [-commits 5000] [-benchfmt]
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
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/bench/internal/benchproc"
)

func main() {
	benchproc.Prog = "compare"
	ctxBin := flag.String("ctx", "bin/ctx", "the ctx binary to measure")
	sizes := flag.String("sizes", "100,10000", "store sizes (knowledge entries), comma-separated")
	runs := flag.Int("runs", 15, "timed runs of each side of a row (after 2 warm-up runs each)")
	commits := flag.Int("commits", 5000, "commits of history on the context branch (one entry changed each)")
	only := flag.String("only", "", "measure only the rows whose name contains one of these (comma-separated)")
	baseBin := flag.String("base", "", "a second ctx binary measured in the same alternation (before a change)")
	keep := flag.Bool("keep", false, "keep the generated stores (for profiling) and print where they are")
	benchfmt := flag.Bool("benchfmt", false, "also print each row as a line of the Go benchmark format (for bench/summary)")
	flag.Parse()

	bin, err := filepath.Abs(*ctxBin)
	if err != nil {
		fatal(err)
	}
	base := ""
	if *baseBin != "" {
		if base, err = filepath.Abs(*baseBin); err != nil {
			fatal(err)
		}
	}
	tmp, err := os.MkdirTemp("", "ctx-compare.")
	if err != nil {
		fatal(err)
	}
	if *keep {
		fmt.Printf("stores kept under %s\n", tmp)
	} else {
		defer func() { _ = os.RemoveAll(tmp) }()
	}
	hermetic(tmp)
	// The hooks' shim runs `ctx` from PATH: this binary, whatever its file is called, with the ctx-full
	// beside it linked beside the link, as make install puts the pair (the shim starts that ctx-full).
	binDir := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		fatal(err)
	}
	linkPair(bin, binDir)
	_ = os.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))

	gitVersion, _ := exec.Command("git", "--version").Output()
	fmt.Printf("machine: %d CPUs, %s/%s, %s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		runtime.Version(), gitVersion)
	fmt.Printf("load average at start: %s\n", loadavg())
	fmt.Printf("%d runs per side, alternating; medians of wall time (ms); cpu = user+sys of the children (ms);\n", *runs)
	fmt.Printf("ctx/git = ratio of the wall medians, cpu x = ratio of the cpu medians (steadier on a loaded machine)\n\n")
	if base != "" {
		fmt.Printf("base = %s, measured in the same alternation; base x = base cpu / git cpu\n\n", base)
		fmt.Printf("%-8s %-10s %10s %10s %10s %10s %10s %10s %8s %8s %8s\n", "entries", "row", "base ms", "base cpu",
			"ctx ms", "ctx cpu", "git ms", "git cpu", "ctx/git", "cpu x", "base x")
	} else {
		fmt.Printf("%-8s %-10s %10s %10s %10s %10s %8s %8s\n", "entries", "row", "ctx ms", "ctx cpu", "git ms", "git cpu", "ctx/git", "cpu x")
	}

	var results []func() // -benchfmt's lines, printed after the table
	for _, s := range strings.Split(*sizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || size < 1 {
			fatal(fmt.Errorf("bad size %q", s))
		}
		b := &bench{ctx: bin, newCtx: bin, base: base, tmp: tmp, size: size, runs: *runs}
		b.prepare(*commits)
		for _, r := range b.rows() {
			if !selected(r.name, *only) {
				continue
			}
			a, g, o := b.measure(r)
			if *benchfmt {
				m := []benchproc.Metric{{Value: a.wall, Unit: "ctx-ms"}, {Value: a.cpu, Unit: "ctx-cpu-ms"},
					{Value: g.wall, Unit: "git-ms"}, {Value: g.cpu, Unit: "git-cpu-ms"}}
				if base != "" {
					m = append(m, benchproc.Metric{Value: o.wall, Unit: "base-ms"}, benchproc.Metric{Value: o.cpu, Unit: "base-cpu-ms"})
				}
				name := fmt.Sprintf("Compare/entries=%d/commits=%d/row=%s", size, *commits, r.name)
				results = append(results, func() { benchproc.Result(name, *runs, m...) })
			}
			if base != "" {
				fmt.Printf("%-8d %-10s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %8.2f %8.2f %8.2f\n", size, r.name,
					o.wall, o.cpu, a.wall, a.cpu, g.wall, g.cpu, a.wall/g.wall, a.cpu/g.cpu, o.cpu/g.cpu)
				continue
			}
			fmt.Printf("%-8d %-10s %10.1f %10.1f %10.1f %10.1f %8.2f %8.2f\n", size, r.name,
				a.wall, a.cpu, g.wall, g.cpu, a.wall/g.wall, a.cpu/g.cpu)
		}
		if !*keep {
			_ = os.RemoveAll(b.dir)
			_ = os.RemoveAll(b.gitDir)
			_ = os.RemoveAll(b.wt)
		}
	}
	fmt.Printf("\nload average at end: %s\n", loadavg())
	for _, r := range results {
		r()
	}
}

type bench struct {
	ctx, tmp string // ctx: the binary the rows run now (newCtx or base)
	newCtx   string // the binary measured (-ctx)
	base     string // the binary compared with it (-base), or ""
	size     int
	runs     int
	dir      string            // the repository ctx works in
	gitDir   string            // a copy of it for the C git writes
	wt       string            // a work tree of the context branch, for git status
	n        int               // writes made so far (distinct keys per write)
	onOther  map[string]bool   // the checkout rows: which copies are on branch other
	ctxTip   map[string]string // the checkout-moved row: each copy's context tip before the first move
	hooksBy  string            // the binary whose `ctx hooks install` wrote the hooks of dir (its shim)
}

// checkout switches the repository in dir between main and other (one `git checkout` per call).
func (b *bench) checkout(dir string) (time.Duration, time.Duration) {
	if b.onOther == nil {
		b.onOther = map[string]bool{}
	}
	to := "other"
	if b.onOther[dir] {
		to = "main"
	}
	b.onOther[dir] = !b.onOther[dir]
	// The shim runs the ctx of PATH: point it at the binary this run measures (-base alternates two).
	if cur, err := os.Readlink(filepath.Join(b.tmp, "bin", "ctx")); err != nil || cur != b.ctx {
		linkPair(b.ctx, filepath.Join(b.tmp, "bin"))
	}
	// Each binary runs under the shim it installs (untimed; install rewrites ctx's block in place).
	if dir == b.dir && b.hooksBy != b.ctx {
		run(b.dir, nil, b.ctx, "hooks", "install")
		b.hooksBy = b.ctx
	}
	return proc(dir, "", "git", "checkout", "-q", to)
}

// linkPair makes binDir/ctx a link to ctx and, when a ctx-full sits beside ctx (the pair of make build),
// binDir/ctx-full a link to it; otherwise no ctx-full is left in binDir.
func linkPair(ctx, binDir string) {
	for _, name := range []string{"ctx", "ctx-full"} {
		link := filepath.Join(binDir, name)
		_ = os.Remove(link)
		target := ctx
		if name == "ctx-full" {
			real, err := filepath.EvalSymlinks(ctx)
			if err != nil {
				fatal(err)
			}
			target = filepath.Join(filepath.Dir(real), "ctx-full")
			if _, err := os.Stat(target); err != nil {
				continue
			}
		}
		if err := os.Symlink(target, link); err != nil {
			fatal(err)
		}
	}
}

// moveCtx moves refs/heads/ctx in dir to its first parent, or back to the tip it came from (untimed), as
// a teammate's commit fetched by git would: the next checkout's hook has a one-entry refresh to make.
func (b *bench) moveCtx(dir string) {
	if b.ctxTip == nil {
		b.ctxTip = map[string]string{}
	}
	tip, ok := b.ctxTip[dir]
	if !ok {
		tip = run(dir, nil, "git", "rev-parse", "refs/heads/ctx")
		b.ctxTip[dir] = tip
	}
	to := tip
	if run(dir, nil, "git", "rev-parse", "refs/heads/ctx") == tip {
		to = run(dir, nil, "git", "rev-parse", tip+"~1")
	}
	run(dir, nil, "git", "update-ref", "refs/heads/ctx", to)
}

func entry(text string) string {
	return "---\nauthor: Bench <bench@example.com>\nagent: cli\nupdated_at: \"2026-01-01T00:00:00Z\"\n" +
		"provenance: owner_instruction\nscope: public\n---\n" + text
}

// prepare makes the store: ctx init, then with git fast-import one commit adding knowledge/k0..k<size-1>
// and `commits` commits that each change one entry (ctx's message shape), one untimed ctx write (which
// fills .context/), git gc, a copy for the C git writes and a work tree of the context branch.
func (b *bench) prepare(commits int) {
	b.dir = filepath.Join(b.tmp, fmt.Sprintf("store-%d", b.size))
	run(b.tmp, nil, "git", "init", "-q", "-b", "main", b.dir)
	run(b.dir, nil, "git", "commit", "-q", "--allow-empty", "-m", "initial commit")
	run(b.dir, nil, b.ctx, "init", "--no-hooks")

	var fi bytes.Buffer
	w := bufio.NewWriter(&fi)
	when := int64(1767225600)
	fmt.Fprintf(w, "commit refs/heads/ctx\ncommitter Bench <bench@example.com> %d +0000\n", when)
	msg := fmt.Sprintf("prefill %d entries\n", b.size)
	fmt.Fprintf(w, "data %d\n%s\nfrom %s\n", len(msg), msg, run(b.dir, nil, "git", "rev-parse", "refs/heads/ctx"))
	for i := 0; i < b.size; i++ {
		e := entry(fmt.Sprintf("entry %d", i))
		fmt.Fprintf(w, "M 100644 inline knowledge/k%d.md\ndata %d\n%s\n", i, len(e), e)
	}
	for c := 0; c < commits; c++ {
		k := c % b.size
		if c%20 == 0 {
			k = 0 // k0 is the hot entry: commits/20 revisions, for the log-path row
		}
		when++
		msg := fmt.Sprintf("ctx: set knowledge k%d\n\nCtx-Op: knowledge.set\nCtx-Key: k%d\nCtx-Agent: cli\n", k, k)
		fmt.Fprintf(w, "commit refs/heads/ctx\ncommitter Bench <bench@example.com> %d +0000\n", when)
		fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
		e := entry(fmt.Sprintf("entry %d revision %d", k, c))
		fmt.Fprintf(w, "M 100644 inline knowledge/k%d.md\ndata %d\n%s\n", k, len(e), e)
	}
	if err := w.Flush(); err != nil {
		fatal(err)
	}
	run(b.dir, &fi, "git", "fast-import", "--quiet")
	run(b.dir, nil, b.ctx, "knowledge", "set", "warmup", "warm up")
	run(b.dir, nil, "git", "gc", "-q")

	b.gitDir = b.dir + "-git"
	run(b.tmp, nil, "cp", "-a", b.dir, b.gitDir)
	// The checkout rows: branch other (at main's commit) in both copies, and ctx's hooks in the ctx one
	// (the shim finds ctx on PATH, see main).
	for _, d := range []string{b.dir, b.gitDir} {
		run(d, nil, "git", "branch", "other")
	}
	run(b.dir, nil, b.ctx, "hooks", "install")
	b.hooksBy = b.ctx
	b.wt = b.dir + "-wt"
	run(b.dir, nil, "git", "worktree", "add", "-q", "--detach", b.wt, "refs/heads/ctx")
	run(b.wt, nil, "git", "status", "--porcelain")
}

type row struct {
	name     string
	ctx, git func() (wall, cpu time.Duration)
}

type result struct{ wall, cpu float64 } // milliseconds

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"

// mcpInit starts `ctx mcp serve`, sends initialize and times until the answer's line arrives; then it
// closes the server's input and waits for it to exit (not timed).
func (b *bench) mcpInit() (time.Duration, time.Duration) {
	cmd := exec.Command(b.ctx, "mcp", "serve")
	cmd.Dir = b.dir
	in, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	cmd.Stderr = io.Discard
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	if _, err := io.WriteString(in, initialize); err != nil {
		fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	wall := time.Since(t0)
	if err != nil || !strings.Contains(line, `"id":1`) || !strings.Contains(line, `"result"`) {
		fatal(fmt.Errorf("mcp initialize: %q: %v", line, err))
	}
	_ = in.Close()
	_ = cmd.Wait()
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// gitWrite is the C git plumbing equivalent of one ctx write: read the tip, write the blob, load the tip
// into a temporary index, add the entry, write the tree (only the changed path is rewritten), write the
// commit with ctx's message shape and move the ref with compare-and-swap.
func (b *bench) gitWrite(key, text string) (time.Duration, time.Duration) {
	idx := filepath.Join(b.tmp, "cgit.index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	var cpu time.Duration
	step := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = b.gitDir, env, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			fatal(fmt.Errorf("git %s: %v", strings.Join(args, " "), err))
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return strings.TrimSpace(string(out))
	}
	t0 := time.Now()
	tip := step("", "rev-parse", "refs/heads/ctx")
	blob := step(entry(text), "hash-object", "-w", "--stdin")
	step("", "read-tree", tip)
	step("", "update-index", "--add", "--cacheinfo", "100644,"+blob+",knowledge/"+key+".md")
	tree := step("", "write-tree")
	msg := fmt.Sprintf("ctx: set knowledge %s\n\nCtx-Op: knowledge.set\nCtx-Key: %s\nCtx-Agent: cli\n", key, key)
	commit := step("", "commit-tree", "-p", tip, "-m", msg, tree)
	step("", "update-ref", "-m", "ctx: set knowledge "+key, "refs/heads/ctx", commit, tip)
	return time.Since(t0), cpu
}

func (b *bench) rows() []row {
	key := fmt.Sprintf("k%d", b.size/2)
	return []row{
		{"get",
			func() (time.Duration, time.Duration) { return proc(b.dir, "", b.ctx, "knowledge", "get", key) },
			func() (time.Duration, time.Duration) {
				return proc(b.dir, "", "git", "show", "ctx:knowledge/"+key+".md")
			}},
		{"set",
			func() (time.Duration, time.Duration) {
				b.n++
				return proc(b.dir, "", b.ctx, "knowledge", "set", fmt.Sprintf("k%d", b.n%b.size), fmt.Sprintf("text %d", b.n))
			},
			func() (time.Duration, time.Duration) {
				return b.gitWrite(fmt.Sprintf("k%d", b.n%b.size), fmt.Sprintf("text %d", b.n))
			}},
		{"status",
			func() (time.Duration, time.Duration) { return proc(b.dir, "", b.ctx, "status") },
			func() (time.Duration, time.Duration) { return proc(b.wt, "", "git", "status", "--porcelain") }},
		// The first status after a write (untimed: ctx knowledge set; git: a file changed and git add in the
		// work tree of the context branch, which rewrites git's index).
		{"status-after-write",
			func() (time.Duration, time.Duration) {
				b.n++
				run(b.dir, nil, b.ctx, "knowledge", "set", fmt.Sprintf("k%d", b.n%b.size), fmt.Sprintf("text %d", b.n))
				return proc(b.dir, "", b.ctx, "status")
			},
			func() (time.Duration, time.Duration) {
				b.n++
				f := fmt.Sprintf("knowledge/k%d.md", b.n%b.size)
				if err := os.WriteFile(filepath.Join(b.wt, f), []byte(entry(fmt.Sprintf("text %d", b.n))), 0o644); err != nil {
					fatal(err)
				}
				run(b.wt, nil, "git", "add", f)
				return proc(b.wt, "", "git", "status", "--porcelain")
			}},
		{"log-n20",
			func() (time.Duration, time.Duration) { return proc(b.dir, "", b.ctx, "log", "-n", "20") },
			func() (time.Duration, time.Duration) { return proc(b.dir, "", "git", "log", "-n", "20", "ctx") }},
		{"log-path",
			func() (time.Duration, time.Duration) { return proc(b.dir, "", b.ctx, "log", "knowledge/k0.md") },
			func() (time.Duration, time.Duration) {
				return proc(b.dir, "", "git", "log", "ctx", "--", "knowledge/k0.md")
			}},
		{"mcp-init",
			b.mcpInit,
			func() (time.Duration, time.Duration) { return proc(b.dir, "", "git", "rev-parse", "HEAD") }},
		// git checkout with ctx's hooks (ctx side) and without (git side); nothing moved the context refs.
		{"checkout",
			func() (time.Duration, time.Duration) { return b.checkout(b.dir) },
			func() (time.Duration, time.Duration) { return b.checkout(b.gitDir) }},
		// The same after git moved refs/heads/ctx (untimed): the hook refreshes one entry of .context/.
		{"checkout-moved",
			func() (time.Duration, time.Duration) { b.moveCtx(b.dir); return b.checkout(b.dir) },
			func() (time.Duration, time.Duration) { b.moveCtx(b.gitDir); return b.checkout(b.gitDir) }},
	}
}

// measure runs two warm-up runs of each side, then b.runs alternating pairs, and returns the medians.
func (b *bench) measure(r row) (ctx, git, base result) {
	runBase := func() (time.Duration, time.Duration) {
		b.ctx = b.base
		defer func() { b.ctx = b.newCtx }()
		return r.ctx()
	}
	for i := 0; i < 2; i++ {
		if b.base != "" {
			runBase()
		}
		r.ctx()
		r.git()
	}
	var bw, bc, cw, cc, gw, gc []float64
	for i := 0; i < b.runs; i++ {
		if b.base != "" {
			w, c := runBase()
			bw, bc = append(bw, ms(w)), append(bc, ms(c))
		}
		w, c := r.ctx()
		cw, cc = append(cw, ms(w)), append(cc, ms(c))
		w, c = r.git()
		gw, gc = append(gw, ms(w)), append(gc, ms(c))
	}
	if b.base != "" {
		base = result{median(bw), median(bc)}
	}
	return result{median(cw), median(cc)}, result{median(gw), median(gc)}, base
}

// The helpers shared with the other process benchmarks (bench/internal/benchproc).
var (
	fatal    = benchproc.Fatal
	loadavg  = benchproc.LoadAvg
	hermetic = benchproc.Hermetic
	run      = benchproc.Run
	proc     = benchproc.Proc
	ms       = benchproc.Ms
	median   = benchproc.Median
)

// selected reports whether row name is measured under -only: empty selects every row, else name contains
// one of its comma-separated parts.
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, part := range strings.Split(only, ",") {
		if part = strings.TrimSpace(part); part != "" && strings.Contains(name, part) {
			return true
		}
	}
	return false
}
