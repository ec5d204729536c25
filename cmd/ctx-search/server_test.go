//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/searchsock"
)

// histDir is dir's history index folder.
func histDir(dir string) string { return filepath.Join(dir, ".git", "ctx", "history") }

// startServerFor starts the real program's server for dir's index (ctx history server start, --idle 5m
// unless extra says otherwise) and stops it when the test ends.
func startServerFor(t *testing.T, dir string, extra ...string) {
	t.Helper()
	if len(extra) == 0 {
		extra = []string{"--idle", "5m"} // a test killed before its cleanup leaves a server that exits soon
	}
	r := runBin(t, dir, filepath.Join(bin, "ctx-full"), append([]string{"history", "server", "start"}, extra...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "search server started") {
		t.Fatalf("server start: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() { runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "stop") })
}

// viaServer asks dir's running server what the front would ask it for args (the build of bin's
// ctx-search, the refs' fingerprint).
func viaServer(t *testing.T, dir string, args ...string) ([]byte, error) {
	t.Helper()
	build, err := searchsock.BuildID(filepath.Join(bin, "ctx-search"))
	if err != nil {
		t.Fatal(err)
	}
	return searchsock.Dial(histDir(dir), searchsock.Request{Build: build, FP: tipsFP(t, dir), Args: append([]string{"ctx"}, args...)}, time.Minute)
}

// waitStopped waits until no server holds dir's lock (failing after a minute: a server that never
// stops, not a speed).
func waitStopped(t *testing.T, dir string) {
	t.Helper()
	for i := 0; searchsock.Running(histDir(dir)); i++ {
		if i == 6000 {
			t.Fatal("the search server did not stop")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerSameAsFull runs the corpus queries under every flag set ctx-search reads through the front
// with a server running, in a repository with a context store: each answer is served by the server
// (asked directly, as the front asks it) and the front prints ctx-full's bytes, exit code and standard
// error; after the refs move the server hands over (the stale copy), and answers again once ctx-full
// updated the copy; a command line the server does not read is handed over too.
func TestServerSameAsFull(t *testing.T) {
	dir := storeRepo(t)
	same(t, dir, false, "search", "--json", "README") // ctx-full builds the store's copy
	startServerFor(t, dir)
	queries := [][]string{{"README"}, {"onboarding"}, {"error"}, {"the"}, {"session"}, {"test"}, {"git", "commit"},
		{"hello", "function"}, {"npm", "run", "build"}, {"apply_patch"}, {"todo"}, {"zzznomatch"}, {"README", "zzznomatch"},
		{"ünïcödé", "日本"}, {"parseSessionMeta"}, {"SQLite", "index"}, {"private"}, {"commits"}, {"\"quoted\"", "AND", "NOT"}}
	flags := [][]string{{}, {"--json"}, {"--json", "--limit", "3"}, {"--limit", "100"}, {"--json", "--scope", "transcript"},
		{"--json", "--scope", "calls"}, {"--json", "--scope", "outputs", "--limit", "50"}, {"--json", "--provider", "codex"},
		{"--provider", "claude-code", "--provider", "gemini-cli", "--json"}, {"--primary-only", "--json", "--limit", "7"}}
	cmds := [][]string{{"search"}, {"history", "search"}}
	storeHit := false
	for i, q := range queries {
		for j, f := range flags {
			if j > 1 && (i+j)%3 != 0 {
				continue
			}
			args := append(append(append([]string{}, cmds[(i+j)%2]...), f...), q...)
			want := same(t, dir, true, args...)
			got, err := viaServer(t, dir, args...)
			if err != nil {
				if sanitized(histDir(dir), tipsFP(t, dir), args) {
					continue // handed over, as the one-shot path does
				}
				t.Errorf("ctx %q: not served by the server: %v", args, err)
				continue
			}
			if string(got) != want.stdout {
				t.Errorf("ctx %q: the server's answer differs from ctx-full's:\n%s\nwant:\n%s", args, clip(string(got)), clip(want.stdout))
			}
			storeHit = storeHit || strings.Contains(want.stdout, `"provider": "ctx"`)
		}
	}
	if !storeHit {
		t.Error("no answer had a hit of the context store")
	}
	for _, args := range [][]string{{"search", "--events", "README"}, {"search", "--json", "--limit", "200", "README"}, {"search", "help"}} {
		same(t, dir, false, args...)
		if _, err := viaServer(t, dir, args...); !errors.Is(err, searchsock.ErrNoServer) || !strings.Contains(err.Error(), "handed over") {
			t.Errorf("ctx %q: the server answered a shape it does not read: %v", args, err)
		}
	}

	// The refs move: the copy is stale; the server hands over, ctx-full updates the copy, the server
	// answers from it again.
	if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "knowledge", "set", "note-0", "the README now says: onboarding in one step"); r.code != 0 {
		t.Fatalf("set: %d %s", r.code, r.stderr)
	}
	if _, err := viaServer(t, dir, "search", "--json", "onboarding"); err == nil {
		t.Error("the server answered with a stale store copy")
	}
	same(t, dir, false, "search", "--json", "onboarding")
	r := same(t, dir, true, "search", "--json", "onboarding")
	if got, err := viaServer(t, dir, "search", "--json", "onboarding"); err != nil || string(got) != r.stdout || !strings.Contains(r.stdout, "one step") {
		t.Errorf("after the copy's update: served %v, same %v, hit %v", err == nil, string(got) == r.stdout, strings.Contains(r.stdout, "one step"))
	}
}

// TestServerReimport: an import that adds events under a running server, then an index removed and
// imported anew (another file): the server's answers follow both, equal to ctx-full's, never the old ones.
func TestServerReimport(t *testing.T) {
	dir := importCorpus(t)
	startServerFor(t, dir)
	before, err := viaServer(t, dir, "search", "--json", "xylophonequartz")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(before), `"results": []`) {
		t.Fatalf("a hit before the import: %s", clip(string(before)))
	}
	// A new Claude Code session holding the word.
	root := t.TempDir()
	proj := filepath.Join(root, "projects", "-work-x")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","sessionId":"5f0c2d4e-1111-4a2b-9c3d-000000000001","uuid":"5f0c2d4e-1111-4a2b-9c3d-0000000000aa","timestamp":"2026-01-02T03:04:05Z","cwd":"/work/x","message":{"role":"user","content":"tune the xylophonequartz parser"}}` + "\n"
	if err := os.WriteFile(filepath.Join(proj, "5f0c2d4e-1111-4a2b-9c3d-000000000001.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	imp := func() {
		t.Helper()
		if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "import", "--provider", "claude-code", "--path", filepath.Join(root, "projects")); r.code != 0 {
			t.Fatalf("import: %d %s", r.code, r.stderr)
		}
	}
	imp()
	check := func(what string) {
		t.Helper()
		for _, args := range [][]string{{"search", "--json", "xylophonequartz"}, {"search", "xylophonequartz"}, {"search", "--json", "README"}} {
			want := same(t, dir, true, args...)
			got, err := viaServer(t, dir, args...)
			if err != nil || string(got) != want.stdout {
				t.Errorf("%s: ctx %q: served %v (%v), same %v", what, args, err == nil, err, string(got) == want.stdout)
			}
		}
		if got, _ := viaServer(t, dir, "search", "--json", "xylophonequartz"); !strings.Contains(string(got), "xylophonequartz parser") {
			t.Errorf("%s: the new event is not found: %s", what, clip(string(got)))
		}
	}
	check("after an import")
	// The index removed and built anew (another file, a new generation).
	for _, f := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		os.Remove(filepath.Join(histDir(dir), f))
	}
	if _, err := viaServer(t, dir, "search", "--json", "README"); err == nil {
		t.Error("the server answered with no index file")
	}
	imp()
	if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "import", "--provider", "codex", "--path", filepath.Join(corpusDir(t), "codex")); r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	if searchsock.Running(histDir(dir)) {
		check("after the index was rebuilt")
	} // else: it stopped when it saw no index file, which is fine too (the front runs ctx-search)
	same(t, dir, true, "search", "--json", "README")
}

// TestServerConcurrentClients: 8 clients at once, several searches each, against one server: every answer
// is the one-shot path's.
func TestServerConcurrentClients(t *testing.T) {
	dir := importCorpus(t)
	startServerFor(t, dir)
	queries := [][]string{{"search", "--json", "README"}, {"search", "the"}, {"history", "search", "--json", "--limit", "50", "error"},
		{"search", "--json", "--scope", "calls", "git", "commit"}, {"search", "zzznomatch"}, {"search", "--json", "--primary-only", "session"}}
	want := make([]string, len(queries))
	for i, q := range queries {
		out, ok := search(context.Background(), oneShot{histDir(dir)}, "-", q)
		if !ok {
			t.Fatalf("ctx %q: not served one-shot", q)
		}
		want[i] = string(out)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < len(queries)*2; k++ {
				i := (c + k) % len(queries)
				got, err := viaServer(t, dir, queries[i]...)
				if err != nil || string(got) != want[i] {
					errs <- fmt.Errorf("client %d: ctx %q: %v, same %v", c, queries[i], err, string(got) == want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestServerUnusableSocket: a dead socket file, a file that is no socket, a socket or folder others may
// use, a socket of another owner: the client refuses each, and the front prints ctx-full's bytes through
// the one-shot path.
func TestServerUnusableSocket(t *testing.T) {
	dir := importCorpus(t)
	hist := histDir(dir)
	sock := filepath.Join(hist, searchsock.Name)
	args := []string{"search", "--json", "README"}
	refused := func(what string) {
		t.Helper()
		if _, err := viaServer(t, dir, args...); !errors.Is(err, searchsock.ErrNoServer) {
			t.Errorf("%s: the client used it: %v", what, err)
		}
		same(t, dir, true, args...)
	}
	// A dead socket: bound, then its listener closed (the file stays).
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if fi, err := os.Lstat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("no dead socket file: %v", err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("a dead socket")
	// A server starts over the dead socket.
	startServerFor(t, dir)
	if _, err := viaServer(t, dir, args...); err != nil {
		t.Fatalf("the server over a dead socket: %v", err)
	}
	// Its socket open to others, then the folder.
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	refused("a socket of mode 0666")
	if err := os.Chmod(sock, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hist, 0o755); err != nil {
		t.Fatal(err)
	}
	refused("a folder of mode 0755")
	if err := os.Chmod(hist, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := os.Lchown(sock, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		refused("a socket of another owner")
		if err := os.Lchown(sock, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := viaServer(t, dir, args...); err != nil {
		t.Fatalf("the server after its socket was put back: %v", err)
	}
	// A regular file in the socket's place: the server stops (not its socket), the client refuses it.
	runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "stop")
	waitStopped(t, dir)
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("a regular file")
	if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "start"); r.code == 0 {
		t.Errorf("a server started over a regular file: %s", r.stdout)
	}
	os.Remove(sock)
}

// TestServerRefusesBadRequests: requests of another protocol, too long, malformed or of another build get
// no answer or OtherBuild, and the server goes on answering.
func TestServerRefusesBadRequests(t *testing.T) {
	dir := importCorpus(t)
	startServerFor(t, dir)
	sock := filepath.Join(histDir(dir), searchsock.Name)
	raw := func(req []byte) []byte {
		t.Helper()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// The server may refuse and close before the whole request is written: what it answered (nothing)
		// is what the test reads, so write errors are not failures here.
		_, _ = c.Write(req)
		_ = c.(*net.UnixConn).CloseWrite()
		b, _ := io.ReadAll(c)
		return b
	}
	long := append([]byte(searchsock.Magic), 0xff, 0xff, 0xff, 0xff)
	for _, req := range [][]byte{[]byte("GET / HTTP/1.0\r\n\r\n"), long, append([]byte(searchsock.Magic), 0, 0, 0, 3, 'a', 'b', 'c'), []byte(searchsock.Magic)} {
		if b := raw(req); len(b) != 0 {
			t.Errorf("request %q: answered %q", req, b)
		}
	}
	other, _ := searchsock.Request{Build: "1:2:3:4.5", FP: "-", Args: []string{"ctx", "search", "README"}}.Encode()
	if b := raw(other); !bytes.Equal(b, []byte{searchsock.OtherBuild}) {
		t.Errorf("another build: answered %q", b)
	}
	bad, _ := searchsock.Request{Build: mustBuild(t), FP: "../../etc", Args: []string{"ctx", "search", "README"}}.Encode()
	if b := raw(bad); !bytes.Equal(b, []byte{searchsock.HandOver}) {
		t.Errorf("a malformed fingerprint: answered %q", b)
	}
	if _, err := viaServer(t, dir, "search", "README"); err != nil {
		t.Errorf("the server after bad requests: %v", err)
	}
}

func mustBuild(t *testing.T) string {
	t.Helper()
	b, err := searchsock.BuildID(filepath.Join(bin, "ctx-search"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServerOtherBuild: a server run from another copy of ctx-search (another build) answers the front's
// requests with OtherBuild and the front runs the one-shot path; a server whose program file is
// replaced (a new install) stops.
func TestServerOtherBuild(t *testing.T) {
	dir := importCorpus(t)
	other := t.TempDir()
	b, err := os.ReadFile(filepath.Join(bin, "ctx-search"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(other, "ctx-search")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, dir, exe, "--server", "start", histDir(dir)); r.code != 0 {
		t.Fatalf("start: %d %s", r.code, r.stderr)
	}
	t.Cleanup(func() { runBin(t, dir, exe, "--server", "stop", histDir(dir)) })
	args := []string{"search", "--json", "README"}
	if _, err := viaServer(t, dir, args...); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Errorf("a server of another build: %v", err)
	}
	same(t, dir, true, args...)
	// A new install over the server's program: it stops.
	tmp := exe + ".new"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, exe); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, dir)
	if log, _ := os.ReadFile(filepath.Join(histDir(dir), logName)); !strings.Contains(string(log), "was replaced") {
		t.Errorf("the log does not say why it stopped: %s", log)
	}
	if _, err := os.Lstat(filepath.Join(histDir(dir), searchsock.Name)); err == nil {
		t.Error("the stopped server left its socket")
	}
}

// TestServerIdleExit: a server started with --idle stops by itself after that long without a search,
// removing its socket; status and stop say so.
func TestServerIdleExit(t *testing.T) {
	dir := importCorpus(t)
	startServerFor(t, dir, "--idle", "200ms")
	waitStopped(t, dir)
	if log, _ := os.ReadFile(filepath.Join(histDir(dir), logName)); !strings.Contains(string(log), "idle for 200ms") {
		t.Errorf("the log does not say it was idle: %s", log)
	}
	if _, err := os.Lstat(filepath.Join(histDir(dir), searchsock.Name)); err == nil {
		t.Error("the idle server left its socket")
	}
	r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "history", "server", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "no search server runs") {
		t.Errorf("status: %d %s %s", r.code, r.stdout, r.stderr)
	}
	same(t, dir, true, "search", "--json", "README")
}

// TestServerInProcess runs the server in this process (so the race detector sees it) and stops it by
// removing its socket: answers equal to the one-shot path's, then a clean stop.
func TestServerInProcess(t *testing.T) {
	dir := importCorpus(t)
	hist := histDir(dir)
	done := make(chan error, 1)
	var log bytes.Buffer
	go func() { done <- runServer(context.Background(), hist, time.Hour, false, &log) }()
	sock := filepath.Join(hist, searchsock.Name)
	for i := 0; ; i++ {
		if _, err := os.Lstat(sock); err == nil && searchsock.Running(hist) {
			break
		}
		if i == 6000 {
			t.Fatal("the server did not listen")
		}
		time.Sleep(10 * time.Millisecond)
	}
	exe, _ := os.Executable()
	build, err := searchsock.BuildID(exe)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, q := range [][]string{{"search", "--json", "README"}, {"search", "the"}, {"search", "--json", "--scope", "outputs", "error"}} {
		want, ok := search(context.Background(), oneShot{hist}, "-", q)
		if !ok {
			t.Fatalf("%q: not served one-shot", q)
		}
		for k := 0; k < 3; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := searchsock.Dial(hist, searchsock.Request{Build: build, FP: "-", Args: append([]string{"ctx"}, q...)}, time.Minute)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%q: %v, same %v", q, err, bytes.Equal(got, want))
				}
			}()
		}
	}
	wg.Wait()
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "its socket was removed") {
		t.Errorf("log: %s", log.String())
	}
}

// TestServerChecksOnce: a search the server's cache does not hold checks the index (its file) and the
// store's copy (its file, version and fingerprint) once, in warm.state, and answers through what it
// checked, with the one-shot path's bytes; a repeated search is the cache's.
func TestServerChecksOnce(t *testing.T) {
	dir := storeRepo(t)
	same(t, dir, false, "search", "--json", "README") // ctx-full makes the store's search copy
	hist, fp := histDir(dir), tipsFP(t, dir)
	w := &warm{dir: hist, cache: map[string]cached{}}
	defer w.close()
	var mu sync.Mutex
	checks := map[string]int{}
	onWarmCheck = func(what string) {
		mu.Lock()
		defer mu.Unlock()
		checks[what]++
	}
	defer func() { onWarmCheck = nil }()
	bg := context.Background()
	for i, q := range [][]string{{"search", "README"}, {"search", "--json", "onboarding"}, {"search", "--json", "onboarding"}} {
		want, ok := search(bg, oneShot{hist}, fp, q)
		if !ok {
			t.Fatalf("%q: not served one-shot", q)
		}
		clear(checks)
		got, ok := w.answer(bg, fp, q)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%q: served %v, same as one-shot %v", q, ok, bytes.Equal(got, want))
		}
		// The first search opens the copy (state finds it closed: the search checks it); the next
		// ones check each once.
		if i > 0 && (checks["index"] != 1 || checks["store"] != 1) {
			t.Errorf("%q: checks %v, want the index and the copy once each", q, checks)
		}
	}
}
