package gitstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/gofrs/flock"
)

// ErrStaleRef is returned by UpdateRef when the ref no longer has the expected old value: another
// writer moved it first.
var ErrStaleRef = errors.New("ref changed concurrently")

// ErrRefLocked is returned by UpdateRef when <ref>.lock exists for longer than the lock timeout: another
// process (ctx or C git) is updating the ref, or crashed while doing so.
var ErrRefLocked = errors.New("ref is locked")

// refLockTimeout is how long UpdateRef waits for another writer's <ref>.lock, like C git's
// core.filesRefLockTimeout (default 100 ms; ctx waits longer because its writers queue on the ctx lock).
const refLockTimeout = 2 * time.Second

// readRef reads a ref of a git dir: the loose file first, then packed-refs (gitrepository-layout(5)).
// A symbolic ref ("ref: ...") is followed. A missing ref is ZeroHash with no error.
func readRef(gitDir, name string) (plumbing.Hash, error) {
	for depth := 0; depth < 5; depth++ {
		b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(name)))
		if err == nil {
			s := strings.TrimSpace(string(b))
			if target, ok := strings.CutPrefix(s, "ref: "); ok {
				name = target
				continue
			}
			if !plumbing.IsHash(s) {
				return plumbing.ZeroHash, fmt.Errorf("ref %s holds %q, not an object name", name, s)
			}
			return plumbing.NewHash(s), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !isDirErr(err) {
			return plumbing.ZeroHash, err
		}
		return readPackedRef(gitDir, name)
	}
	return plumbing.ZeroHash, fmt.Errorf("ref %s: too many levels of symbolic refs", name)
}

func isDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "is a directory")
}

func readPackedRef(gitDir, name string) (plumbing.Hash, error) {
	f, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hash, ref, ok := strings.Cut(line, " ")
		if ok && ref == name {
			return plumbing.NewHash(hash), nil
		}
	}
	return plumbing.ZeroHash, sc.Err()
}

// UpdateRef moves ref name from old to new with a compare-and-swap done the way C git's files backend does
// it: create <ref>.lock with O_EXCL (waiting up to refLockTimeout for another holder), check that the
// ref's current value (loose, else packed-refs) is old (ZeroHash = must not exist), write new, fsync,
// rename the lock over the ref, and append a reflog line when logs/<ref> exists or the ref is a branch.
// Readers never see a missing or empty ref. new == ZeroHash deletes the loose ref (a packed entry is left
// to git). Errors: ErrStaleRef, ErrRefLocked, or an I/O error; on error the ref is unchanged.
func (r *Repo) UpdateRef(ctx context.Context, name string, old, new plumbing.Hash, msg string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
		return fmt.Errorf("update ref %q: not a full ref name", name)
	}
	path := filepath.Join(r.refDir(name), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	lockPath := path + ".lock"
	var lf *os.File
	deadline := time.Now().Add(refLockTimeout)
	for {
		f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			lf = f
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("update ref %s: create lock: %w", name, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("update ref %s: %s exists: %w", name, lockPath, ErrRefLocked)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	committed := false
	defer func() {
		if !committed {
			lf.Close()
			os.Remove(lockPath)
		}
	}()
	cur, err := readRef(r.refDir(name), name)
	if err != nil {
		return fmt.Errorf("update ref %s: read current value: %w", name, err)
	}
	if cur != old {
		return fmt.Errorf("update ref %s: expected %s, found %s: %w", name, short(old), short(cur), ErrStaleRef)
	}
	if new.IsZero() {
		lf.Close()
		os.Remove(lockPath)
		committed = true
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete ref %s: %w", name, err)
		}
		return nil
	}
	if _, err := lf.WriteString(new.String() + "\n"); err != nil {
		return fmt.Errorf("update ref %s: write lock: %w", name, err)
	}
	if err := lf.Sync(); err != nil {
		return fmt.Errorf("update ref %s: fsync: %w", name, err)
	}
	if err := lf.Close(); err != nil {
		return fmt.Errorf("update ref %s: close lock: %w", name, err)
	}
	if err := os.Rename(lockPath, path); err != nil {
		return fmt.Errorf("update ref %s: rename lock: %w", name, err)
	}
	committed = true
	r.appendReflog(name, old, new, msg)
	return nil
}

// appendReflog writes a reflog line as C git does for branches (core.logAllRefUpdates, on by default in
// non-bare repositories) so that `git reflog <branch>` shows ctx's writes. Failure is ignored, as in git.
func (r *Repo) appendReflog(name string, old, new plumbing.Hash, msg string) {
	logPath := filepath.Join(r.refDir(name), "logs", filepath.FromSlash(name))
	if _, err := os.Stat(logPath); err != nil && !strings.HasPrefix(name, "refs/heads/") {
		return
	}
	sig, err := r.Identity(context.Background())
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o777); err != nil {
		return
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	_, offset := sig.When.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	msg = strings.ReplaceAll(strings.SplitN(msg, "\n", 2)[0], "\t", " ")
	fmt.Fprintf(f, "%s %s %s <%s> %d %c%02d%02d\t%s\n", old, new, sig.Name, sig.Email, sig.When.Unix(),
		sign, offset/3600, (offset%3600)/60, msg)
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}

// Lock takes the ctx lock, <git common dir>/ctx/lock (an advisory flock shared by every ctx process and
// every worktree of the repository), waiting until ctx is done. The returned function releases it.
func (r *Repo) Lock(ctx context.Context) (unlock func(), err error) {
	if err := os.MkdirAll(r.CtxDir(), 0o777); err != nil {
		return nil, fmt.Errorf("ctx lock: %w", err)
	}
	fl := flock.New(filepath.Join(r.CtxDir(), "lock"))
	ok, err := fl.TryLockContext(ctx, 2*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("ctx lock %s: %w", fl.Path(), err)
	}
	if !ok {
		return nil, fmt.Errorf("ctx lock %s: not acquired", fl.Path())
	}
	return func() { _ = fl.Unlock() }, nil
}
