package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestListLargeEntryBoundedMemory: ctx knowledge list prints one line of each entry, so an entry of 30 MiB
// (a teammate's; under the 32 MiB input limit) costs it the 64 KiB it reads of it, not the whole file
// several times over (a tester measured 567 MB of RSS for a 60 MB entry). The bound is on the process's
// peak RSS (getrusage), not on time.
func TestListLargeEntryBoundedMemory(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	big := filepath.Join(t.TempDir(), "big.md")
	line := strings.Repeat("x", 1023) + "\n"
	if err := os.WriteFile(big, []byte("first line of the big entry\n"+strings.Repeat(line, 30<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, 0, "knowledge", "set", "big", "-f", big)
	run(t, dir, 0, "knowledge", "set", "small", "a small entry")

	// Linux records in a child's ru_maxrss the peak RSS of the memory it shared with this test process
	// until its exec (Go starts children with vfork), so the peak of ctx --version run the same way is
	// the floor every measurement here has.
	peak := func(args ...string) (string, int64) {
		t.Helper()
		cmd := exec.Command(ctxBin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ctx %v: %v", args, err)
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			t.Skip("no rusage on this system")
		}
		return string(out), int64(ru.Maxrss) // KiB on Linux
	}
	_, floor := peak("--version")
	out, list := peak("knowledge", "list")
	if !strings.Contains(out, "first line of the big entry") || !strings.Contains(out, "a small entry") {
		t.Fatalf("knowledge list:\n%s", out)
	}
	const slackKiB = 16 << 10 // one copy of the entry would be 30
	if list > floor+slackKiB {
		t.Fatalf("knowledge list with a 30 MiB entry peaked at %d MiB of RSS, ctx --version at %d MiB: want at most %d MiB more", list>>10, floor>>10, slackKiB>>10)
	}
	t.Logf("knowledge list with a 30 MiB entry: peak RSS %d MiB (ctx --version run the same way: %d MiB)", list>>10, floor>>10)
}
