package main_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/cmd/ctx/app"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

// ctxBin is the ctx binary built once by TestMain: end-to-end tests run the real binary.
var ctxBin string

// scriptPath is the PATH of the test scripts: testscript's folder, where "ctx" runs app.Main in this
// test binary, first.
var scriptPath string

// TestMain is both the test binary and, called as "ctx" from a test script, ctx itself (testscript.Main
// runs app.Main in-process then, with the script's arguments and streams).
func TestMain(m *testing.M) {
	testscript.Main(withCtxBin{m}, map[string]func(){"ctx": func() { os.Exit(app.Main()) }, "maxrss": maxrssMain, "ctx-fault": faultMain})
}

// withCtxBin runs the tests with the ctx binary built (the end-to-end tests other than the scripts run
// it) and a hermetic git configuration.
type withCtxBin struct{ m *testing.M }

func (w withCtxBin) Run() int {
	cleanup, err := testenv.Hermetic()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer cleanup()
	scriptPath = os.Getenv("PATH")
	dir, err := os.MkdirTemp("", "ctx-bin-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctxBin = filepath.Join(dir, "ctx")
	// The tags of make build (urfave_cli_no_docs): the binary that ships, and the build cmd/ctx-front's
	// and cmd/ctx-search's tests make of ctx-full, so the three share the compiled packages.
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", ctxBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ctx:", err)
		return 1
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return w.m.Run()
}

// run runs the ctx binary in dir and returns stdout; the test fails when the exit code is not want.
func run(t testing.TB, dir string, want int, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCode(dir, "", args...)
	if code != want {
		t.Fatalf("ctx %s (in %s): exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), dir, code, want, stdout, stderr)
	}
	return stdout
}

func runCode(dir, stdin string, args ...string) (string, string, int) {
	cmd := exec.Command(ctxBin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return out.String(), errb.String(), code
}

func corpus(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("../../testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEndToEnd is the path: a bare remote, clones A and B; A inits, imports part of the corpus,
// pushes; B clones and pulls; A and B write different entries; both push; both end with the same tip and
// every entry; git fsck --strict is clean in all three; no write touches HEAD, the index or the files.
func TestEndToEnd(t *testing.T) {
	remote := testenv.BareRemote(t)
	seed := testenv.Clone(t, remote, "seed")
	if err := os.WriteFile(filepath.Join(seed, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, seed, "add", ".")
	testenv.Git(t, seed, "commit", "-qm", "code")
	testenv.Git(t, seed, "push", "-q", "origin", "main")

	a := testenv.Clone(t, remote, "a")
	snap := testenv.Take(t, a)
	run(t, a, 0, "init", "--no-hooks")
	run(t, a, 0, "import", filepath.Join(corpus(t), "adr"), filepath.Join(corpus(t), "skills"), filepath.Join(corpus(t), "agents"))
	run(t, a, 0, "knowledge", "set", "architecture", "Hexagonal, one binary.")
	run(t, a, 0, "push")
	snap.Same(t, a)

	b := testenv.Clone(t, remote, "b")
	snapB := testenv.Take(t, b)
	run(t, b, 0, "pull")
	if got := run(t, b, 0, "knowledge", "get", "architecture"); got != "Hexagonal, one binary.\n" {
		t.Fatalf("B reads %q", got)
	}
	run(t, b, 0, "convention", "set", "git", "-f", filepath.Join(corpus(t), "conventions", "restic", "CONTRIBUTING.md"))
	run(t, a, 0, "decision", "add", "Use PostgreSQL", "--context", "ACID", "--decision", "PostgreSQL 16", "--consequences", "ops", "--status", "accepted")
	run(t, b, 0, "push")
	run(t, a, 0, "sync") // the remote moved: A merges B's push and publishes the merge (docs/sync.md)
	run(t, b, 0, "pull")
	snapB.Same(t, b)
	snap.Same(t, a)

	tipA := testenv.Git(t, a, "rev-parse", "ctx")
	tipB := testenv.Git(t, b, "rev-parse", "ctx")
	tipR := testenv.Git(t, remote, "rev-parse", "ctx")
	if tipA != tipB || tipA != tipR {
		t.Fatalf("tips differ: A %s B %s remote %s", tipA, tipB, tipR)
	}
	for _, dir := range []string{a, b} {
		list := run(t, dir, 0, "knowledge", "list", "--json")
		for _, want := range []string{`"architecture"`, `"superpowers-claude"`} {
			if !strings.Contains(list, want) && !strings.Contains(list, strings.Trim(want, `"`)) {
				t.Errorf("%s: knowledge list lacks %s:\n%s", dir, want, list)
			}
		}
		if got := run(t, dir, 0, "convention", "get", "git"); !strings.Contains(got, "restic") {
			t.Errorf("%s: convention git lost its content", dir)
		}
		if got := run(t, dir, 0, "decision", "get", "Use PostgreSQL", "--json"); !strings.Contains(got, `"status": "accepted"`) {
			t.Errorf("%s: decision: %s", dir, got)
		}
	}
	for _, dir := range []string{a, b, remote} {
		testenv.Git(t, dir, "fsck", "--strict", "--no-dangling")
	}
	// The merge commit has two parents and the merge trailers.
	msg := testenv.Git(t, a, "log", "-1", "--format=%P%n%B", "--merges", "ctx")
	if !strings.Contains(msg, "Ctx-Op: merge") || len(strings.Fields(strings.SplitN(msg, "\n", 2)[0])) != 2 {
		t.Errorf("merge commit: %s", msg)
	}
	// The user's branches never moved.
	if got := testenv.Git(t, remote, "rev-parse", "main"); got != testenv.Git(t, a, "rev-parse", "main") {
		t.Errorf("main moved")
	}
}

// TestConcurrentProcesses runs 8 processes × 25 writes at once; all 200 land as 200 commits and 200
// entries while C git reads the ref in a loop and never fails (docs/architecture.md "Commits").
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	repo := testenv.NewRepo(t)
	run(t, repo, 0, "init", "--no-hooks")
	const procs, writes = 8, 25
	var stop atomic.Bool
	var reads, readFailures atomic.Int64
	var readerDone sync.WaitGroup
	readerDone.Add(1)
	go func() {
		defer readerDone.Done()
		for !stop.Load() {
			if _, err := testenv.GitErr(repo, "rev-parse", "--verify", "-q", "refs/heads/ctx^{commit}"); err != nil {
				readFailures.Add(1)
				t.Errorf("C git failed to read the ref: %v", err)
			}
			reads.Add(1)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, procs*writes)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < writes; i++ {
				_, stderr, code := runCode(repo, "", "knowledge", "set", fmt.Sprintf("k-%d-%d", p, i), fmt.Sprintf("entry %d of process %d", i, p))
				if code != 0 {
					errs <- fmt.Errorf("process %d write %d: exit %d: %s", p, i, code, stderr)
				}
			}
		}(p)
	}
	wg.Wait()
	stop.Store(true)
	readerDone.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	count := testenv.Git(t, repo, "rev-list", "--count", "ctx")
	if count != fmt.Sprint(procs*writes+1) {
		t.Errorf("commits: %s, want %d (+1 init)", count, procs*writes)
	}
	files := strings.Fields(testenv.Git(t, repo, "ls-tree", "--name-only", "ctx", "knowledge/"))
	if len(files) != procs*writes {
		t.Errorf("entries: %d, want %d", len(files), procs*writes)
	}
	testenv.Git(t, repo, "fsck", "--strict", "--no-dangling")
	t.Logf("C git read the ref %d times during the writes (GOMAXPROCS %d), %d failures", reads.Load(), runtime.GOMAXPROCS(0), readFailures.Load())
	// The checked-out tree mirrors the tip after the last write.
	names, _ := os.ReadDir(filepath.Join(repo, ".context", "knowledge"))
	if len(names) != procs*writes {
		t.Errorf(".context/knowledge has %d files, want %d", len(names), procs*writes)
	}
	_ = time.Second
}

// TestGetOnTerminalEndsLine: `ctx knowledge get` prints the entry's body as its file holds it, the content
// and one newline (docs/format.md "Knowledge and conventions"), on a terminal (a real pty, made by
// util-linux script(1)) and in a pipe alike: the line is ended, and `get > f` then `set -f f` round-trips.
func TestGetOnTerminalEndsLine(t *testing.T) {
	scriptCmd, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no pty to test with")
	}
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	run(t, dir, 0, "knowledge", "set", "k", "hello")
	if got := run(t, dir, 0, "knowledge", "get", "k"); got != "hello\n" {
		t.Fatalf("get through a pipe = %q, want the stored body %q", got, "hello\n")
	}
	cmd := exec.Command(scriptCmd, "-qec", ctxBin+" knowledge get k", "/dev/null")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script: %v: %s", err, out)
	}
	if got := strings.ReplaceAll(string(out), "\r\n", "\n"); got != "hello\n" {
		t.Fatalf("get on a terminal = %q, want %q", got, "hello\n")
	}
}

// TestInterruptSaysSo: SIGINT during a push that hangs in the transport (core.sshCommand sleeps) ends ctx
// with exit 130 and "ctx: interrupted", not Go's "context canceled".
func TestInterruptSaysSo(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	testenv.Git(t, dir, "remote", "add", "origin", "ssh://git.example.invalid/team.git")
	testenv.Git(t, dir, "config", "core.sshCommand", "sleep 60; true")
	cmd := exec.Command(ctxBin, "push")
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("push after SIGINT: %v (stderr %q), want exit 130", err, errb.String())
	}
	if s := errb.String(); !strings.Contains(s, "ctx: interrupted") || strings.Contains(s, "context canceled") {
		t.Fatalf("stderr after SIGINT: %q", s)
	}
}
