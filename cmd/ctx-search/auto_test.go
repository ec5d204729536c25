//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/searchsock"
	"golang.org/x/sys/unix"
)

// autoQuery is the search the automatic start's tests run through the front.
var autoQuery = []string{"search", "--json", "README"}

// serverCmd runs `ctx history server VERB` (ctx-full) in dir and fails the test unless it exits 0.
func serverCmd(t *testing.T, dir, verb string) string {
	t.Helper()
	r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", verb)
	if r.code != 0 {
		t.Fatalf("history server %s: exit %d: %s%s", verb, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// stopAtEnd turns the automatic start off and stops dir's server when the test ends, so that no test
// leaves a server running.
func stopAtEnd(t *testing.T, dir string) {
	t.Cleanup(func() {
		runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "disable")
		waitStopped(t, dir)
	})
}

// frontSearch runs the query through the front (ctx) in dir with env added to its environment and
// returns its standard output, failing the test on another exit than 0.
func frontSearch(t *testing.T, dir string, env ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "ctx"), autoQuery...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ctx %q: %v", autoQuery, err)
	}
	return string(out)
}

// waitRunning polls dir's server status until a server listens (failing after a minute: a server that
// never starts, not a speed).
func waitRunning(t *testing.T, dir string) {
	t.Helper()
	for i := 0; ; i++ {
		if strings.Contains(serverCmd(t, dir, "status"), "search server running") {
			if _, err := os.Lstat(filepath.Join(histDir(dir), searchsock.Name)); err == nil {
				return
			}
		}
		if i == 600 {
			t.Fatal("no search server started")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noStart checks, right after a search through the front returned, that it started no server: a start
// leaves the start stamp until the server listens, and the server binds its socket before it removes it.
func noStart(t *testing.T, dir, why string) {
	t.Helper()
	hist := histDir(dir)
	for _, name := range []string{searchsock.StartingName, searchsock.Name} {
		if _, err := os.Lstat(filepath.Join(hist, name)); err == nil {
			t.Errorf("%s: the search started a server (%s is there)", why, name)
		}
	}
	if searchsock.Running(hist) {
		t.Errorf("%s: a search server runs", why)
	}
}

// TestAutoStart: enable writes the marker and starts the server; after a stop, a search that finds no
// server answers the one-shot path's bytes and starts one, which answers the next searches with the same
// bytes; disable stops it and no search starts one again.
func TestAutoStart(t *testing.T) {
	dir := importCorpus(t)
	stopAtEnd(t, dir)
	hist := histDir(dir)
	oneShot := frontSearch(t, dir)
	noStart(t, dir, "no marker")
	if !strings.Contains(serverCmd(t, dir, "status"), "automatic start: off") {
		t.Error("status does not say the automatic start is off")
	}

	out := serverCmd(t, dir, "enable")
	if !strings.Contains(out, "automatic start on") || !strings.Contains(out, "search server started") {
		t.Fatalf("enable: %s", out)
	}
	fi, err := os.Lstat(filepath.Join(hist, searchsock.AutoName))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the marker: %v %v", fi, err)
	}
	if st := serverCmd(t, dir, "status"); !strings.Contains(st, "search server running") || !strings.Contains(st, "automatic start: on") {
		t.Errorf("status after enable: %s", st)
	}
	serverCmd(t, dir, "stop")
	waitStopped(t, dir)

	if got := frontSearch(t, dir); got != oneShot {
		t.Errorf("the search that starts the server: %s\nwant: %s", clip(got), clip(oneShot))
	}
	waitRunning(t, dir)
	if _, err := os.Lstat(filepath.Join(hist, searchsock.StartingName)); err == nil {
		t.Error("the server left the start stamp")
	}
	if got, err := viaServer(t, dir, autoQuery...); err != nil || string(got) != oneShot {
		t.Errorf("the started server's answer: %v\n%s\nwant: %s", err, clip(string(got)), clip(oneShot))
	}
	if got := frontSearch(t, dir); got != oneShot {
		t.Errorf("through the started server: %s\nwant: %s", clip(got), clip(oneShot))
	}

	out = serverCmd(t, dir, "disable")
	if !strings.Contains(out, "automatic start off") || !strings.Contains(out, "search server stopped") {
		t.Errorf("disable: %s", out)
	}
	waitStopped(t, dir)
	if _, err := os.Lstat(filepath.Join(hist, searchsock.AutoName)); err == nil {
		t.Error("disable left the marker")
	}
	if got := frontSearch(t, dir); got != oneShot {
		t.Errorf("after disable: %s\nwant: %s", clip(got), clip(oneShot))
	}
	noStart(t, dir, "after disable")
	if !strings.Contains(serverCmd(t, dir, "status"), "automatic start: off") {
		t.Error("status does not say the automatic start is off after disable")
	}
}

// TestAutoStartIgnored: a marker that is a symlink to a regular file, a FIFO or a folder, a marker
// writable by others or (as root) another user's, a regular marker with CTX_SEARCH_SERVER_AUTO=0, and a regular marker in an index
// folder open to the group start no server (and try none); the search answers as without a marker.
func TestAutoStartIgnored(t *testing.T) {
	dir := importCorpus(t)
	stopAtEnd(t, dir)
	hist := histDir(dir)
	marker := filepath.Join(hist, searchsock.AutoName)
	oneShot := frontSearch(t, dir)
	target := filepath.Join(t.TempDir(), "auto")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	regular := func() error { return os.WriteFile(marker, nil, 0o600) }
	cases := []struct {
		name string
		make func() error
		env  []string
		undo func() error
	}{
		{name: "symlink", make: func() error { return os.Symlink(target, marker) }},
		{name: "FIFO", make: func() error { return unix.Mkfifo(marker, 0o600) }},
		{name: "folder", make: func() error { return os.Mkdir(marker, 0o700) }},
		{name: "writable by others", make: func() error {
			if err := regular(); err != nil {
				return err
			}
			return os.Chmod(marker, 0o666)
		}},
		{name: "CTX_SEARCH_SERVER_AUTO=0", make: regular, env: []string{searchsock.AutoOffEnv + "=0"}},
		{name: "folder open to the group", make: func() error {
			if err := regular(); err != nil {
				return err
			}
			return os.Chmod(hist, 0o750)
		}, undo: func() error { return os.Chmod(hist, 0o700) }},
	}
	if os.Getuid() == 0 { // root can give the marker to another user
		cases = append(cases, struct {
			name string
			make func() error
			env  []string
			undo func() error
		}{name: "another user's", make: func() error {
			if err := regular(); err != nil {
				return err
			}
			return os.Lchown(marker, 65534, 65534)
		}})
	}
	for _, c := range cases {
		if err := c.make(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := frontSearch(t, dir, c.env...); got != oneShot {
			t.Errorf("%s: %s\nwant: %s", c.name, clip(got), clip(oneShot))
		}
		noStart(t, dir, c.name)
		if st := serverCmd(t, dir, "status"); c.env == nil && c.undo == nil && !strings.Contains(st, "automatic start: off") {
			t.Errorf("%s: status: %s", c.name, st)
		}
		if c.undo != nil {
			if err := c.undo(); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.RemoveAll(marker); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAutoStartOnce: 20 searches at once with the marker and no server all answer the one-shot bytes
// and start one server between them: the log (appended to by each automatic start) holds one start and
// no server that found another running.
func TestAutoStartOnce(t *testing.T) {
	dir := importCorpus(t)
	stopAtEnd(t, dir)
	hist := histDir(dir)
	oneShot := frontSearch(t, dir)
	if err := os.WriteFile(filepath.Join(hist, searchsock.AutoName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, 20)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(filepath.Join(bin, "ctx"), autoQuery...)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("search %d: %v", i, err)
			}
			outs[i] = string(out)
		}()
	}
	wg.Wait()
	for i, out := range outs {
		if out != oneShot {
			t.Errorf("search %d: %s\nwant: %s", i, clip(out), clip(oneShot))
		}
	}
	waitRunning(t, dir)
	// A second server started meanwhile would still be opening the index: wait until a search went
	// through the first, then until no process but the listening server runs for this index.
	if got := frontSearch(t, dir); got != oneShot {
		t.Errorf("through the server: %s", clip(got))
	}
	waitOnlyServer(t, hist)
	log, err := os.ReadFile(filepath.Join(hist, logName))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "search server: pid"); n != 1 || strings.Contains(string(log), "already runs") {
		t.Errorf("%d servers started (want 1):\n%s", n, log)
	}
}

// waitOnlyServer waits until the only `ctx-search --server run hist` process is the one holding hist's
// lock (others exit once they find it held), failing after a minute.
func waitOnlyServer(t *testing.T, hist string) {
	t.Helper()
	pid := searchsock.ReadPID(hist)
	for i := 0; ; i++ {
		others := 0
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil || !strings.Contains(string(b), "--server\x00run\x00"+hist+"\x00") {
				continue
			}
			if p != filepath.Join("/proc", strconv.Itoa(pid), "cmdline") {
				others++
			}
		}
		if others == 0 {
			return
		}
		if i == 600 {
			t.Fatalf("%d other servers still run for %s", others, hist)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serverProcs counts the `ctx-search --server run hist` processes.
func serverProcs(hist string) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "--server\x00run\x00"+hist+"\x00") {
			n++
		}
	}
	return n
}

// waitNoServerProcess waits until no `ctx-search --server run hist` process runs, failing after a minute
// (a server that outlived disable, not a speed).
func waitNoServerProcess(t *testing.T, hist, why string) {
	t.Helper()
	for i := 0; serverProcs(hist) > 0; i++ {
		if i == 600 {
			t.Fatalf("%s: a search server still runs (pid %d): %s", why, searchsock.ReadPID(hist), serverCmd(t, filepath.Dir(filepath.Dir(filepath.Dir(hist))), "status"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAutoStartAfterDisable: a front that saw the marker and took the start stamp just before disable
// removed them starts a server that stops at once (the log says why) instead of running with the
// automatic start off; and searches racing a disable leave no server running once it returned.
func TestAutoStartAfterDisable(t *testing.T) {
	dir := importCorpus(t)
	stopAtEnd(t, dir)
	hist := histDir(dir)
	serverCmd(t, dir, "enable")
	serverCmd(t, dir, "stop")
	waitStopped(t, dir)
	// The front's steps after its marker check (autoStart), replayed after disable: deterministic.
	serverCmd(t, dir, "disable")
	if !searchsock.AutoStart(hist, filepath.Join(bin, "ctx-search")) {
		t.Fatal("AutoStart started nothing")
	}
	for i := 0; ; i++ {
		log, _ := os.ReadFile(filepath.Join(hist, logName))
		if strings.Contains(string(log), "stopped: the automatic start was turned off") {
			break
		}
		if _, err := os.Lstat(filepath.Join(hist, searchsock.Name)); err == nil && i > 20 && searchsock.Running(hist) {
			t.Fatalf("a server started with the automatic start off:\n%s", log)
		}
		if i == 600 {
			t.Fatalf("the server did not say it stopped:\n%s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitNoServerProcess(t, hist, "after the start that lost to disable")

	// The same race through real fronts: searches with no server running, and disable at once.
	for round := 0; round < 3; round++ {
		serverCmd(t, dir, "enable")
		serverCmd(t, dir, "stop")
		waitStopped(t, dir)
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(filepath.Join(bin, "ctx"), autoQuery...)
				cmd.Dir = dir
				if err := cmd.Run(); err != nil {
					t.Errorf("search: %v", err)
				}
			}()
		}
		serverCmd(t, dir, "disable")
		wg.Wait()
		waitNoServerProcess(t, hist, "after disable")
		if st := serverCmd(t, dir, "status"); !strings.Contains(st, "no search server runs") {
			t.Fatalf("round %d: %s", round, st)
		}
	}
}

// TestEnableFailsLeavesOff: enable in an index folder whose socket path is over 107 bytes fails (exit 1,
// the server cannot bind) and leaves the automatic start off: no marker, status says off.
func TestEnableFailsLeavesOff(t *testing.T) {
	dir := importCorpus(t)
	long := filepath.Join(t.TempDir(), strings.Repeat("x", 120))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(histDir(dir), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(long, "index.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(bin, "ctx-full")
	t.Cleanup(func() { runBin(t, dir, full, "history", "server", "disable", "--index", long) })
	r := runBin(t, dir, full, "history", "server", "enable", "--index", long)
	if r.code != 1 || !strings.Contains(r.stderr, "too long") {
		t.Errorf("enable with a socket path over 107 bytes: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(long, searchsock.AutoName)); err == nil {
		t.Error("the failed enable left the marker")
	}
	if st := runBin(t, dir, full, "history", "server", "status", "--index", long); !strings.Contains(st.stdout, "automatic start: off") {
		t.Errorf("status after the failed enable: %s", st.stdout)
	}
}

// TestConfiguredRootStillServed: a configured history root (ctx sources add, the config's history.sources)
// leaves the search to ctx-search and the server as without one (the front read the key as
// unknown and handed every search to ctx-full, so the server was never asked nor started, while status
// said a search starts one). The automatic start runs only on the front's ctx-search path.
func TestConfiguredRootStillServed(t *testing.T) {
	dir := importCorpus(t)
	stopAtEnd(t, dir)
	if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "sources", "add", "--provider", "claude-code",
		"--path", filepath.Join(corpusDir(t), "claude-code"), "--root", "r"); r.code != 0 {
		t.Fatalf("sources add: exit %d: %s", r.code, r.stderr)
	}
	same(t, dir, true, autoQuery...)
	serverCmd(t, dir, "enable")
	serverCmd(t, dir, "stop")
	waitStopped(t, dir)
	oneShot := frontSearch(t, dir)
	waitRunning(t, dir)
	if got, err := viaServer(t, dir, autoQuery...); err != nil || string(got) != oneShot {
		t.Errorf("the started server's answer: %v\n%s\nwant: %s", err, clip(string(got)), clip(oneShot))
	}
	if got := frontSearch(t, dir); got != oneShot {
		t.Errorf("through the started server: %s\nwant: %s", clip(got), clip(oneShot))
	}
}
