package main_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/cmd/ctx/app"
	"github.com/ctx-dev/ctx/internal/faultpoint"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store/storetest"
)

// The crash tests kill a real ctx process with SIGKILL at a chosen moment of a write or a push and check
// what the next ctx process makes of what it left (docs/locks.md). The moment is chosen with the test
// binary run as its "ctx-fault" command (faultMain: ctx with a fault hook), which stops at the
// gitstore.FaultPoint named by $CTX_FAULT.

// faultMain is the test binary run as "ctx-fault": ctx (app.Main) with faultpoint.Hook set, which stops
// the process for good at the fault point $CTX_FAULT ("name" or "name:detail"), after creating the file
// $CTX_FAULT_READY (if set) so that the test knows where it stands and can kill it with SIGKILL. Without
// $CTX_FAULT it is ctx. The test binary, built with the race detector, serves as the fault binary: no
// build of ctx with a tag (which recompiled gitstore and every package above it in each test run).
func faultMain() {
	if want := os.Getenv("CTX_FAULT"); want != "" {
		ready := os.Getenv("CTX_FAULT_READY")
		faultpoint.Hook = func(name, detail string) {
			if want != name && want != name+":"+detail {
				return
			}
			if ready != "" {
				_ = os.WriteFile(ready, []byte(name+":"+detail+"\n"), 0o644)
			}
			for { // stopped here until killed
				time.Sleep(time.Hour)
			}
		}
	}
	os.Exit(app.Main())
}

// ctxFaultBin is the path of the fault binary: the test binary's "ctx-fault" command, which testscript.Main
// installs on the PATH of the test run.
func ctxFaultBin(t testing.TB) string {
	t.Helper()
	p, err := lookIn(scriptPath, "ctx-fault")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// faultEnv is the environment of the fault binary: the test's, extra, and GORACE's atexit_sleep_ms=0 (the
// race runtime would sleep a second at every exit waiting for race reports; a race still fails the
// process, exit 66).
func faultEnv(extra ...string) []string {
	return append(append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")), extra...)
}

// killAt runs ctx (the fault binary) in dir until it stops at fault point, then kills it with SIGKILL.
// It fails the test when the process ends before reaching the point.
func killAt(t testing.TB, dir, fault string, args ...string) {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(ctxFaultBin(t), args...)
	cmd.Dir = dir
	cmd.Env = faultEnv("CTX_FAULT="+fault, "CTX_FAULT_READY="+ready)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("ctx %s ended (%v) before reaching %s:\n%s", strings.Join(args, " "), err, fault, out.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("ctx %s never reached %s", strings.Join(args, " "), fault)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited //nolint:errcheck // a killed process: its error is the signal
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// noLocks fails when a ref lock, packed-refs.lock, a lock mark or an interrupted transaction is left in
// the repository's git dir (ctx's flock files, ctx/lock and ctx/checkout.lock, are permanent).
func noLocks(t testing.TB, dir string) {
	t.Helper()
	gitDir := filepath.Join(dir, ".git")
	_ = filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	for _, p := range []string{"packed-refs.lock", "ctx/transaction.json"} {
		if exists(filepath.Join(gitDir, p)) {
			t.Errorf("left behind: %s", p)
		}
	}
	for _, d := range []string{"ctx/reflocks", "ctx/owners"} {
		if es, _ := os.ReadDir(filepath.Join(gitDir, d)); len(es) > 0 {
			t.Errorf("left behind in %s: %d files", d, len(es))
		}
	}
}

// killGitAt runs ctx (the normal binary) in dir and kills it and its git child with SIGKILL while git holds
// the lock of ref (git's reference-transaction hook stops git there): a lock left by a killed git child of
// ctx, as the kill of a whole terminal session leaves it.
func killGitAt(t testing.TB, dir, ref string, args ...string) {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	hook := filepath.Join(dir, ".git", "hooks", "reference-transaction")
	// A ref ending in "/" names a folder: any ref below it (ctx pull fetches into quarantine refs below a
	// folder of a random name, refs/ctx/incoming/<random>/).
	pattern := " " + ref + "$"
	if strings.HasSuffix(ref, "/") {
		pattern = " " + ref
	}
	script := "#!/bin/sh\n[ \"$1\" = prepared ] || exit 0\nif grep -q '" + pattern + "'; then\n" +
		"  echo $PPID > " + ready + ".tmp && mv " + ready + ".tmp " + ready + "\n  sleep 600\nfi\nexit 0\n"
	writeFileT(t, hook, script)
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(hook)
	cmd := exec.Command(ctxBin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for !exists(ready) {
		select {
		case err := <-exited:
			t.Fatalf("ctx %s ended (%v) before git locked %s:\n%s", strings.Join(args, " "), err, ref, out.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("git never locked %s", ref)
		case <-time.After(5 * time.Millisecond):
		}
	}
	b, _ := os.ReadFile(ready)
	var gitPID int
	_, _ = fmt.Sscan(string(b), &gitPID) // unreadable: 0, and no process group to kill
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited //nolint:errcheck // a killed process: its error is the signal
	if gitPID > 0 {
		_ = syscall.Kill(-gitPID, syscall.SIGKILL) // git runs in a process group of its own
	}
	lock := filepath.Join(dir, ".git", filepath.FromSlash(ref)+".lock")
	for i := 0; i < 200 && !exists(lock); i++ {
		if strings.HasSuffix(ref, "/") {
			// Any lock below the folder (a quarantine ref is refs/ctx/incoming/<random>/shared).
			_ = filepath.WalkDir(filepath.Join(dir, ".git", filepath.FromSlash(ref)), func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".lock") {
					lock = p
				}
				return nil
			})
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !exists(lock) {
		t.Fatalf("setup: the killed git left no %s", lock)
	}
}

// TestKillDuringWrite: a ctx write killed between creating and renaming refs/heads/ctx.lock leaves the
// lock; ctx status says so, and the next write recovers it (it is ctx's own) instead of failing with "ref
// is locked".
func TestKillDuringWrite(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	run(t, dir, 0, "knowledge", "set", "a", "one")
	killAt(t, dir, "ref-locked:refs/heads/ctx", "knowledge", "set", "b", "two")
	lock := filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")
	if !exists(lock) {
		t.Fatalf("setup: the killed write left no %s", lock)
	}
	st := run(t, dir, 0, "status")
	if !strings.Contains(st, "locked:   refs/heads/ctx: "+lock) || !strings.Contains(st, "left by an interrupted ctx") {
		t.Errorf("ctx status does not show the lock:\n%s", st)
	}
	run(t, dir, 0, "knowledge", "set", "c", "three")
	noLocks(t, dir)
	if got := run(t, dir, 0, "knowledge", "get", "c"); got != "three\n" {
		t.Errorf("c = %q", got)
	}
	if _, _, code := runCode(dir, "", "knowledge", "get", "b"); code != 3 {
		t.Errorf("the killed write of b landed (exit %d): it was never acknowledged, but nothing may half-land", code)
	}
	if st := run(t, dir, 0, "status"); strings.Contains(st, "locked:") {
		t.Errorf("ctx status still shows a lock:\n%s", st)
	}
	// C git agrees: it can move the ref.
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", testenv.Git(t, dir, "rev-parse", "ctx"))
	fsck(t, dir)
}

// TestKillBeforeLockLink: a write killed after it created the mark of refs/heads/ctx.lock and before it
// linked the lock leaves only the mark (never an unmarked lock, which every later write would take for a
// foreign one and fail on after 2 s: found by make stress when ctx created the lock first and marked it
// next). The next write works and sweeps the mark.
func TestKillBeforeLockLink(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	killAt(t, dir, "ref-marked:refs/heads/ctx", "knowledge", "set", "b", "two")
	if lock := filepath.Join(dir, ".git", "refs", "heads", "ctx.lock"); exists(lock) {
		t.Fatalf("a kill before the link left %s", lock)
	}
	if es, _ := os.ReadDir(filepath.Join(dir, ".git", "ctx", "reflocks")); len(es) != 1 {
		t.Fatalf("setup: the killed write left %d marks, want its 1", len(es))
	}
	if st := run(t, dir, 0, "status"); strings.Contains(st, "locked:") {
		t.Errorf("ctx status shows a lock:\n%s", st)
	}
	start := time.Now()
	run(t, dir, 0, "knowledge", "set", "c", "three")
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Logf("the next write took %v (it must not wait for a lock)", d)
	}
	noLocks(t, dir)
	fsck(t, dir)
}

// TestKillDuringPush: a ctx push or pull killed while the remote-tracking ref is locked (by ctx itself, or
// by its git child) leaves that lock: the next push must not exit 0 doing nothing, status must not count
// commits the remote has, and pull must not fail on it. A lock that is not ctx's is reported with its age
// and the exact fix, and never removed.
func TestKillDuringPush(t *testing.T) {
	_, origin := seededRemote(t, "origin.git")
	a := cloneURL(t, origin, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v1")
	mustCtx(t, a, nil, 0, "push")
	lock := filepath.Join(a, ".git", "refs", "remotes", "origin", "ctx.lock")
	recovered := func(what string) {
		t.Helper()
		if st := mustCtx(t, a, nil, 0, "status").stdout; !strings.Contains(st, "locked:   refs/remotes/origin/ctx") ||
			!strings.Contains(st, "left by an interrupted ctx") {
			t.Errorf("%s: ctx status does not show the lock:\n%s", what, st)
		}
		mustCtx(t, a, nil, 0, "knowledge", "set", "k", what)
		tip := testenv.Git(t, a, "rev-parse", "refs/heads/ctx")
		r := mustCtx(t, a, nil, 0, "push")
		if got := testenv.Git(t, origin, "rev-parse", "refs/heads/ctx"); got != tip {
			t.Fatalf("%s: push exited 0 but the remote has %s, not %s\n%s", what, got, tip, r.stderr)
		}
		if got := testenv.Git(t, a, "rev-parse", "refs/remotes/origin/ctx"); got != tip {
			t.Errorf("%s: tracking ref %s, want %s", what, got, tip)
		}
		if st := mustCtx(t, a, nil, 0, "status").stdout; !strings.Contains(st, "0 ahead, 0 behind") || strings.Contains(st, "locked:") {
			t.Errorf("%s: status after the push:\n%s", what, st)
		}
		if out := mustCtx(t, a, nil, 0, "pull").stdout; !strings.Contains(out, "already up to date") {
			t.Errorf("%s: pull: %s", what, out)
		}
		noLocks(t, a)
	}

	// git push, killed with ctx while it records the pushed tip in refs/remotes/origin/ctx.
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v2")
	killGitAt(t, a, "refs/remotes/origin/ctx", "push")
	recovered("after a killed git push")

	// git fetch of ctx pull, killed the same way.
	b := cloneURL(t, origin, "b")
	mustCtx(t, b, nil, 0, "pull")
	mustCtx(t, b, nil, 0, "knowledge", "set", "from-b", "x")
	mustCtx(t, b, nil, 0, "push")
	killGitAt(t, a, "refs/ctx/incoming/", "pull")
	if r := ctxEnv(a, nil, "pull"); r.code != 0 || !strings.Contains(r.stdout, "fast-forward") && !strings.Contains(r.stdout, "merged") {
		t.Fatalf("pull after a killed pull: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	noLocks(t, a)

	// ctx's own update of a tracking ref (a remote given as a path: git keeps no tracking ref for it),
	// killed between creating and renaming the lock.
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v3")
	killAt(t, a, "ref-locked", "push", "--remote", origin)
	var own []string
	_ = filepath.WalkDir(filepath.Join(a, ".git", "refs", "ctx", "fetch"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			own = append(own, p)
		}
		return nil
	})
	if len(own) != 1 {
		t.Fatalf("setup: the killed push left %v", own)
	}
	mustCtx(t, a, nil, 0, "push", "--remote", origin)
	noLocks(t, a)

	// A lock ctx did not make (a crashed C git): push and pull fail, saying which file and how to remove it.
	writeFileT(t, lock, "")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v4")
	for _, cmd := range []string{"push", "pull"} {
		r := ctxEnv(a, nil, cmd)
		if r.code == 0 || !strings.Contains(r.stderr, "refs/remotes/origin/ctx is locked") || !strings.Contains(r.stderr, "rm '"+lock+"'") {
			t.Errorf("ctx %s with a foreign lock: exit %d\nstdout: %s\nstderr: %s", cmd, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "push origin: refs/heads/ctx at") {
			t.Errorf("ctx %s reported success", cmd)
		}
	}
	st := mustCtx(t, a, nil, 0, "status").stdout
	if !strings.Contains(st, "not ctx's") || !strings.Contains(st, "rm '"+lock+"'") {
		t.Errorf("status with a foreign lock:\n%s", st)
	}
	if !exists(lock) {
		t.Errorf("ctx removed a lock that was not its own")
	}
	os.Remove(lock)
	mustCtx(t, a, nil, 0, "push")
	fsck(t, a)
}

// TestScopeMoveAtomic: moving an entry between scopes moves two refs; with refs/heads/ctx.lock present the
// move fails and the entry stays where it was, and a move killed between the two ref updates is completed
// by the next ctx process: the entry is in exactly one scope, never in none.
func TestScopeMoveAtomic(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	run(t, dir, 0, "knowledge", "set", "k", "secret", "--scope", "private")
	lock := filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")
	writeFileT(t, lock, "")
	_, stderr, code := runCode(dir, "", "knowledge", "scope", "k", "public")
	if code == 0 || !strings.Contains(stderr, "refs/heads/ctx is locked") {
		t.Fatalf("scope move with a lock: exit %d: %s", code, stderr)
	}
	os.Remove(lock)
	if got := inRef(t, dir, "refs/ctx/private", "knowledge/k.md"); !got {
		t.Fatalf("k left the private scope although the move failed")
	}
	if got := run(t, dir, 0, "knowledge", "get", "k"); got != "secret\n" {
		t.Fatalf("k = %q after a failed move", got)
	}

	killAt(t, dir, "ref-renamed:refs/ctx/private", "knowledge", "scope", "k", "public")
	if inRef(t, dir, "refs/ctx/private", "knowledge/k.md") {
		t.Fatalf("setup: the kill came before the first ref moved")
	}
	if got := run(t, dir, 0, "knowledge", "get", "k"); !strings.Contains(got, "secret") {
		t.Fatalf("k = %q after the interrupted move", got)
	}
	if !inRef(t, dir, "refs/heads/ctx", "knowledge/k.md") || inRef(t, dir, "refs/ctx/private", "knowledge/k.md") {
		t.Errorf("the interrupted move was not completed: public %v, private %v",
			inRef(t, dir, "refs/heads/ctx", "knowledge/k.md"), inRef(t, dir, "refs/ctx/private", "knowledge/k.md"))
	}
	noLocks(t, dir)
	fsck(t, dir)
}

func inRef(t testing.TB, dir, ref, path string) bool {
	t.Helper()
	_, err := testenv.GitErr(dir, append(storetest.RefArgs(t, dir, ref), "cat-file", "-e", ref+":"+path)...)
	return err == nil
}

func writeFileT(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fsck(t testing.TB, dir string) {
	t.Helper()
	if out, err := testenv.GitErr(dir, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil || out != "" {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// TestCommittedWriteExitsZero: a write whose commit landed but whose refresh of .context/ failed exits 0
// with a warning on stderr, so that a script does not run it again and write it twice.
func TestCommittedWriteExitsZero(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	rec := filepath.Join(dir, ".context", ".ctx-checkout.json")
	os.Remove(rec)
	if err := os.MkdirAll(filepath.Join(rec, "x"), 0o777); err != nil {
		t.Fatal(err)
	}
	count := func() string { return testenv.Git(t, dir, "rev-list", "--count", "refs/heads/ctx") }
	before := count()
	for _, args := range [][]string{
		{"knowledge", "set", "k", "v"},
		{"decision", "add", "Use Go", "--context", "c", "--decision", "d", "--consequences", "q"},
	} {
		stdout, stderr, code := runCode(dir, "", args...)
		if code != 0 || !strings.Contains(stderr, "ctx: warning: committed, but refreshing .context failed") {
			t.Errorf("ctx %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if b, a := atoiT(t, before), atoiT(t, count()); a-b != 2 {
		t.Errorf("%d commits, want 2 (one per write)", a-b)
	}
	if out := testenv.Git(t, dir, "log", "--format=%s", "-2", "refs/heads/ctx"); out != "ctx: add decision Use Go\nctx: set knowledge k" {
		t.Errorf("log:\n%s", out)
	}
}

func atoiT(t testing.TB, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// TestKillDuringPullLeavesNoQuarantine: a pull killed (SIGKILL) after its fetch, while its quarantine refs
// (refs/ctx/incoming/<random>/...) still hold the fetched tips, leaves them; the next ctx command that
// takes the ctx lock (a write) removes them, since no live process holds them. Before, they stayed forever
// (later pulls removed only those older than two minutes, ctx doctor none), kept the objects alive, and
// git push --mirror published them. A quarantine a live process holds is not touched (gitstore
// TestSweepQuarantines).
func TestKillDuringPullLeavesNoQuarantine(t *testing.T) {
	_, origin := seededRemote(t, "origin.git")
	a := cloneURL(t, origin, "a")
	b := cloneURL(t, origin, "b")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "push")
	mustCtx(t, b, nil, 0, "init", "--no-hooks")
	mustCtx(t, b, nil, 0, "pull")
	incoming := func() string { return testenv.Git(t, b, "for-each-ref", "--format=%(refname)", "refs/ctx/incoming/") }
	for i := 0; i < 2; i++ {
		mustCtx(t, a, nil, 0, "knowledge", "set", "k", fmt.Sprintf("v%d", i))
		mustCtx(t, a, nil, 0, "push")
		// Killed as it moves the remote-tracking ref to the checked tip: the quarantine refs exist.
		killAt(t, b, "ref-locked:refs/remotes/origin/ctx", "pull")
		if incoming() == "" {
			t.Fatalf("kill %d: no quarantine ref left: the kill did not land where the test needs it", i)
		}
	}
	mustCtx(t, b, nil, 0, "knowledge", "set", "local", "x")
	if left := incoming(); left != "" {
		t.Errorf("quarantine refs of killed pulls left after the next write:\n%s", left)
	}
	if out := mustCtx(t, b, nil, 0, "pull").stdout; !strings.Contains(out, "merged") && !strings.Contains(out, "fast-forward") {
		t.Errorf("pull after the kills: %s", out)
	}
	if left := incoming(); left != "" {
		t.Errorf("quarantine refs left after a pull:\n%s", left)
	}
	noLocks(t, b)
	fsck(t, b)
}
