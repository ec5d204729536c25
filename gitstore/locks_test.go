package gitstore_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/gofrs/flock"
)

// deadLock leaves <ref>.lock as a ctx process killed between creating and renaming it leaves it: the lock
// file (here with the new value written) and its hard link under <ctx dir>/reflocks. The real kill -9 of a
// ctx process is in cmd/ctx (TestKillDuringWrite).
func deadLock(t *testing.T, r *gitstore.Repo, dir, ref, content string) string {
	t.Helper()
	lock := filepath.Join(dir, ".git", filepath.FromSlash(ref)+".lock")
	writeFile(t, lock, content)
	if err := os.MkdirAll(filepath.Dir(r.MarkPath(ref)), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(lock, r.MarkPath(ref)); err != nil {
		t.Fatal(err)
	}
	return lock
}

// TestOwnStaleLockRecovered: ctx's own lock left by a dead process is removed at once by the next update
// (no wait for the lock timeout), and ctx status's RefLocks calls it ctx's stale lock.
func TestOwnStaleLockRecovered(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	lock := deadLock(t, r, dir, ref, b.String()+"\n")
	if got := r.RefLocks([]string{ref}); len(got) != 1 || got[0].Owner != "ctx-stale" || got[0].Fix != "" {
		t.Fatalf("RefLocks = %+v, want one ctx-stale lock", got)
	}
	start := time.Now()
	if err := r.UpdateRef(bg, ref, a, b, "after a crash"); err != nil {
		t.Fatalf("UpdateRef over ctx's stale lock: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("recovering took %s: it waited for the lock timeout", d)
	}
	if got := revParse(t, dir, ref); got != b.String() {
		t.Errorf("ref = %s", got)
	}
	for _, p := range []string{lock, r.MarkPath(ref)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	if got := r.RefLocks([]string{ref}); len(got) != 0 {
		t.Errorf("RefLocks after recovery = %+v", got)
	}
	fsck(t, dir)
}

// TestAnyLockedWriteSweepsOwnStaleLocks: taking the ctx lock removes every stale lock ctx knows as its own,
// also on refs the write does not touch (a remote-tracking ref left by a killed push).
func TestAnyLockedWriteSweepsOwnStaleLocks(t *testing.T) {
	dir, r, a, _ := twoCommits(t)
	const tracking = "refs/remotes/origin/ctx"
	testenv.Git(t, dir, "update-ref", tracking, a.String())
	lock := deadLock(t, r, dir, tracking, "")
	set(t, r, pub, "one", map[string]string{"a.md": "a"})
	if _, err := os.Stat(lock); err == nil {
		t.Fatalf("the stale lock on %s survived a write", tracking)
	}
	if _, err := testenv.GitErr(dir, "update-ref", tracking, a.String()); err != nil {
		t.Fatalf("git still finds %s locked: %v", tracking, err)
	}
}

// TestForeignLockReported: a lock ctx did not make is never removed; the error and RefLocks give its age
// and the exact command that removes it.
func TestForeignLockReported(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	lock := filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")
	writeFile(t, lock, "")
	old := time.Now().Add(-5 * time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	err := r.UpdateRef(bg, ref, a, b, "blocked")
	var le *gitstore.LockError
	if !errors.As(err, &le) || !errors.Is(err, gitstore.ErrRefLocked) {
		t.Fatalf("UpdateRef = %v, want a LockError", err)
	}
	msg := err.Error()
	for _, want := range []string{"refs/heads/ctx is locked", "5m", "rm '" + lock + "'"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the foreign lock was removed")
	}
	got := r.RefLocks([]string{ref, "refs/ctx/private"})
	if len(got) != 1 || got[0].Owner != "foreign" || got[0].Fix != "rm '"+lock+"'" || got[0].AgeS < 299 {
		t.Fatalf("RefLocks = %+v", got)
	}
	// A C git lock copied over ctx's mark is not ctx's: only the same file is.
	os.Remove(lock)
	deadLock(t, r, dir, ref, "")
	os.Remove(lock)
	writeFile(t, lock, "")
	if got := r.RefLocks([]string{ref}); len(got) != 1 || got[0].Owner != "foreign" {
		t.Fatalf("a new lock at the path of a stale mark: %+v", got)
	}
}

// TestLiveLockNotTouched: while another ctx process holds the ctx lock, a marked lock is its live one.
func TestLiveLockNotTouched(t *testing.T) {
	dir, r, a, _ := twoCommits(t)
	const ref = "refs/heads/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	other := open(t, dir) // another process's view: its own flock file descriptor
	unlock, err := other.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	lock := deadLock(t, other, dir, ref, "")
	if got := r.RefLocks([]string{ref}); len(got) != 1 || got[0].Owner != "ctx-live" {
		t.Fatalf("RefLocks while held = %+v", got)
	}
	unlock()
	if got := r.RefLocks([]string{ref}); len(got) != 1 || got[0].Owner != "ctx-stale" {
		t.Fatalf("RefLocks after release = %+v", got)
	}
	os.Remove(lock)
}

// TestDeadGitChildLock: a lock a git child of ctx left (its owner record is dead) is ctx's once older than
// a git ref update ever takes; a live owner's lock is left alone.
func TestDeadGitChildLock(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/remotes/origin/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	closeOnly, done := r.StartOwner("fetch", []string{ref})
	defer done()
	lock := filepath.Join(dir, ".git", "refs", "remotes", "origin", "ctx.lock")
	writeFile(t, lock, "")
	if got := r.RefLocks([]string{ref}); len(got) != 1 || got[0].Owner != "ctx-live" {
		t.Fatalf("lock of a live git child: %+v", got)
	}
	closeOnly() // the child and ctx are killed: the record's flock goes away
	if got := r.RefLocks([]string{ref}); len(got) != 1 || got[0].Owner != "ctx-stale" {
		t.Fatalf("a lock of a dead child: %+v", got)
	}
	// The update waits until the lock is older than a git ref update ever takes, then removes it.
	if err := r.UpdateRef(bg, ref, a, b, "recovered"); err != nil {
		t.Fatal(err)
	}
	if exists(lock) {
		t.Fatalf("the dead child's lock is still there")
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git", "ctx", "owners")); len(entries) != 0 {
		t.Errorf("dead owner records left: %d", len(entries))
	}
}

// TestTransactAllOrNothing: a multi-ref transaction (a scope move) moves both refs or neither: with a lock
// on one of them, and with a failure injected after the first ref moved.
func TestTransactAllOrNothing(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	set(t, r, pub, "init", map[string]string{"knowledge/k.md": "k"})
	set(t, r, priv, "init", map[string]string{"other.md": "o"})
	move := func() error {
		_, err := r.Transact(bg, []string{priv, pub}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
			return map[string]*gitstore.Write{
				priv: {Changes: []gitstore.Change{{Path: "knowledge/k.md", Data: []byte("k")}}, Message: "move"},
				pub:  {Changes: []gitstore.Change{{Path: "knowledge/k.md", Delete: true}}, Message: "move"},
			}, nil
		})
		return err
	}
	before := forEachRef(t, dir)

	lock := filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")
	writeFile(t, lock, "")
	if err := move(); !errors.Is(err, gitstore.ErrRefLocked) {
		t.Fatalf("move with %s present: %v", lock, err)
	}
	if got := forEachRef(t, dir); got != before {
		t.Fatalf("a ref moved although another was locked:\n%s\nwas\n%s", got, before)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "ctx", "private.lock")); err == nil {
		t.Fatalf("the first ref's lock was left behind")
	}
	os.Remove(lock)

	restore := gitstore.SetAfterRefRenamed(func(ref string) error { return errors.New("injected failure") })
	err := move()
	restore()
	if err == nil || !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), "no ref was changed") {
		t.Fatalf("move with a failure between the refs: %v", err)
	}
	if got := forEachRef(t, dir); got != before {
		t.Fatalf("refs after a failed move:\n%s\nwas\n%s", got, before)
	}
	for _, p := range []string{"refs/heads/ctx.lock", "refs/ctx/private.lock", "ctx/transaction.json"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", p)); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	if err := move(); err != nil {
		t.Fatal(err)
	}
	if got := forEachRef(t, dir); got == before {
		t.Fatal("the move did not land")
	}
	fsck(t, dir)
	_ = gitstore.ZeroHash
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestLockWaitBackoffAndNotice: a process waiting for the ctx lock held by another process tries it a few
// times a second (it retried every 2 ms, burning a core for as long as it waited), says after a second which
// lock it waits for and who holds it (the pid the holder recorded, while that process lives), and takes
// the lock once it is released.
func TestLockWaitBackoffAndNotice(t *testing.T) {
	dir, r, _, _ := twoCommits(t)
	ctxDir := filepath.Join(dir, ".git", "ctx")
	if err := os.MkdirAll(ctxDir, 0o777); err != nil {
		t.Fatal(err)
	}
	// The holder: the flock taken through another open file (as another process holds it), and the pid of a
	// live process recorded as Lock records its own.
	holder := flock.New(filepath.Join(ctxDir, "lock"))
	if ok, err := holder.TryLock(); err != nil || !ok {
		t.Fatalf("take the lock: %v %v", ok, err)
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	writeFile(t, filepath.Join(ctxDir, "lock.holder"), strconv.Itoa(sleeper.Process.Pid)+"\n")

	var notice syncBuffer
	gitstore.LockWaitNotice = &notice
	defer func() { gitstore.LockWaitNotice = os.Stderr }()
	before := gitstore.LockTries()
	got := make(chan error, 1)
	go func() {
		unlock, err := r.Lock(bg)
		if err == nil {
			unlock()
		}
		got <- err
	}()
	// Wait until the notice is written (after about a second), then some more.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(notice.String(), "waiting") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	select {
	case err := <-got:
		t.Fatalf("Lock returned while the lock was held: %v", err)
	default:
	}
	tries := gitstore.LockTries() - before
	// ctx status names the holder the same way.
	if got, want := r.CtxLockHolder(), filepath.Join(ctxDir, "lock")+" held by another ctx process (pid "+strconv.Itoa(sleeper.Process.Pid)+")"; got != want {
		t.Errorf("CtxLockHolder = %q, want %q", got, want)
	}
	want := "ctx: waiting for the lock " + filepath.Join(ctxDir, "lock") + " held by another ctx process (pid " + strconv.Itoa(sleeper.Process.Pid) + ")\n"
	if n := notice.String(); n != want {
		t.Errorf("notice = %q, want %q", n, want)
	}
	// At least 2 s of waiting: with a fixed 2 ms pause that is about 1,000 tries; with the backoff to 64 ms,
	// about 40.
	if tries > 100 {
		t.Errorf("%d tries of the flock in about 2 s of waiting: no backoff", tries)
	}
	_ = holder.Unlock()
	if err := <-got; err != nil {
		t.Fatalf("Lock after the release: %v", err)
	}
	if got := r.CtxLockHolder(); got != "" {
		t.Errorf("CtxLockHolder of a free lock = %q", got)
	}
	// The holder's record is emptied with the lock (not removed: no file created and freed per lock), so
	// the next waiter does not name a process that left.
	if b, err := os.ReadFile(filepath.Join(ctxDir, "lock.holder")); err != nil || len(b) != 0 {
		t.Errorf("lock.holder after unlock: %q %v, want an empty file", b, err)
	}
	before1, _ := os.Lstat(filepath.Join(ctxDir, "lock.holder"))
	unlock, err := r.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if after, _ := os.Lstat(filepath.Join(ctxDir, "lock.holder")); before1 == nil || after == nil || !os.SameFile(before1, after) {
		t.Error("a second lock replaced lock.holder's file: want it rewritten in place")
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLockHolderRace: the holder file is written just after the lock is taken, so a waiting process that
// reads it in between must not say the holder is not ctx: it reads the file again, and with no pid even
// then it says that the holder may be a ctx process that has not written it yet.
func TestLockHolderRace(t *testing.T) {
	holder := filepath.Join(t.TempDir(), "lock.holder")
	live := os.Getppid() // alive, and not this process
	got := gitstore.LockHolder(holder, func() { writeFile(t, holder, strconv.Itoa(live)+"\n") })
	if want := "another ctx process (pid " + strconv.Itoa(live) + ")"; got != want {
		t.Errorf("holder written between the reads: %q, want %q", got, want)
	}
	if err := os.Remove(holder); err != nil {
		t.Fatal(err)
	}
	if got := gitstore.LockHolder(holder, func() {}); strings.Contains(got, "not a ctx process") || !strings.Contains(got, "ctx process that has not written its pid yet") {
		t.Errorf("no holder file: %q", got)
	}
}
