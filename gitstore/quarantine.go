package gitstore

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
)

// Quarantine refs (docs/security.md "Where the checks run"): a fetch lands on refs of its own under
// QuarantinePrefix, refs/ctx/incoming/<name>[/...], checked and then removed by the process that made them.
// A process killed in between (kill -9) leaves them, and they keep the fetched objects alive and are
// published by git push --mirror. So the process holds an flock on <common dir>/ctx/incoming/<name> for
// as long as it uses them (HoldQuarantine), and every process that takes the ctx lock removes the loose
// quarantine refs whose holder's flock is free and that no live git child may still write (its owner
// record names them): their process is gone (sweepQuarantines, docs/locks.md).

// QuarantinePrefix is the folder of the quarantine refs of fetches.
const QuarantinePrefix = "refs/ctx/incoming/"

// holderPath is the flock file of quarantine name (the component after QuarantinePrefix).
func (r *Repo) holderPath(name string) string {
	return filepath.Join(r.CtxDir(), "incoming", name)
}

// HoldQuarantine marks the quarantine refs under QuarantinePrefix+name (a ref of that name, or a folder of
// refs) as this process's until release is called: no other process removes them meanwhile. Call it
// before the fetch that creates them, and release after they are removed. Best effort: when the mark
// cannot be made, release is a no-op and refs left behind are removed by age (store.clearIncoming).
func (r *Repo) HoldQuarantine(name string) (release func()) {
	p := r.holderPath(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return func() {}
	}
	for attempt := 0; attempt < 10; attempt++ {
		fl := flock.New(p)
		if err := fl.Lock(); err != nil {
			return func() {}
		}
		// A sweeping process may have removed the file between our open and our flock: the flock must be
		// on the file the path names.
		fi, err1 := os.Stat(p)
		lf, err2 := fl.Stat()
		if err1 == nil && err2 == nil && os.SameFile(fi, lf) {
			return func() {
				_ = os.Remove(p)
				_ = fl.Unlock()
			}
		}
		_ = fl.Unlock()
	}
	return func() {}
}

// quarantineHeld reports whether a live process holds quarantine name (HoldQuarantine), and whether a
// holder file exists at all (a quarantine of a ctx that predates holders has none).
func (r *Repo) quarantineHeld(name string) (live, known bool) {
	p := r.holderPath(name)
	if _, err := os.Stat(p); err != nil {
		return false, false
	}
	fl := flock.New(p)
	ok, err := fl.TryLock()
	if err != nil || !ok {
		return true, true
	}
	_ = fl.Unlock()
	return false, true
}

// sweepQuarantines removes the loose quarantine refs of processes that are gone: those under a name whose
// holder file exists with its flock free, and that no live owner record (a git fetch still running after
// its ctx was killed) names. Refs of a quarantine without a holder file are left (store.clearIncoming
// removes them by age). Call with the ctx lock held; one directory read when there is nothing.
func (r *Repo) sweepQuarantines(ctx context.Context) {
	root := filepath.Join(r.commonDir, filepath.FromSlash(QuarantinePrefix))
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) == 0 {
		return
	}
	var liveOwned []string // refs named by live owner records
	if owners, err := os.ReadDir(r.ownersDir()); err == nil {
		for _, e := range owners {
			p := filepath.Join(r.ownersDir(), e.Name())
			if rec, ok := readOwner(p); ok && ownerAlive(p) {
				liveOwned = append(liveOwned, rec.Refs...)
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".lock") {
			continue
		}
		if live, known := r.quarantineHeld(name); live || !known {
			continue
		}
		prefix := QuarantinePrefix + name
		owned := false
		for _, ref := range liveOwned {
			if ref == prefix || strings.HasPrefix(ref, prefix+"/") {
				owned = true
			}
		}
		if owned {
			continue
		}
		var ups []refUpdate
		locked := false
		_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if strings.HasSuffix(p, ".lock") {
				locked = true // a lock no sweep removed (a foreign one): left, never waited for here
				return nil
			}
			rel, err := filepath.Rel(r.commonDir, p)
			if err != nil {
				return nil
			}
			ref := filepath.ToSlash(rel)
			if h, err := readRef(r.commonDir, ref); err == nil && !h.IsZero() {
				ups = append(ups, refUpdate{name: ref, old: h, new: ZeroHash, msg: "ctx: drop a quarantine ref left by a process that is gone", noSync: true})
			}
			return nil
		})
		if locked || len(ups) > 0 && r.updateRefs(ctx, ups) != nil {
			continue
		}
		// The emptied folders, deepest first, then the holder file.
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = os.Remove(dirs[i])
		}
		_ = os.Remove(r.holderPath(name))
	}
}
