// Package gitstore is ctx's only door to git: blobs, trees, commits and refs of the user's repository, made
// with go-git, plus fetch and push of explicit refspecs through the system git, and every other run of the
// git binary (Git, WorkTreeFiles, TrackedFiles, identities, gc), all made by one runner with one
// environment policy (git.go). No go-git type appears in its API: object names are Hash, commits Commit.
//
// It knows nothing of ctx's context model: callers hand it paths and bytes. Every write is one commit made
// under the ctx lock (<git common dir>/ctx/lock) and published with a compare-and-swap of the ref done the
// way C git does it (docs/architecture.md "Commits"): <ref>.lock created exclusively, old value checked
// against the loose ref or packed-refs, new value written and fsynced, then renamed over the ref. The user's
// HEAD, index and working files are never read or written.
package gitstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/ctx-dev/ctx/gitstore/objread"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// ErrNotRepository is returned by Open when no git repository contains the path.
var ErrNotRepository = objread.ErrNotRepository

// Repo is an open repository: the object database and refs of the git common dir, and the paths of the
// current worktree. Safe for concurrent use by goroutines of one process; writes from several processes
// are serialised by the ctx lock.
type Repo struct {
	gitDir    string // this worktree's git dir (.git, or .git/worktrees/<name>)
	commonDir string // the shared git dir (objects, refs, config)
	workTree  string // the worktree root; "" for a bare repository
	st        *filesystem.Storage
	objs      storer.EncodedObjectStorer // where reads and writes of objects go: st, or the in-memory storage (newMemory)
	trees     treeCache                  // decoded trees by object name
	raws      rawCache                   // parsed raw entries of trees by object name (rawEntries)
	objMu     sync.RWMutex               // write-locked while the pack index is rebuilt (Reindex)
	// packMu serialises the reads of objects (read): the storage keeps its packfiles open
	// (KeepDescriptors), and a go-git packfile's scanner is not safe for concurrent use.
	packMu  sync.Mutex
	indexed atomic.Bool // the pack indexes are loaded (ensureIndex); cleared by Close

	// cf is tried first by every object read when set: git cat-file (ReadWithGit) or ctx's own pack reader
	// (ReadInProcess); go-git reads what it misses.
	cf rawReader

	// alts are the object directories the repository borrows from (objects/info/alternates, written by
	// git clone --shared or --reference; objread.ObjectDirs), read after its own, never written.
	alts []*filesystem.Storage

	local map[string]bool     // refs kept in the local-only store (KeepLocal)
	lst   *filesystem.Storage // the local-only store's objects; nil until it exists (guarded by objMu)
}

// Open finds the repository that contains path (walking up like git, honouring GIT_DIR and
// GIT_WORK_TREE) and opens its object database. Linked worktrees (a .git file pointing at
// .git/worktrees/<name>, with a commondir file) and bare repositories are supported. It does not go through
// go-git's Repository, so repositories using extensions.worktreeConfig, which go-git v5.17+ refuses to
// open, work too (docs/architecture.md "Commits").
func Open(ctx context.Context, path string) (*Repo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", path, err)
	}
	gitDir, workTree, err := discover(abs)
	if err != nil {
		return nil, err
	}
	commonDir := objread.CommonDir(gitDir)
	if err := checkObjectFormat(commonDir); err != nil {
		return nil, err
	}
	st := newStorage(commonDir)
	alts := alternateStorages(filepath.Join(commonDir, "objects"))
	// The pack indexes are loaded on the first read of an object (ensureIndex), not here: a command that
	// reads no object (ctx mcp serve until its first request, status, hooks that find nothing to do)
	// does not pay for decoding and checksumming them.
	return &Repo{gitDir: gitDir, commonDir: commonDir, workTree: workTree, st: st, objs: st, alts: alts}, nil
}

// ErrObjectFormat reports a repository whose objects are not named by SHA-1 (git init
// --object-format=sha256): ctx writes SHA-1 objects and refs only, which git cannot read there (its gc
// then fails), so such a repository is refused before anything is read or written.
var ErrObjectFormat = errors.New("unsupported object format")

// checkObjectFormat reads extensions.objectFormat from the repository's config (commonDir/config, with
// go-git's config decoder): absent or "sha1" is fine, anything else is ErrObjectFormat. A config that
// does not read is left to the commands that need it.
func checkObjectFormat(commonDir string) error {
	f, err := os.Open(filepath.Join(commonDir, "config"))
	if err != nil {
		return nil
	}
	defer f.Close()
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(io.LimitReader(f, 1<<20)).Decode(cfg); err != nil {
		return nil
	}
	if v := strings.ToLower(cfg.Section("extensions").Option("objectformat")); v != "" && v != "sha1" {
		return fmt.Errorf("%w: the repository at %s names its objects with %s (extensions.objectFormat); ctx supports SHA-1 repositories only, and its objects would be unreadable by git there", ErrObjectFormat, commonDir, v)
	}
	return nil
}

// newStorage opens the object database of a git dir with go-git, its packfiles kept open once opened
// (KeepDescriptors: a read of many small objects does not reopen the pack for each) and its object
// cache bounded (newObjectCache). Objects over largeObjectBytes are read lazily, as streams, and never
// cached: a reader of a large entry's size or first bytes (ReadBlobPrefix) does not inflate the whole
// object into memory. Repo.Close closes them.
//
// go-git's own reading of objects/info/alternates is turned off (AlternatesFS: an empty file system, where
// no alternate exists): it takes relative paths from the wrong directory, skips no comment and opens a new
// storage, re-indexing the alternate's packs, on every miss. ctx opens the alternates once instead
// (alternateStorages).
func newStorage(dir string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(dir), newObjectCache(),
		filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObjectBytes, AlternatesFS: memfs.New()})
}

// alternateStorages opens the object directories objectsDir borrows from (objread.ObjectDirs: the
// alternates, recursively, as git reads them) with go-git, for reading. go-git's storage reads the
// "objects" folder of a git dir, so an alternate whose folder is named otherwise is left to ctx's own
// reader (objread) and to git cat-file, which read any folder.
func alternateStorages(objectsDir string) []*filesystem.Storage {
	var alts []*filesystem.Storage
	for _, dir := range objread.ObjectDirs(objectsDir)[1:] {
		if filepath.Base(dir) == "objects" {
			alts = append(alts, newStorage(filepath.Dir(dir)))
		}
	}
	return alts
}

// largeObjectBytes is the size over which go-git streams an object instead of loading it (1 MiB): an entry
// is a few KiB; a teammate's entry of tens of MiB would otherwise be inflated whole, and copied, by every
// read that needs only its size or its first line (docs/limits.md).
const largeObjectBytes = 1 << 20

// Close closes the packfiles the object databases keep open. The Repo stays usable: a later read opens
// them again. Safe to call more than once.
func (r *Repo) Close() error {
	if r.cf != nil {
		r.cf.Close()
	}
	if r.st == nil {
		return nil
	}
	r.objMu.Lock()
	defer r.objMu.Unlock()
	r.closePacks()
	r.indexed.Store(false)
	return nil
}

// closePacks closes the open packfiles of both object databases and drops their pack indexes; call it
// under objMu (write). go-git's Close closes each kept packfile and then the same files through its
// DotGit, so the second close's "already closed" error is expected and ignored.
func (r *Repo) closePacks() {
	_ = r.st.Close()
	r.st.Reindex()
	for _, alt := range r.alts {
		_ = alt.Close()
		alt.Reindex()
	}
	if r.lst != nil {
		_ = r.lst.Close()
		r.lst.Reindex()
	}
}

// ReadWithGit makes r read objects through one `git cat-file --batch` process (go-git when git is
// missing or does not have an object): for a short-lived process that reads a few objects of a big
// store, such as a git hook's refresh (catFile). Call it right after Open, before any read.
func (r *Repo) ReadWithGit() {
	if r.st != nil && HasGit() {
		r.cf = &catFile{}
	}
}

// ReadInProcess makes r read objects with ctx's own reader of packs and loose objects first (packReader:
// each pack index memory-mapped and searched, as C git does), go-git for what it misses: what a one-shot
// command that reads a few objects uses. go-git decodes and checksums every pack index on the first read
// and builds an offset-to-name table of the whole pack on the first packed object; starting git
// cat-file instead costs a process (docs/architecture.md "Reads"). Not for a long-running process, which
// keeps go-git's caches. Call it right after Open, before any read.
func (r *Repo) ReadInProcess() {
	if r.st == nil || r.cf != nil {
		return
	}
	dirs := []string{filepath.Join(r.commonDir, "objects")}
	if isGitDir(r.LocalDir()) {
		dirs = append(dirs, filepath.Join(r.LocalDir(), "objects"))
	}
	r.cf = newPackReader(dirs...)
}

// ensureIndex loads the pack indexes if they are not loaded yet (Open leaves them for the first read).
func (r *Repo) ensureIndex() {
	if r.st == nil || r.indexed.Load() {
		return
	}
	r.Reindex()
}

// discover returns the git dir and worktree root for a path (objread.Discover).
func discover(abs string) (gitDir, workTree string, err error) { return objread.Discover(abs) }

func isGitDir(dir string) bool { return objread.IsGitDir(dir) }

// Reindex makes the object database see packfiles written since it was opened: by the system git's
// fetch (more than fetch.unpackLimit objects arrive as a new pack), by `git gc` (loose objects move into
// a pack), or by another process. go-git's filesystem storage indexes packs once (ObjectStorage.
// requireIndex); ctx rebuilds that index eagerly under a write lock, after every fetch and whenever a
// read misses an object, so a long-running process (ctx mcp serve) keeps finding every object.
func (r *Repo) Reindex() {
	if r.st == nil {
		return // in memory (newMemory): nothing is written behind its back
	}
	r.objMu.Lock()
	defer r.objMu.Unlock()
	// The packfiles kept open may be gone (a repack beside ctx deletes them): close them, so that the
	// reads after this one open the packs the new index names.
	r.closePacks()
	_ = r.st.HasEncodedObject(plumbing.ZeroHash) // builds the index now, not lazily under a read lock
	for _, alt := range r.alts {
		_ = alt.HasEncodedObject(plumbing.ZeroHash)
	}
	if r.lst == nil && len(r.local) > 0 && isGitDir(r.LocalDir()) {
		// Made by another process (or another Repo of this one) since this one was opened.
		r.lst = newLocalStorage(r.LocalDir())
	}
	if r.lst != nil {
		_ = r.lst.HasEncodedObject(plumbing.ZeroHash)
	}
	r.indexed.Store(true)
}

// read runs fn under the read lock of the object database and, when it misses an object or a packfile,
// again after Reindex (which also opens a local-only store made since), up to three times. A packfile goes
// missing when a `git gc` or `git repack` that runs beside ctx (`git gc --auto` detaches by default)
// replaces the packs this process indexed: C git re-scans its packs on such a miss, and so does ctx. git
// writes the new pack before it deletes the old ones, so a re-scan finds every object.
func (r *Repo) read(fn func() error) error {
	if r.cf == nil {
		r.ensureIndex()
	}
	err := r.readOnce(fn)
	for attempt := 0; attempt < 3 && missed(err); attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
		}
		r.Reindex()
		err = r.readOnce(fn)
	}
	return err
}

// readOnce runs fn under the read lock of the object database and the lock of its open packfiles.
func (r *Repo) readOnce(fn func() error) error {
	r.objMu.RLock()
	defer r.objMu.RUnlock()
	r.packMu.Lock()
	defer r.packMu.Unlock()
	return fn()
}

// missed reports whether err says an object or a packfile was not where the index said.
func missed(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, dotgit.ErrPackfileNotFound)
}

// GitDir is this worktree's git dir (for a linked worktree, .git/worktrees/<name>).
func (r *Repo) GitDir() string { return r.gitDir }

// CommonDir is the git dir shared by all worktrees: objects, refs and config live here.
func (r *Repo) CommonDir() string { return r.commonDir }

// WorkTree is the root of the current worktree, or "" for a bare repository.
func (r *Repo) WorkTree() string { return r.workTree }

// Bare reports whether the repository has no worktree.
func (r *Repo) Bare() bool { return r.workTree == "" }

// CtxDir is <git common dir>/ctx: ctx's lock, caches and counters (never pushed).
func (r *Repo) CtxDir() string { return filepath.Join(r.commonDir, "ctx") }

// Resolve returns the commit a ref points to, following one level of symbolic ref, or
// ZeroHash when the ref does not exist. name is a full ref name (refs/heads/ctx).
func (r *Repo) Resolve(ctx context.Context, name string) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return ZeroHash, err
	}
	h, err := readRef(r.refDir(name), name)
	if err != nil {
		return ZeroHash, fmt.Errorf("resolve %s: %w", name, err)
	}
	return h, nil
}

// CurrentBranch is the short name of the branch this worktree's HEAD points at ("main"), "" when HEAD is
// detached, the repository is bare or HEAD cannot be read.
func (r *Repo) CurrentBranch() string {
	if r.workTree == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	if !ok {
		return ""
	}
	return ref
}

// WorktreeOf is the root of a worktree of this repository whose HEAD is the branch (short name, "ctx"):
// this one or a linked one (`git worktree add`), as git finds it before it moves a branch ("" when none
// has it checked out). A worktree whose folder is gone but not pruned still counts, as it does for git.
func (r *Repo) WorktreeOf(branch string) string {
	want := "ref: refs/heads/" + branch
	head := func(gitDir string) bool {
		b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
		return err == nil && strings.TrimSpace(string(b)) == want
	}
	if r.workTree != "" && head(r.gitDir) {
		return r.workTree
	}
	// The main worktree: the common dir's own HEAD, unless the repository is bare (core.bare).
	if r.gitDir != r.commonDir && filepath.Base(r.commonDir) == ".git" && head(r.commonDir) {
		return filepath.Dir(r.commonDir)
	}
	ents, err := os.ReadDir(filepath.Join(r.commonDir, "worktrees"))
	if err != nil {
		return ""
	}
	for _, e := range ents {
		d := filepath.Join(r.commonDir, "worktrees", e.Name())
		if !e.IsDir() || d == filepath.Clean(r.gitDir) || !head(d) {
			continue
		}
		// gitdir holds the path of the worktree's .git file.
		if g, err := os.ReadFile(filepath.Join(d, "gitdir")); err == nil {
			return filepath.Dir(strings.TrimSpace(string(g)))
		}
		return d
	}
	return ""
}

// ResolveInRepository is Resolve in the repository's own refs, even for a ref kept in the local-only
// store (KeepLocal): what `git for-each-ref` run in the repository sees (ZeroHash when it has no such ref).
func (r *Repo) ResolveInRepository(ctx context.Context, name string) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return ZeroHash, err
	}
	h, err := readRef(r.commonDir, name)
	if err != nil {
		return ZeroHash, fmt.Errorf("resolve %s: %w", name, err)
	}
	return h, nil
}

// HeadName is what `git rev-parse --symbolic-full-name HEAD` prints: the full name of the ref this
// worktree's HEAD points at ("refs/heads/main"), or "HEAD" when HEAD is detached.
func (r *Repo) HeadName() (string, error) {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if target, ok := strings.CutPrefix(s, "ref: "); ok {
		return target, nil
	}
	if !plumbing.IsHash(s) {
		return "", fmt.Errorf("HEAD holds %q, neither a ref nor an object name", s)
	}
	return "HEAD", nil
}

// ResolveHEAD returns the commit of this worktree's HEAD, ZeroHash when it is unborn.
func (r *Repo) ResolveHEAD(ctx context.Context) (Hash, error) {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if target, ok := strings.CutPrefix(s, "ref: "); ok {
		return r.Resolve(ctx, target)
	}
	return NewHash(s), nil
}

// objectCacheBytes bounds go-git's cache of decoded objects (delta bases and recently read objects) for
// each object database. go-git's default, 96 MiB, filled with the big trees a long-running server writes
// and read back; 8 MiB keeps the delta bases of a read and the tip's trees (docs/architecture.md).
const objectCacheBytes = 8 * cache.MiByte

func newObjectCache() cache.Object { return cache.NewObjectLRU(objectCacheBytes) }
