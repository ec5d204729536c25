package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// Input over 32 MiB is refused, unread or read only to the limit (docs/limits.md "What the CLI reads"):
// an endless file (/dev/zero), a big regular file, a big standard input. Nothing is committed, and the
// store keeps working.
func TestInputOverLimitRefused(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	big := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 33<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"knowledge", "set", "zero", "-f", "/dev/zero"},
		{"knowledge", "set", "big", "-f", big},
		{"decision", "add", "Big", "-f", big},
	} {
		_, stderr, code := runCode(dir, "", args...)
		if code != 2 || !strings.Contains(stderr, "is over 32 MiB") {
			t.Errorf("ctx %s: exit %d, stderr %q; want exit 2 and the limit named", strings.Join(args, " "), code, stderr)
		}
	}
	_, stderr, code := runCode(dir, strings.Repeat("y", 32<<20+1), "knowledge", "set", "stdin")
	if code != 2 || !strings.Contains(stderr, "standard input is over 32 MiB") {
		t.Errorf("33 MiB on standard input: exit %d, stderr %q", code, stderr)
	}
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != tip {
		t.Errorf("a refused input committed: %s -> %s", tip, got)
	}
	run(t, dir, 0, "knowledge", "set", "small", "fits")

	// An entry of exactly the limit reads back: get prints it with a final newline, set -f takes it (the
	// newline is not content), and the content is unchanged (a tester's 32 MiB round trip was refused).
	limit := filepath.Join(t.TempDir(), "limit.md")
	if err := os.WriteFile(limit, bytes.Repeat([]byte("a"), 32<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, 0, "knowledge", "set", "limit", "-f", limit)
	back := filepath.Join(t.TempDir(), "back.md")
	if err := os.WriteFile(back, []byte(run(t, dir, 0, "knowledge", "get", "limit")), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(back); err != nil || fi.Size() != 32<<20+1 {
		t.Fatalf("ctx knowledge get of a 32 MiB entry printed %v bytes (%v), want the content and a newline", fi.Size(), err)
	}
	before := testenv.Git(t, dir, "rev-parse", "ctx")
	run(t, dir, 0, "knowledge", "set", "limit", "-f", back)
	if after := testenv.Git(t, dir, "rev-parse", "ctx"); after != before {
		t.Errorf("setting back what get printed changed the entry: %s -> %s", before, after)
	}
	if _, stderr, code := runCode(dir, "", "knowledge", "set", "limit2", "-f", big); code != 2 || !strings.Contains(stderr, "over 32 MiB") {
		t.Errorf("33 MiB still refused? exit %d %q", code, stderr)
	}
}

// SIGINT while ctx waits for standard input that never ends (a pipe kept open) ends ctx at once with exit
// 130, not when the input ends.
func TestInterruptWhileReadingInput(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd := exec.Command(ctxBin, "knowledge", "set", "slow")
	cmd.Dir, cmd.Stdin = dir, pr
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	if _, err := pw.Write([]byte("partial ")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	signalInterrupts(t, cmd, &errb, os.Interrupt)
}

// signalInterrupts sends sig to the running ctx of cmd and fails unless it ends within 30 s with exit
// 130 and "ctx: interrupted" on its standard error errb.
func signalInterrupts(t *testing.T, cmd *exec.Cmd, errb *bytes.Buffer, sig os.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 130 || !strings.Contains(errb.String(), "ctx: interrupted") {
			t.Fatalf("after %v: %v, stderr %q; want exit 130", sig, err, errb.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("ctx still waits 30 s after %v", sig)
	}
}

// SIGTERM or SIGINT while ctx waits to open a FIFO given with -f (no writer ever opens it) ends ctx at
// once with exit 130; the open blocked in the kernel before, so only SIGKILL ended it (tester).
func TestInterruptWhileOpeningFIFO(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		fifo := filepath.Join(t.TempDir(), "ff")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(ctxBin, "knowledge", "set", "fk", "-f", fifo)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		signalInterrupts(t, cmd, &errb, sig)
	}
	if out := testenv.Git(t, dir, "ls-tree", "--name-only", "ctx", "knowledge/"); out != "" {
		t.Errorf("an interrupted set wrote %q", out)
	}
}
