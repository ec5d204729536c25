//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/searchsock"
)

// TestServerConcurrentStartsLog: six `ctx history server start` at once all succeed (one
// server runs, the others say so), and search.log holds the running server's start line with its pid: the
// starts opened it truncating, at offset 0 each, and the losers' lines overwrote the winner's. A server
// started with --idle 0 (never) says so, not "idle exit after 0s".
func TestServerConcurrentStartsLog(t *testing.T) {
	dir := importCorpus(t)
	t.Cleanup(func() { runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "stop") })
	var wg sync.WaitGroup
	results := make([]result, 6)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "start", "--idle", "0")
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.code != 0 || !strings.Contains(r.stdout, "search server") {
			t.Errorf("start: exit %d: %s%s", r.code, r.stdout, r.stderr)
		}
	}
	status := runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "status")
	pid := fmt.Sprintf("search server: pid %d,", searchsock.ReadPID(histDir(dir)))
	var log []byte
	for i := 0; i < 300; i++ { // the server writes its line just after it listens, which its starter waits for
		if log, _ = os.ReadFile(filepath.Join(histDir(dir), logName)); strings.Contains(string(log), pid) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(string(log), pid) || !strings.Contains(string(log), "no idle exit") {
		t.Fatalf("search.log does not hold the running server's line (%s):\n%s\nstatus: %s", pid, log, status.stdout)
	}
}

// TestServerStopLogsWhy: a server stopped by `ctx history server stop` says so in search.log, not that its
// socket was removed or replaced, and leaves no socket behind.
func TestServerStopLogsWhy(t *testing.T) {
	dir := importCorpus(t)
	startServerFor(t, dir)
	serverCmd(t, dir, "stop")
	waitStopped(t, dir)
	hist := histDir(dir)
	log, err := os.ReadFile(filepath.Join(hist, logName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "stopped: ctx history server stop") {
		t.Errorf("search.log does not say stop stopped it:\n%s", log)
	}
	for _, name := range []string{searchsock.Name, searchsock.StopName} {
		if _, err := os.Lstat(filepath.Join(hist, name)); err == nil {
			t.Errorf("%s left behind", name)
		}
	}
}
