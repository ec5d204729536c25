package gitstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/gitstore/reflock"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
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

// RefFiles lists the files that hold ref name, whose stat data tell a reader that the ref may have moved
// without reading it: the loose ref file and packed-refs of the git dir that holds it
// (gitrepository-layout(5)), in that order, and when the loose file is a symbolic ref ("ref: ..."), the
// files of its target too (at most 5 levels, like readRef). Paths that do not exist are listed too: a ref
// written later creates them. A move of the ref replaces one of these files (C git and ctx write a
// <file>.lock and rename it over the file, so the file gets a new inode and change time).
func (r *Repo) RefFiles(name string) []string {
	var out []string
	for depth := 0; depth < 5; depth++ {
		dir := r.refDir(name)
		loose := filepath.Join(dir, filepath.FromSlash(name))
		out = append(out, loose, filepath.Join(dir, "packed-refs"))
		b, err := os.ReadFile(loose)
		if err != nil {
			break
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
		if !ok {
			break
		}
		name = target
	}
	return out
}

// readRef reads a ref of a git dir: the loose file first, then packed-refs (objread.ReadRef). A symbolic
// ref ("ref: ...") is followed. A missing ref is ZeroHash with no error.
func readRef(gitDir, name string) (Hash, error) {
	h, err := objread.ReadRef(gitDir, name)
	return Hash(h), err
}

// UpdateRef moves ref name from old to new with a compare-and-swap done the way C git's files backend does
// it, under the ctx lock (taken here: do not call it while holding Lock): create <ref>.lock with O_EXCL
// (waiting up to refLockTimeout for another holder; ctx's own stale locks are recovered, docs/locks.md),
// check that the ref's current value (loose, else packed-refs) is old (ZeroHash = must not exist), write
// new, fsync, rename the lock over the ref, and append a reflog line when logs/<ref> exists or the ref is a
// branch. Readers never see a missing or empty ref. new == ZeroHash deletes the loose ref (a packed entry
// is left to git). Errors: ErrStaleRef, a *LockError (ErrRefLocked), or an I/O error; on error the ref is
// unchanged.
func (r *Repo) UpdateRef(ctx context.Context, name string, old, new Hash, msg string) error {
	return r.UpdateRefs(ctx, []RefUpdate{{Name: name, Old: old, New: new, Msg: msg}})
}

// errPartial marks an update whose refs could not all be put back after a failure (WriteError.Landed).
var errPartial = partialError{}

type partialError struct{}

func (partialError) Error() string { return "" }

// refUpdate is one ref move of updateRefs.
type refUpdate struct {
	name     string
	old, new Hash
	msg      string
	noSync   bool // RefUpdate.NoSync
}

// afterRefRenamed, when set (tests only), runs after each ref of a multi-ref update is renamed into place;
// an error from it is handled as a failure of the next step.
var afterRefRenamed func(ref string) error

// updateRefs moves every ref of ups or none, under the ctx lock (the caller holds it). Like a C git ref
// transaction of the files backend: first every <ref>.lock is created and every old value checked, so a
// locked or moved ref fails the whole update before anything moves; then the new values are written,
// fsynced and renamed into place one by one. Should a rename fail after others succeeded, the refs already
// moved are put back to their old values, and the error says whether that worked; no other ctx process
// can see the refs in between (they wait for the ctx lock).
func (r *Repo) updateRefs(ctx context.Context, ups []refUpdate) error {
	for _, u := range ups {
		if !strings.HasPrefix(u.name, "refs/") || strings.Contains(u.name, "..") || strings.HasSuffix(u.name, ".lock") {
			return fmt.Errorf("update ref %q: not a full ref name", u.name)
		}
	}
	locks := make([]*os.File, len(ups)) // open lock files, until written and closed
	created := 0                        // ups[:created] have their <ref>.lock on disk
	drop := func(from int) {            // remove the lock files of ups[from:created]
		for i := from; i < created; i++ {
			if locks[i] != nil {
				locks[i].Close()
				locks[i] = nil
			}
			os.Remove(r.refPath(ups[i].name) + ".lock")
			r.unmark(ups[i].name)
		}
	}
	for i, u := range ups {
		f, err := r.createRefLock(ctx, u.name)
		if err != nil {
			drop(0)
			return err
		}
		locks[i], created = f, i+1
		cur, err := readRef(r.refDir(u.name), u.name)
		if err != nil {
			drop(0)
			return fmt.Errorf("update ref %s: read current value: %w", u.name, err)
		}
		if cur != u.old {
			drop(0)
			return fmt.Errorf("update ref %s: expected %s, found %s: %w", u.name, short(u.old), short(cur), ErrStaleRef)
		}
	}
	for i, u := range ups {
		f := locks[i]
		locks[i] = nil
		if u.new.IsZero() {
			f.Close()
			continue
		}
		if u.noSync {
			_, err := f.WriteString(u.new.String() + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				drop(0)
				return fmt.Errorf("update ref %s: write lock: %w", u.name, err)
			}
			continue
		}
		if err := writeLock(f, u.new); err != nil {
			drop(0)
			return fmt.Errorf("update ref %s: %w", u.name, err)
		}
	}
	FaultPoint("refs-prepared", "")
	// Every lock holds its new value: from here a crash is completed by the next ctx process that takes
	// the ctx lock (recoverTransaction), as the journal says. One ref needs no journal.
	durable := false
	for _, u := range ups {
		durable = durable || !u.noSync
	}
	if len(ups) > 1 && durable {
		if err := r.writeJournal(ups); err != nil {
			drop(0)
			return fmt.Errorf("update refs: %w", err)
		}
		defer os.Remove(r.journalPath())
	}
	for i, u := range ups {
		if err := r.commitRef(u); err != nil {
			drop(i)
			return r.rollback(ctx, ups[:i], fmt.Errorf("update ref %s: %w", u.name, err))
		}
		if i < len(ups)-1 {
			FaultPoint("ref-renamed", u.name)
			if afterRefRenamed != nil {
				if err := afterRefRenamed(u.name); err != nil {
					drop(i + 1)
					return r.rollback(ctx, ups[:i+1], fmt.Errorf("update ref %s: %w", ups[i+1].name, err))
				}
			}
		}
	}
	for _, u := range ups {
		r.appendReflog(u.name, u.old, u.new, u.msg)
	}
	return nil
}

// journalEntry is one ref of an interrupted multi-ref update.
type journalEntry struct {
	Ref string `json:"ref"`
	Old string `json:"old"`
	New string `json:"new"`
}

func (r *Repo) journalPath() string { return filepath.Join(r.CtxDir(), "transaction.json") }

// writeJournal records a multi-ref update whose locks all hold their new values, fsynced and renamed into
// place.
func (r *Repo) writeJournal(ups []refUpdate) error {
	es := make([]journalEntry, len(ups))
	for i, u := range ups {
		es[i] = journalEntry{Ref: u.name, Old: u.old.String(), New: u.new.String()}
	}
	b, err := json.Marshal(es)
	if err != nil {
		return err
	}
	tmp := r.journalPath() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write journal: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write journal: %w", err)
	}
	if err := os.Rename(tmp, r.journalPath()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

// recoverTransaction completes a multi-ref update that a killed ctx process left half done (the journal
// is there): every ref still at its old value whose lock is ctx's and holds the new value is moved, so the
// update lands whole. When that is impossible (another program changed a ref or removed a lock), the refs
// that did move are put back instead, so that it lands not at all. Call with the ctx lock held.
func (r *Repo) recoverTransaction(ctx context.Context) {
	b, err := os.ReadFile(r.journalPath())
	if err != nil {
		return
	}
	defer os.Remove(r.journalPath())
	var es []journalEntry
	if json.Unmarshal(b, &es) != nil {
		return
	}
	var moved []refUpdate
	complete := true
	for _, e := range es {
		u := refUpdate{name: e.Ref, old: NewHash(e.Old), new: NewHash(e.New), msg: "ctx: complete an interrupted write"}
		cur, err := readRef(r.refDir(u.name), u.name)
		if err != nil {
			complete = false
			continue
		}
		if cur == u.new {
			r.unmark(u.name)
			moved = append(moved, u)
			continue
		}
		lockPath := r.refPath(u.name) + ".lock"
		fi, lerr := os.Lstat(lockPath)
		mi, merr := os.Lstat(r.markPath(u.name))
		content, _ := os.ReadFile(lockPath)
		ours := lerr == nil && merr == nil && os.SameFile(fi, mi)
		if cur != u.old || !ours || (!u.new.IsZero() && strings.TrimSpace(string(content)) != u.new.String()) {
			complete = false
			continue
		}
		if err := r.commitRef(u); err != nil {
			complete = false
			continue
		}
		r.appendReflog(u.name, u.old, u.new, u.msg)
		moved = append(moved, u)
	}
	if !complete {
		_ = r.rollback(ctx, moved, errors.New("interrupted write"))
	}
}

// writeLock writes an object name into a lock file, fsyncs and closes it.
func writeLock(f *os.File, h Hash) error { return reflock.WriteLock(f, h.String()) }

// commitRef puts a prepared update in place: renames <ref>.lock over the ref, or for a deletion removes
// the loose ref and then the lock.
func (r *Repo) commitRef(u refUpdate) error {
	path := r.refPath(u.name)
	lockPath := path + ".lock"
	if u.new.IsZero() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete: %w", err)
		}
		// A ref git packed (git clone, git gc) lives in packed-refs too: without its line there the
		// delete would only bring the packed value back.
		if err := removePacked(r.refDir(u.name), u.name); err != nil {
			os.Remove(lockPath)
			r.unmark(u.name)
			return fmt.Errorf("delete: %w", err)
		}
		os.Remove(lockPath)
		r.unmark(u.name)
		return nil
	}
	return reflock.Rename(path, r.markPath(u.name))
}

// rollback puts the refs of done (already moved) back to their old values after a later ref failed, and
// returns cause with what happened to them.
func (r *Repo) rollback(ctx context.Context, done []refUpdate, cause error) error {
	if len(done) == 0 {
		return cause
	}
	var failed []string
	for k := len(done) - 1; k >= 0; k-- {
		u := done[k]
		back := refUpdate{name: u.name, old: u.new, new: u.old}
		f, err := r.createRefLock(ctx, u.name)
		if err == nil {
			cur, rerr := readRef(r.refDir(u.name), u.name)
			switch {
			case rerr != nil:
				err = rerr
			case cur != u.new && !(u.new.IsZero() && cur == u.old):
				err = fmt.Errorf("moved to %s meanwhile", short(cur))
			case u.old.IsZero():
				f.Close()
				err = r.commitRef(back)
				f = nil
			default:
				err = writeLock(f, u.old)
				f = nil
				if err == nil {
					err = r.commitRef(back)
				}
			}
			if f != nil {
				f.Close()
			}
			if err != nil {
				os.Remove(r.refPath(u.name) + ".lock")
				r.unmark(u.name)
			}
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s stays at %s (%v)", u.name, short(u.new), err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w; restoring the refs already moved failed: %s%w", cause, strings.Join(failed, "; "), errPartial)
	}
	return fmt.Errorf("%w (no ref was changed: the refs already moved were put back)", cause)
}

// appendReflog writes a reflog line as C git does for branches (core.logAllRefUpdates, on by default in
// non-bare repositories) so that `git reflog <branch>` shows ctx's writes. Failure is ignored, as in git.
func (r *Repo) appendReflog(name string, old, new Hash, msg string) {
	logPath := filepath.Join(r.refDir(name), "logs", filepath.FromSlash(name))
	if _, err := os.Stat(logPath); err != nil && !strings.HasPrefix(name, "refs/heads/") {
		return
	}
	sig, err := r.Identity(context.Background())
	if err != nil {
		return
	}
	reflock.AppendReflog(logPath, name, reflock.ReflogLine(old.String(), new.String(), sig.Name, sig.Email, sig.When, msg))
}

func short(h Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}

// RefUpdate is one ref move of UpdateRefs: Name from Old to New (ZeroHash: must not exist / delete).
type RefUpdate struct {
	Name     string
	Old, New Hash
	Msg      string // the reflog message
	// NoSync: a ref ctx can rebuild (a local copy of a remote's ref, a quarantine ref), written without
	// fsync; an update of such refs only has no journal, so a crash may leave some of them moved and
	// others not (each is still whole: the lock protocol holds).
	NoSync bool
}

// UpdateRefs moves every ref of ups or none, as one transaction under the ctx lock (taken here), with the
// compare-and-swap of UpdateRef for each: ErrStaleRef when any ref no longer holds its Old value, and then
// no ref moved. A deletion removes the loose ref only, as UpdateRef does. No update is no work.
func (r *Repo) UpdateRefs(ctx context.Context, ups []RefUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := r.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	in := make([]refUpdate, len(ups))
	for i, u := range ups {
		in[i] = refUpdate{name: u.Name, old: u.Old, new: u.New, msg: u.Msg, noSync: u.NoSync}
	}
	return r.updateRefs(ctx, in)
}

// RefsUnder returns the refs whose full names start with prefix (a folder of refs ending in "/", such as
// "refs/ctx/remotes/origin/machines/"), loose and packed (a loose ref wins over its packed line), with the
// commits they name. It stops with ErrTooManyRefs once more than limit refs were found (limit <= 0: no
// bound), so that a folder filled by a hostile remote costs at most limit+1 reads.
func (r *Repo) RefsUnder(prefix string, limit int) (map[string]Hash, error) {
	if !strings.HasPrefix(prefix, "refs/") || !strings.HasSuffix(prefix, "/") || strings.Contains(prefix, "..") {
		return nil, fmt.Errorf("refs under %q: not a folder of refs", prefix)
	}
	dir := r.refDir(prefix)
	out := map[string]Hash{}
	over := func() bool { return limit > 0 && len(out) > limit }
	if f, err := os.Open(filepath.Join(dir, "packed-refs")); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() && !over() {
			line := sc.Text()
			if line == "" || line[0] == '#' || line[0] == '^' {
				continue
			}
			if hash, ref, ok := strings.Cut(line, " "); ok && strings.HasPrefix(ref, prefix) && plumbing.IsHash(hash) {
				out[ref] = NewHash(hash)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("refs under %s: packed-refs: %w", prefix, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("refs under %s: %w", prefix, err)
	}
	root := filepath.Join(dir, filepath.FromSlash(prefix))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		if over() {
			return filepath.SkipAll
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := prefix + filepath.ToSlash(rel)
		h, err := readRef(dir, name)
		if err != nil {
			return err
		}
		if !h.IsZero() {
			out[name] = h
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("refs under %s: %w", prefix, err)
	}
	if over() {
		return nil, fmt.Errorf("refs under %s: more than %d: %w", prefix, limit, ErrTooManyRefs)
	}
	return out, nil
}

// ErrTooManyRefs is returned by RefsUnder when a folder holds more refs than the caller's bound.
var ErrTooManyRefs = errors.New("too many refs")
