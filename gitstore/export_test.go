package gitstore

import (
	"context"
	"io"
	"os"
)

// SetAfterRefRenamed installs a hook that runs after each ref of a multi-ref update is renamed into place
// (a failure injected between two ref updates); it returns the function that removes it.
func SetAfterRefRenamed(f func(ref string) error) (restore func()) {
	afterRefRenamed = f
	return func() { afterRefRenamed = nil }
}

// MarkPath is where ctx hard-links a ref lock it creates (docs/locks.md).
func (r *Repo) MarkPath(name string) string { return r.markPath(name) }

// StartOwner writes an owner record for refs, as a git child's; done removes it.
func (r *Repo) StartOwner(op string, refs []string) (closeOnly func(), done func()) {
	f, d := r.startOwner(op, refs)
	if f == nil {
		return func() {}, d
	}
	return func() { f.Close() }, d
}

// SetObjectFile replaces the writer of loose objects' temporary files (a full disk); it returns the
// function that restores it.
func SetObjectFile(f func(*os.File) io.Writer) (restore func()) {
	old := objectFile
	objectFile = f
	return func() { objectFile = old }
}

// NewMemory is a repository whose objects live in go-git's in-memory storage (newMemory).
func NewMemory() *Repo { return newMemory() }

// TreeDecoded reports whether this Repo holds tree h decoded (in its tree cache).
func (r *Repo) TreeDecoded(h Hash) bool { return r.trees.get(h) != nil }

// ScanTree finds name in the raw bytes of a tree object without decoding it.
func ScanTree(raw []byte, name string) (Entry, bool, error) { return scanTree(raw, name) }

// LogAllWalk is LogAll done with go-git only (no C git), to compare the two.
func (r *Repo) LogAllWalk(ctx context.Context, tip Hash, n int, path string) ([]*Commit, error) {
	return r.logAllWalk(ctx, tip, n, path)
}

// GitPathOK reports whether LogAll gives path to C git.
func GitPathOK(path string) bool { return gitPathOK(path) }

// LogPathGit is LogAll's C git way, without the fallback to the walk.
func (r *Repo) LogPathGit(ctx context.Context, tip Hash, n int, path string) ([]*Commit, error) {
	return r.logPathGit(ctx, tip, n, path)
}

// SetMapDiffOnly makes DiffItems take its general path (maps of names) for every tree, and returns the
// function that restores it.
func SetMapDiffOnly(on bool) func() {
	old := mapDiffOnly
	mapDiffOnly = on
	return func() { mapDiffOnly = old }
}

// ForgetIdentities empties this process's cache of identities, as a new process starts.
func ForgetIdentities() { identCache.Clear() }

// IdentityFile is where the identities asked of git are kept for the next process.
func (r *Repo) IdentityFile() string { return r.identFile() }

// LockTries is how many times a wait for a lock tried the flock so far (waitFlock).
func LockTries() int64 { return lockTries.Load() }

// IsHFSDotGit and IsHFSDotGitUTF8 are CheckName's HFS+ alias check with its ASCII fast path, and the
// general path it stands for (TestHFSDotGitASCIIFastPath).
var IsHFSDotGit, IsHFSDotGitUTF8 = isHFSDotGit, isHFSDotGitUTF8

// SetOnRevList installs a hook that receives the arguments of each git rev-list a partial clone's
// completion runs; it returns the function that removes it.
func SetOnRevList(f func(args []string)) (restore func()) {
	onRevList = f
	return func() { onRevList = nil }
}

// LockHolder is lockHolder; reread, when not nil, runs between its two reads of the holder file.
func LockHolder(holder string, reread func()) string {
	holderReread = reread
	defer func() { holderReread = nil }()
	return lockHolder(holder)
}
