package gitstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctx-dev/ctx/gitstore/reflock"
	"github.com/ctx-dev/ctx/internal/plainfile"
	"github.com/gofrs/flock"
)

// Lock recovery (docs/locks.md). ctx moves a ref the way C git does, through <ref>.lock, and a process
// killed between creating and renaming that file leaves it behind: every later writer, ctx or git, then
// fails with "ref is locked". ctx tells its own stale locks from everyone else's:
//
//   - A lock ctx creates itself (UpdateRef, Transact) is created while ctx holds its flock,
//     <common dir>/ctx/lock, first as its mark <common dir>/ctx/reflocks/<ref>, then hard-linked as
//     <ref>.lock (link(2) refuses an existing lock as O_EXCL does): while the mark and the lock are the
//     same file, the lock is ctx's, from the lock's first instant. A process holding the flock and finding such
//     a lock knows its creator is gone (a live creator would still hold the flock), so it removes it.
//   - A git child ctx runs (fetch, push, gc) may lock refs too. Before it starts, ctx writes an owner
//     record, <common dir>/ctx/owners/<pid>-<n>.json, naming the refs it may lock, and holds an flock on
//     it that the child inherits: while ctx or the child lives, the record is live. A lock on one of those
//     refs, made after the record and older than staleAfter, whose records are all dead, is ctx's stale
//     lock.
//   - Anything else is foreign (C git, another tool, a lock older than ctx knows of): ctx never removes
//     it. It waits refLockTimeout, then fails with a *LockError that gives the lock's age and the command
//     that removes it.

// staleAfter is how old a lock left by a dead git child must be before ctx removes it: C git holds a ref
// lock for milliseconds, so a lock this old whose owner is gone is not being written.
const staleAfter = 2 * time.Second

// LockError is a <ref>.lock that blocks a ref update and that ctx cannot prove to be its own stale lock:
// another process is updating the ref, or crashed while doing so. Error gives the lock's path and age and
// the exact fix. It wraps ErrRefLocked.
type LockError struct {
	Ref  string
	Path string        // the lock file
	Age  time.Duration // since the lock file was last written
	Live bool          // held by a running ctx process (a transfer or gc it started)
}

func (e *LockError) Error() string {
	age := e.Age.Round(time.Second)
	if e.Live {
		return fmt.Sprintf("%s is locked by a running ctx process (%s, %s old): wait for it to finish", e.Ref, e.Path, age)
	}
	return fmt.Sprintf("%s is locked: %s exists (%s old) and no ctx process made it; if no git command is running "+
		"in this repository, remove it: rm %s", e.Ref, e.Path, age, shellQuote(e.Path))
}

func (e *LockError) Unwrap() error { return ErrRefLocked }

// shellQuote quotes a path for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// LockInfo is a lock file on a ref (ctx status, docs/locks.md).
type LockInfo struct {
	Ref   string    `json:"ref"`
	Path  string    `json:"path"`
	AgeS  int64     `json:"age_seconds"`
	Owner LockOwner `json:"owner"`
	Fix   string    `json:"fix,omitempty"`
}

// LockOwner says whose a ref lock is (docs/locks.md).
type LockOwner string

// Lock owners, as classify sees them.
const (
	// LockForeign: not ctx's (git, an editor, a tool): ctx never removes it.
	LockForeign LockOwner = "foreign"
	// LockStale: left by an interrupted ctx; its next write, push or pull removes it.
	LockStale LockOwner = "ctx-stale"
	// LockLive: held by a running ctx process.
	LockLive LockOwner = "ctx-live"

	ownerForeign  = LockForeign
	ownerCtxStale = LockStale
	ownerCtxLive  = LockLive
	// ownerCtxDying: a lock of a dead git child younger than staleAfter; waited for until it is stale.
	ownerCtxDying LockOwner = "ctx-dying"
)

// String is the owner's name as ctx status prints it ("ctx-stale").
func (o LockOwner) String() string { return string(o) }

// Lock takes the ctx lock, <git common dir>/ctx/lock (an advisory flock shared by every ctx process and
// every worktree of the repository), waiting until ctx is done. The returned function releases it.
// It is not reentrant: a goroutine holding it must not take it again (UpdateRef takes it).
func (r *Repo) Lock(ctx context.Context) (unlock func(), err error) {
	if err := os.MkdirAll(r.CtxDir(), 0o777); err != nil {
		return nil, fmt.Errorf("ctx lock: %w", err)
	}
	fl := flock.New(filepath.Join(r.CtxDir(), "lock"))
	holder := filepath.Join(r.CtxDir(), "lock.holder")
	release, err := waitFlock(ctx, fl, holder)
	if err != nil {
		return nil, fmt.Errorf("ctx lock %s: %w", fl.Path(), err)
	}
	// Who holds the lock, for the processes that wait (waitFlock): emptied before the lock is released.
	// Emptied, not removed: the next write rewrites the same file, where a removal made every write create
	// and free an inode (ext4 searches its bitmaps for a free one; bench/README.md "Twelfth round").
	// Written in place and emptied through the same descriptor, never truncated to nothing by its path:
	// ext4 writes a file so truncated and written again back to disk at its close (plainfile.Overwrite).
	hf, err := plainfile.OpenFile(holder, os.O_WRONLY|os.O_CREATE, 0o666)
	if err == nil && plainfile.OverwriteFile(hf, []byte(strconv.Itoa(os.Getpid())+"\n")) != nil {
		_ = hf.Close()
		hf = nil
	}
	r.recoverTransaction(ctx) // a multi-ref update a killed ctx process left half done
	r.sweepStale()
	r.sweepQuarantines(ctx) // the quarantine refs of fetches whose process is gone
	return func() {
		if hf != nil {
			_ = hf.Truncate(0) // an empty holder names no process (lockHolder)
			_ = hf.Close()
		}
		release()
	}, nil
}

// LockWaitNotice receives the one line a process writes when it has waited lockNoticeAfter for a lock
// (waitFlock): standard error by default (standard output is a command's result, or the MCP protocol).
var LockWaitNotice io.Writer = os.Stderr

// lockNoticeAfter is how long a process waits for a lock before it says so; lockMaxDelay is the longest
// pause between two tries: a process that waits costs a few wake-ups a second, and takes the lock at most
// that late after it is released.
const (
	lockNoticeAfter = time.Second
	lockMaxDelay    = 64 * time.Millisecond
)

// waitFlock takes fl, waiting until it is free or ctx ends (ctx.Err). It tries at once, then after pauses
// that double from 1 ms to lockMaxDelay, and after lockNoticeAfter writes one line to LockWaitNotice naming
// the lock and the process that holds it, as recorded in holder (a pid, written by Lock; "" for none).
// There is no other bound: the lock is held for the length of one ctx write or ref update, and Ctrl-C
// (ctx) ends the wait (docs/locks.md "Waiting for the ctx lock").
//
// Goroutines of one process wait in line first (a channel per lock file, handed over at once on
// release), so that only one of them polls the flock: the backoff's pauses then cost nothing between
// the writers of one process (an MCP server's concurrent requests). release unlocks the flock, then lets
// the next goroutine in.
func waitFlock(ctx context.Context, fl *flock.Flock, holder string) (release func(), err error) {
	line := inProcess(fl.Path())
	select {
	case line <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := pollFlock(ctx, fl, holder); err != nil {
		<-line
		return nil, err
	}
	return func() {
		_ = fl.Unlock()
		<-line
	}, nil
}

// inProcessLines holds one channel of capacity 1 per lock path (waitFlock).
var inProcessLines sync.Map // string -> chan struct{}

func inProcess(path string) chan struct{} {
	ch, _ := inProcessLines.LoadOrStore(path, make(chan struct{}, 1))
	return ch.(chan struct{})
}

// pollFlock is waitFlock's wait for the flock itself (held by another process).
func pollFlock(ctx context.Context, fl *flock.Flock, holder string) error {
	start, delay, told := time.Now(), time.Millisecond, false
	for {
		lockTries.Add(1)
		ok, err := fl.TryLock()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if !told && time.Since(start) >= lockNoticeAfter && LockWaitNotice != nil {
			told = true
			fmt.Fprintf(LockWaitNotice, "ctx: waiting for the lock %s held by %s\n", fl.Path(), lockHolder(holder))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, lockMaxDelay)
	}
}

// lockTries counts the tries of waitFlock (tests: a wait must cost a few tries a second).
var lockTries atomic.Int64

// lockHolder names the process recorded in holder ("another ctx process (pid 123)") when that process is
// alive, else "another process" with what ctx knows: a ctx process writes its pid just after it takes the
// lock (Lock), so a holder file missing, empty or naming a dead process is read once more after holderGrace, and
// if it still names no live process the holder is not ctx (flock(1), a git hook), or a ctx process that
// took the lock an instant ago and has not written its pid yet. holder "" (a lock that records no pid,
// LockCheckout): "another process".
func lockHolder(holder string) string {
	if holder == "" {
		return "another process"
	}
	for try := 0; try < 2; try++ {
		if try > 0 {
			if holderReread != nil {
				holderReread()
			} else {
				time.Sleep(holderGrace)
			}
		}
		if b, err := os.ReadFile(holder); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && pid != os.Getpid() && processAlive(pid) {
				return fmt.Sprintf("another ctx process (pid %d)", pid)
			}
		}
	}
	return "another process (no live process recorded its pid: not ctx, or a ctx process that has not written its pid yet)"
}

// holderGrace is lockHolder's wait before it reads the holder file again: far longer than the moment
// between a ctx process's flock and its write of the pid.
const holderGrace = 50 * time.Millisecond

// holderReread, when set (tests), replaces lockHolder's wait before its second read.
var holderReread func()

// LockCheckout takes the lock that serialises writes to this worktree's checked-out files,
// <git dir>/ctx/checkout.lock (an advisory flock of this worktree only: each worktree has its own checked-out
// tree), waiting until it is free or ctx ends. The returned function releases it. Independent of the ctx
// lock (Lock): a refresh holds this one while it reads refs and writes files.
func (r *Repo) LockCheckout(ctx context.Context) (unlock func(), err error) {
	dir := filepath.Join(r.gitDir, "ctx")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("checkout lock: %w", err)
	}
	fl := flock.New(filepath.Join(dir, "checkout.lock"))
	release, err := waitFlock(ctx, fl, "")
	if err != nil {
		return nil, fmt.Errorf("checkout lock %s: %w", fl.Path(), err)
	}
	return release, nil
}

// sweepStale removes every stale lock ctx knows as its own (docs/locks.md): the marked ref locks (the
// caller holds the ctx lock, so their creators are gone) and the locks of dead owner records. Call with
// the ctx lock held, after recoverTransaction.
func (r *Repo) sweepStale() {
	if marks, err := os.ReadDir(filepath.Join(r.CtxDir(), "reflocks")); err == nil {
		for _, m := range marks {
			name, err := url.PathUnescape(m.Name())
			if err != nil {
				continue
			}
			lockPath := r.refPath(name) + ".lock"
			fi, lerr := os.Lstat(lockPath)
			mi, merr := os.Lstat(filepath.Join(r.CtxDir(), "reflocks", m.Name()))
			if lerr == nil && merr == nil && os.SameFile(fi, mi) {
				_ = os.Remove(lockPath)
			}
			_ = os.Remove(filepath.Join(r.CtxDir(), "reflocks", m.Name()))
		}
	}
	entries, err := os.ReadDir(r.ownersDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(r.ownersDir(), e.Name())
		rec, ok := readOwner(p)
		if !ok || ownerAlive(p) {
			continue
		}
		for _, ref := range rec.Refs {
			lockPath := r.refPath(ref) + ".lock"
			if owner, _, ok := r.classify(ref, lockPath, true); ok && owner == ownerCtxStale {
				_ = os.Remove(lockPath)
			}
		}
	}
	r.gcOwners()
}

// RecoverInterrupted completes a multi-ref update that a killed ctx process left half done, so that readers
// never see it half landed (docs/locks.md). Cheap when there is none (one stat); otherwise it takes the ctx
// lock, which completes it.
func (r *Repo) RecoverInterrupted(ctx context.Context) error {
	if _, err := os.Stat(r.journalPath()); err != nil {
		return nil
	}
	unlock, err := r.Lock(ctx)
	if err != nil {
		return err
	}
	unlock()
	return nil
}

// CtxLockHolder says who holds the ctx lock right now: "" when it is free, else its path and holder
// ("/repo/.git/ctx/lock held by another ctx process (pid 4242)", as a waiting process says it). ctx
// status shows it (docs/locks.md "Waiting for the ctx lock").
func (r *Repo) CtxLockHolder() string {
	if _, err := os.Stat(filepath.Join(r.CtxDir(), "lock")); err != nil || r.ctxLockFree() {
		return ""
	}
	return filepath.Join(r.CtxDir(), "lock") + " held by " + lockHolder(filepath.Join(r.CtxDir(), "lock.holder"))
}

// ctxLockFree reports whether no process holds the ctx lock right now (it is taken and released at once).
func (r *Repo) ctxLockFree() bool {
	fl := flock.New(filepath.Join(r.CtxDir(), "lock"))
	ok, err := fl.TryLock()
	if err != nil || !ok {
		return false
	}
	_ = fl.Unlock()
	return true
}

// refPath is the loose ref file of name, in the git dir that holds it (refDir: the local store for the
// private and ephemeral refs).
func (r *Repo) refPath(name string) string {
	return filepath.Join(r.refDir(name), filepath.FromSlash(name))
}

// markPath is where ctx hard-links a ref lock it creates.
func (r *Repo) markPath(name string) string { return reflock.MarkPath(r.CtxDir(), name) }

// createRefLock creates <ref>.lock exclusively, marked as ctx's from its first instant. Call with the ctx
// lock held. The file is created as its mark, <common dir>/ctx/reflocks/<ref>, and then hard-linked as
// <ref>.lock: link(2) fails when the lock exists, as O_EXCL does, and a process killed at any moment leaves
// either an unlinked mark (swept) or a lock that is its mark's file (ctx's, recovered); never an unmarked
// lock of ctx's. A lock that is there already is classified: ctx's own stale lock is removed and creation
// retried at once; any other is waited for until refLockTimeout, then a *LockError.
func (r *Repo) createRefLock(ctx context.Context, name string) (*os.File, error) {
	lockPath := r.refPath(name) + ".lock"
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o777); err != nil {
		return nil, fmt.Errorf("update ref %s: %w", name, err)
	}
	deadline := time.Now().Add(refLockTimeout)
	for {
		f, err := r.createMarked(name, lockPath)
		if err == nil {
			FaultPoint("ref-locked", name)
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("update ref %s: create lock: %w", name, err)
		}
		owner, age, ok := r.classify(name, lockPath, true)
		if ok && owner == ownerCtxStale {
			r.removeStale(name, lockPath)
			continue
		}
		if owner == ownerCtxDying {
			deadline = later(deadline, time.Now().Add(staleAfter-age+10*time.Millisecond))
		}
		if time.Now().After(deadline) {
			if !ok {
				continue // it went away just now
			}
			return nil, fmt.Errorf("update ref %s: %w", name, &LockError{Ref: name, Path: lockPath, Age: age, Live: owner == ownerCtxLive})
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// createMarked creates lockPath as a hard link of a new mark file and returns the file open for writing.
// The error wraps fs.ErrExist when lockPath exists; the mark of an existing lock is left alone. Where the
// file system has no hard links, the lock is created with O_EXCL unmarked (a crash then leaves a lock that
// ctx reports as foreign).
func (r *Repo) createMarked(name, lockPath string) (*os.File, error) {
	return reflock.CreateMarked(r.markPath(name), lockPath, func() { FaultPoint("ref-marked", name) })
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// unmark removes the mark of a ref lock once the lock is renamed or removed.
func (r *Repo) unmark(name string) { _ = os.Remove(r.markPath(name)) }

// removeStale removes a stale lock of ctx's and its mark.
func (r *Repo) removeStale(name, lockPath string) {
	_ = os.Remove(lockPath)
	r.unmark(name)
	r.gcOwners()
}

// classify says whose the lock file at lockPath is (docs/locks.md). held says the caller holds the ctx
// lock (so no ctx process is inside a ref update); without it, a marked lock is stale only when the ctx
// lock is free. ok is false when the lock file no longer exists.
func (r *Repo) classify(name, lockPath string, held bool) (owner LockOwner, age time.Duration, ok bool) {
	fi, err := os.Lstat(lockPath)
	if err != nil {
		return "", 0, false
	}
	age = time.Since(fi.ModTime())
	if mi, err := os.Lstat(r.markPath(name)); err == nil && os.SameFile(fi, mi) {
		if held || r.ctxLockFree() {
			return ownerCtxStale, age, true
		}
		return ownerCtxLive, age, true
	}
	live, dead := r.ownersOf(name, fi.ModTime())
	switch {
	case live:
		return ownerCtxLive, age, true
	case dead && age >= staleAfter:
		return ownerCtxStale, age, true
	case dead:
		return ownerCtxDying, age, true
	}
	return ownerForeign, age, true
}

// ownerRecord is an owner file: a git child ctx started and the refs it may lock.
type ownerRecord struct {
	PID     int      `json:"pid"`
	Op      string   `json:"op"`
	Started int64    `json:"started_unix_nano"`
	Refs    []string `json:"refs"`
}

func (r *Repo) ownersDir() string { return filepath.Join(r.CtxDir(), "owners") }

// ownersOf reports whether a live owner record names ref, and whether a dead one that started before the
// lock was written (with a second of slack for coarse file times) does.
func (r *Repo) ownersOf(ref string, lockTime time.Time) (live, dead bool) {
	entries, err := os.ReadDir(r.ownersDir())
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		p := filepath.Join(r.ownersDir(), e.Name())
		rec, ok := readOwner(p)
		if !ok || !contains(rec.Refs, ref) {
			continue
		}
		if ownerAlive(p) {
			live = true
			continue
		}
		if time.Unix(0, rec.Started).Before(lockTime.Add(time.Second)) {
			dead = true
		}
	}
	return live, dead
}

func readOwner(p string) (ownerRecord, bool) {
	var rec ownerRecord
	b, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return rec, false
	}
	return rec, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// gcOwners removes dead owner records none of whose refs is locked any more.
func (r *Repo) gcOwners() {
	entries, err := os.ReadDir(r.ownersDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(r.ownersDir(), e.Name())
		if ownerAlive(p) {
			continue
		}
		rec, _ := readOwner(p)
		locked := false
		for _, ref := range rec.Refs {
			if _, err := os.Lstat(r.refPath(ref) + ".lock"); err == nil {
				locked = true
			}
		}
		if !locked {
			_ = os.Remove(p)
		}
	}
}

// RefLocks lists the lock files present on refs (full ref names), with their owner and age and, for a
// foreign one, the command that removes it (ctx status). It changes nothing.
func (r *Repo) RefLocks(refs []string) []LockInfo {
	var out []LockInfo
	for _, ref := range refs {
		lockPath := r.refPath(ref) + ".lock"
		owner, age, ok := r.classify(ref, lockPath, false)
		if !ok {
			continue
		}
		if owner == ownerCtxDying {
			owner = ownerCtxStale
		}
		li := LockInfo{Ref: ref, Path: lockPath, AgeS: int64(age / time.Second), Owner: owner}
		if owner == ownerForeign {
			li.Fix = "rm " + shellQuote(lockPath)
		}
		out = append(out, li)
	}
	return out
}

// RecoverLocks takes the ctx lock and removes ctx's own stale locks on refs (docs/locks.md); a foreign or
// live lock is waited for as UpdateRef waits, then returned as a *LockError. Callers run it before a git
// child that will update those refs (fetch into a remote-tracking ref), so that git does not fail on a lock
// ctx left behind.
func (r *Repo) RecoverLocks(ctx context.Context, refs []string) error {
	unlock, err := r.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	for _, ref := range refs {
		lockPath := r.refPath(ref) + ".lock"
		deadline := time.Now().Add(refLockTimeout)
		for {
			owner, age, ok := r.classify(ref, lockPath, true)
			if !ok {
				break
			}
			if owner == ownerCtxStale {
				r.removeStale(ref, lockPath)
				continue
			}
			if owner == ownerCtxDying {
				deadline = later(deadline, time.Now().Add(staleAfter-age+10*time.Millisecond))
			}
			if time.Now().After(deadline) {
				return &LockError{Ref: ref, Path: lockPath, Age: age, Live: owner == ownerCtxLive}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

// startOwner writes an owner record for a git child that may lock refs and returns the file that holds its
// flock (pass it to the child, exec.Cmd.ExtraFiles, so that the record stays live while the child runs) and
// the function that removes the record when the child is done. Best effort: on any failure it returns nil
// and a no-op (a lock the child leaves is then reported as foreign instead of recovered).
func (r *Repo) startOwner(op string, refs []string) (*os.File, func()) {
	if err := os.MkdirAll(r.ownersDir(), 0o777); err != nil {
		return nil, func() {}
	}
	f, err := os.CreateTemp(r.ownersDir(), fmt.Sprintf("%d-*.json", os.Getpid()))
	if err != nil {
		return nil, func() {}
	}
	p := f.Name()
	if !lockOwnerFile(f) {
		f.Close()
		os.Remove(p)
		return nil, func() {}
	}
	b, _ := json.Marshal(ownerRecord{PID: os.Getpid(), Op: op, Started: time.Now().UnixNano(), Refs: refs})
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(p)
		return nil, func() {}
	}
	return f, func() {
		os.Remove(p)
		f.Close()
	}
}

// LooseRef is a loose ref file (or only its lock) below a folder of refs: see LooseRefsUnder.
type LooseRef struct {
	Name   string        // full ref name
	Locked bool          // <name>.lock exists
	Exists bool          // the ref file itself exists
	Age    time.Duration // since the ref file (else the lock) was last written
}

// LooseRefsUnder lists the loose refs and ref locks below prefix (a folder of refs such as
// "refs/ctx/incoming/"), without reading packed-refs. ctx uses it to clear what a killed process left of
// its own short-lived refs (the quarantine refs of a fetch).
func (r *Repo) LooseRefsUnder(prefix string) []LooseRef {
	root := filepath.Join(r.refDir(prefix), filepath.FromSlash(prefix))
	byName := map[string]*LooseRef{}
	var out []*LooseRef
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		name, locked := strings.CutSuffix(prefix+filepath.ToSlash(rel), ".lock")
		lr := byName[name]
		if lr == nil {
			lr = &LooseRef{Name: name}
			byName[name] = lr
			out = append(out, lr)
		}
		if fi, err := d.Info(); err == nil && (!locked || !lr.Exists) {
			lr.Age = time.Since(fi.ModTime())
		}
		if locked {
			lr.Locked = true
		} else {
			lr.Exists = true
		}
		return nil
	})
	res := make([]LooseRef, len(out))
	for i, lr := range out {
		res[i] = *lr
	}
	return res
}
