package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ctx-dev/ctx/internal/searchsock"
	"golang.org/x/sys/unix"
)

// maxConns is how many connections a server answers at once; more wait in the listen queue.
const maxConns = 8

// runServer serves searches of the index in dir on dir's socket until it is idle for idle (0: never),
// its socket file is removed or replaced, its program file is replaced (another build), the index is
// removed, or it gets SIGINT, SIGTERM or SIGHUP. It says why it stopped on log. auto is a server an
// automatic start started (searchsock.AutoStart): once it holds the lock it checks that the automatic
// start is still on and stops at once when it is not, so that no server outlives `ctx history server
// disable` (which removes the marker before it looks for a server to stop).
func runServer(ctx context.Context, dir string, idle time.Duration, auto bool, log io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("search server: %w", err)
	}
	build, err := searchsock.BuildID(exe)
	if err != nil {
		return fmt.Errorf("search server: %w", err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "index.db")); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("search server: no history index in %s (ctx history import builds it)", dir)
	}
	w := &warm{dir: dir}
	if os.Getenv("CTX_SEARCH_SERVER_CACHE") != "0" {
		w.cache = make(map[string]cached)
	}
	defer w.close()
	// Open the index now: the first search should not pay for it, and a damaged one is said here.
	_, release, err := w.index(ctx)
	if err != nil {
		return fmt.Errorf("search server: %w", err)
	}
	release()
	l, err := searchsock.Listen(dir, tick)
	if err != nil {
		return err
	}
	defer l.Close()
	// A start in progress is over: the next front that finds no server may start one (searchsock.AutoStart).
	if err := os.Remove(filepath.Join(dir, searchsock.StartingName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(log, "%s search server: %v\n", time.Now().Format(time.RFC3339), err)
	}
	if auto && !searchsock.AutoOn(dir) {
		// The front decided to start this server before disable removed the marker; disable found no
		// server holding the lock, so this one must not stay.
		fmt.Fprintf(log, "%s search server: pid %d stopped: the automatic start was turned off (ctx history server disable) while it started\n", time.Now().Format(time.RFC3339), os.Getpid())
		return nil
	}
	var stop atomic.Value // why it stops (string)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	go func() {
		if s, ok := <-sig; ok {
			stop.CompareAndSwap(nil, "signal "+s.String())
		}
	}()
	// This server holds the lock: the log is its own from here (servers started beside it wrote only that
	// the lock is held, and its starter appends).
	truncateLog(dir, log)
	idleText := fmt.Sprintf("idle exit after %v", idle)
	if idle <= 0 {
		idleText = "no idle exit"
	}
	fmt.Fprintf(log, "%s search server: pid %d, socket %s, %s, answers cached: %v\n", time.Now().Format(time.RFC3339), os.Getpid(), filepath.Join(dir, searchsock.Name), idleText, w.cache != nil)
	var (
		wg       sync.WaitGroup
		inFlight atomic.Int32
		lastUse  atomic.Int64 // Unix nanoseconds
		checked  time.Time
	)
	sem := make(chan struct{}, maxConns)
	lastUse.Store(time.Now().UnixNano())
	otherBuild := make(chan struct{}, 1)
	for stop.Load() == nil {
		fd, err := l.Accept(ioTimeout)
		switch {
		case err == nil:
			lastUse.Store(time.Now().UnixNano())
			inFlight.Add(1)
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; inFlight.Add(-1); lastUse.Store(time.Now().UnixNano()); wg.Done() }()
				if serveConn(ctx, w, build, fd) == errOtherBuild {
					select {
					case otherBuild <- struct{}{}:
					default:
					}
				}
			}()
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR), errors.Is(err, unix.ECONNABORTED):
		default:
			stop.CompareAndSwap(nil, "accept: "+err.Error())
		}
		select {
		case <-otherBuild:
			checked = time.Time{} // a client of another build: is this program still installed?
		default:
		}
		if time.Since(checked) < tick {
			continue
		}
		checked = time.Now()
		switch {
		case !l.Ours() && l.Stopped():
			stop.CompareAndSwap(nil, "ctx history server stop (or disable) stopped it")
		case !l.Ours():
			stop.CompareAndSwap(nil, "its socket was removed or replaced")
		case idle > 0 && inFlight.Load() == 0 && time.Since(time.Unix(0, lastUse.Load())) > idle:
			stop.CompareAndSwap(nil, fmt.Sprintf("idle for %v", idle))
		}
		if id, err := searchsock.BuildID(exe); err != nil || id != build {
			stop.CompareAndSwap(nil, "its program "+exe+" was replaced or removed")
		}
		if _, err := os.Lstat(filepath.Join(dir, "index.db")); err != nil {
			stop.CompareAndSwap(nil, "the index was removed")
		}
	}
	l.Close() // no new connection; those accepted are answered
	wg.Wait()
	fmt.Fprintf(log, "%s search server: pid %d stopped: %s\n", time.Now().Format(time.RFC3339), os.Getpid(), stop.Load())
	return nil
}

// errOtherBuild is serveConn's error for a client of another build.
var errOtherBuild = errors.New("a client of another build")

// serveConn answers one request on the connection fd and closes it. The client is untrusted: its uid
// must be this process's (SO_PEERCRED), its request is bounded (searchsock.ReadRequest) and read as
// ctx-search reads its command line (searchargs, the fingerprint's form), and it gets the one-shot
// path's answer or a hand-over.
func serveConn(ctx context.Context, w *warm, build string, fd int) error {
	defer unix.Close(fd)
	if err := searchsock.CheckPeer(fd); err != nil {
		return err
	}
	r, err := searchsock.ReadRequest(fd)
	if err != nil {
		return err
	}
	if r.Build != build {
		_ = searchsock.WriteAll(fd, []byte{searchsock.OtherBuild})
		return errOtherBuild
	}
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	out, ok := w.answer(ctx, r.FP, r.Args[1:])
	if !ok {
		return searchsock.WriteAll(fd, []byte{searchsock.HandOver})
	}
	return searchsock.WriteAll(fd, append([]byte{searchsock.Answer}, out...))
}

// logName is the server's log beside its socket: when it started and why it stopped (emptied by the
// server that wins the lock, appended to by every start: concurrent starts overwrote each other's lines).
const logName = searchsock.LogName

// truncateLog empties dir's search.log when log is that file (a server its starter started), so that it
// holds this server's lines only: the file is opened for appending, so nothing written after is lost.
func truncateLog(dir string, log io.Writer) {
	f, ok := log.(*os.File)
	if !ok {
		return
	}
	fi, err := f.Stat()
	if err != nil {
		return
	}
	li, err := os.Lstat(filepath.Join(dir, logName))
	if err != nil || !os.SameFile(fi, li) {
		return
	}
	_ = f.Truncate(0) // an old server's lines kept is no harm
}

// startServer starts `ctx-search --server run DIR` in its own session, in the background, with its
// output to dir's search.log, and waits until it listens.
func startServer(dir string, idle time.Duration) int {
	if searchsock.Running(dir) {
		fmt.Printf("a search server already runs for %s (pid %d)\n", dir, searchsock.ReadPID(dir))
		return 0
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctx: %v\n", err)
		return 1
	}
	logPath := filepath.Join(dir, logName)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctx: search server: %v\n", err)
		return 1
	}
	defer logf.Close()
	cmd := exec.Command(exe, "--server", "run", dir, "--idle", idle.String())
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "ctx: search server: %v\n", err)
		return 1
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }() //nolint:errcheck // its log says why
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-exited:
			if searchsock.Running(dir) { // another start won the lock meanwhile
				fmt.Printf("a search server already runs for %s (pid %d)\n", dir, searchsock.ReadPID(dir))
				return 0
			}
			b, _ := os.ReadFile(logPath)
			fmt.Fprintf(os.Stderr, "ctx: the search server did not start: %s", b)
			return 1
		case <-time.After(10 * time.Millisecond):
		}
		if fi, err := os.Lstat(filepath.Join(dir, searchsock.Name)); err == nil && fi.Mode()&os.ModeSocket != 0 && searchsock.ReadPID(dir) == cmd.Process.Pid {
			fmt.Printf("search server started for %s (pid %d; log %s; stop: ctx history server stop)\n", dir, cmd.Process.Pid, logPath)
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "ctx: the search server (pid %d) did not listen within 30 s; log: %s\n", cmd.Process.Pid, logPath)
	return 1
}

// stopServer stops dir's server: it renames the socket aside (searchsock.Stop: the server notices within a
// tick, logs who stopped it and exits) and waits until the server released its lock, then SIGTERM after
// 10 s.
func stopServer(dir string) int {
	if !searchsock.Running(dir) {
		fmt.Printf("no search server runs for %s\n", dir)
		return 0
	}
	pid := searchsock.ReadPID(dir)
	if err := searchsock.Stop(dir); err != nil {
		fmt.Fprintf(os.Stderr, "ctx: search server: %v\n", err)
		return 1
	}
	for i := 0; searchsock.Running(dir); i++ {
		if i == 1000 && pid > 0 { // 10 s
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		if i == 3000 {
			fmt.Fprintf(os.Stderr, "ctx: the search server (pid %d) did not stop\n", pid)
			return 1
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = os.Remove(filepath.Join(dir, searchsock.StopName)) // left by a server killed before it removed it
	fmt.Printf("search server stopped for %s (pid %d)\n", dir, pid)
	if searchsock.AutoOn(dir) {
		fmt.Println("automatic start is on: the next search starts it again (ctx history server disable turns it off)")
	}
	return 0
}

// serverStatus says whether a server runs for dir, and its pid and socket, then whether the automatic
// start is on.
func serverStatus(dir string) int {
	if !searchsock.Running(dir) {
		fmt.Printf("no search server runs for %s\n", dir)
	} else {
		fmt.Printf("search server running for %s (pid %d; socket %s; log %s)\n", dir, searchsock.ReadPID(dir),
			filepath.Join(dir, searchsock.Name), filepath.Join(dir, logName))
	}
	if searchsock.AutoOn(dir) {
		fmt.Println("automatic start: on (a search that finds no server starts one; ctx history server disable turns it off)")
	} else {
		fmt.Println("automatic start: off (ctx history server enable turns it on)")
	}
	return 0
}

// enableServer turns the automatic start on for dir's index (docs/architecture.md "The search server"):
// it writes the marker (searchsock.AutoName) atomically into the folder, which must hold the index and be
// this user's alone, then starts the server as startServer does. When the server does not start (a
// damaged index, a socket path over 107 bytes) it removes the marker again: the automatic start stays off
// rather than every search starting a server that cannot start.
func enableServer(dir string) int {
	if fi, err := os.Lstat(filepath.Join(dir, "index.db")); err != nil || !fi.Mode().IsRegular() {
		fmt.Fprintf(os.Stderr, "ctx: no history index in %s (ctx history import builds it)\n", dir)
		return 1
	}
	if err := searchsock.CheckDir(dir); err != nil {
		fmt.Fprintf(os.Stderr, "ctx: search server: %v\n", err)
		return 1
	}
	if err := writeMarker(dir); err != nil {
		fmt.Fprintf(os.Stderr, "ctx: search server: %v\n", err)
		return 1
	}
	if code := startServer(dir, defaultIdle); code != 0 {
		if err := os.Remove(filepath.Join(dir, searchsock.AutoName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "ctx: search server: %v\n", err)
		} else {
			fmt.Fprintln(os.Stderr, "ctx: automatic start left off")
		}
		return code
	}
	fmt.Printf("automatic start on for %s (a search that finds no server starts one; off: ctx history server disable)\n", dir)
	return 0
}

// writeMarker writes dir's marker of the automatic start atomically: a temporary file of mode 0600
// (os.CreateTemp), synced, renamed over it. (Not internal/atomicfile: ctx-search links the standard
// library and the index only, .golangci.yml "search-program-is-lean".)
func writeMarker(dir string) error {
	f, err := os.CreateTemp(dir, "."+searchsock.AutoName+".tmp*")
	if err != nil {
		return fmt.Errorf("automatic start: %w", err)
	}
	_, err = f.WriteString("ctx history server enable: a search that finds no search server starts one (off: ctx history server disable)\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, searchsock.AutoName))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("automatic start: %w", err)
	}
	return nil
}

// disableServer turns the automatic start off for dir's index: it removes the marker and a start stamp,
// then stops the server as stopServer does.
func disableServer(dir string) int {
	for _, name := range []string{searchsock.AutoName, searchsock.StartingName} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "ctx: search server: %v\n", err)
			return 1
		}
	}
	fmt.Printf("automatic start off for %s\n", dir)
	return stopServer(dir)
}
