package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// LocalStoreName is the folder, inside the ctx dir (<git common dir>/ctx), of the local-only store: a bare
// repository that holds the refs named by KeepLocal and every object reachable from them.
const LocalStoreName = "private.git"

// LocalDir is the path of the local-only store, <git common dir>/ctx/private.git (it may not exist yet:
// it is made by the first write to a local ref).
func (r *Repo) LocalDir() string { return filepath.Join(r.CtxDir(), LocalStoreName) }

// KeepLocal declares refs (full names, e.g. refs/ctx/private) that must never be reachable by a plain
// `git push` of the repository, not even `git push --mirror` (which pushes everything under refs/) or a
// push with a refspec matching refs/*. From then on, Resolve, UpdateRef and Transact read and move them in
// the local-only store (LocalDir) instead of the repository's refs/, and the objects a Transact writes for
// them go to that store's object database (a self-contained one: no objects/info/alternates, so that
// neither repository's gc can prune what the other one needs). Reads of objects look in both databases.
//
// A ref of that list still present in the repository's own refs (a store made by an older ctx) is moved
// into the local store first, under the ctx lock, with every object reachable from it: the copy is
// idempotent, the local ref is set before the repository's ref (loose and packed) is deleted, so an
// interrupted move is completed by the next call and nothing is lost. When both exist and the local one
// does not contain the other (an older ctx wrote to the old place after the move), the old tip is kept in
// the local store as refs/ctx/rescued/<last element of the name>-<first 12 hex of the commit>.
//
// Call it once, right after Open, before other goroutines use the Repo.
func (r *Repo) KeepLocal(ctx context.Context, refs ...string) error {
	r.local = map[string]bool{}
	for _, name := range refs {
		if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
			return fmt.Errorf("keep local: %q is not a full ref name", name)
		}
		r.local[name] = true
	}
	if isGitDir(r.LocalDir()) {
		r.openLocal()
	}
	var old []string
	for _, name := range refs {
		h, err := readRef(r.commonDir, name)
		if err != nil {
			return fmt.Errorf("keep %s local: %w", name, err)
		}
		if !h.IsZero() {
			old = append(old, name)
		}
	}
	if len(old) == 0 {
		return nil
	}
	unlock, err := r.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	for _, name := range old {
		if err := r.moveToLocal(ctx, name); err != nil {
			return fmt.Errorf("move %s into %s: %w", name, r.LocalDir(), err)
		}
	}
	return nil
}

// isLocal reports whether a ref lives in the local-only store.
func (r *Repo) isLocal(name string) bool { return r.local[name] }

// refDir is the git dir whose refs/ (and packed-refs, logs/) hold ref name.
func (r *Repo) refDir(name string) string {
	if r.isLocal(name) {
		return r.LocalDir()
	}
	return r.commonDir
}

// storageFor is the object database that objects written for ref name go to; it makes the local store
// when name is local and the store does not exist yet.
func (r *Repo) storageFor(name string) (*filesystem.Storage, error) {
	if !r.isLocal(name) {
		return r.st, nil
	}
	if err := r.ensureLocal(); err != nil {
		return nil, err
	}
	return r.localStorage(), nil
}

func (r *Repo) localStorage() *filesystem.Storage {
	r.objMu.RLock()
	defer r.objMu.RUnlock()
	return r.lst
}

func (r *Repo) openLocal() {
	st := newLocalStorage(r.LocalDir())
	r.objMu.Lock()
	if r.lst == nil {
		r.lst = st
	}
	r.objMu.Unlock()
}

func newLocalStorage(dir string) *filesystem.Storage {
	st := newStorage(dir)
	_ = st.HasEncodedObject(plumbing.ZeroHash) // builds the pack index now, not lazily under a read lock
	return st
}

// ensureLocal makes the local-only store when it does not exist: a bare repository built in a temporary
// folder and renamed into place, so that a crash never leaves half of one.
func (r *Repo) ensureLocal() error {
	if r.localStorage() != nil {
		return nil
	}
	dir := r.LocalDir()
	if !isGitDir(dir) {
		if err := os.MkdirAll(r.CtxDir(), 0o777); err != nil {
			return fmt.Errorf("make %s: %w", dir, err)
		}
		tmp, err := os.MkdirTemp(r.CtxDir(), ".private.git.tmp")
		if err != nil {
			return fmt.Errorf("make %s: %w", dir, err)
		}
		defer os.RemoveAll(tmp)
		for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
			if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(d)), 0o777); err != nil {
				return fmt.Errorf("make %s: %w", dir, err)
			}
		}
		files := map[string]string{
			"HEAD":        "ref: refs/heads/main\n",
			"config":      "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\tlogallrefupdates = false\n",
			"description": "ctx: private and ephemeral context of this repository (never pushed; see docs/security.md of ctx)\n",
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o666); err != nil {
				return fmt.Errorf("make %s: %w", dir, err)
			}
		}
		if err := os.Rename(tmp, dir); err != nil && !isGitDir(dir) {
			return fmt.Errorf("make %s: %w", dir, err)
		}
	}
	r.openLocal()
	return nil
}

// objects is what reads go through: the repository's object database, then the local-only store's, then
// the object directories the repository borrows from (objects/info/alternates: Repo.alts).
type objects struct {
	storer.EncodedObjectStorer
	local *filesystem.Storage
	alts  []*filesystem.Storage
	cf    rawReader // tried first when set (Repo.ReadWithGit, Repo.ReadInProcess)
	repo  *Repo
}

func (o objects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o.cf != nil {
		typ, data, err := o.cf.read(o.repo, Hash(h))
		if err == nil {
			if t != plumbing.AnyObject && typ != t {
				return nil, plumbing.ErrObjectNotFound // as go-git's storage answers a type mismatch
			}
			return &rawObject{h: h, t: typ, data: data}, nil
		}
		// Missing or failed: go-git looks (and Repo.read re-indexes on a miss).
	}
	obj, err := o.EncodedObjectStorer.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) && o.local != nil {
		obj, err = o.local.EncodedObject(t, h)
	}
	for _, alt := range o.alts {
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		obj, err = alt.EncodedObject(t, h)
	}
	return obj, err
}

func (o objects) HasEncodedObject(h plumbing.Hash) error {
	err := o.EncodedObjectStorer.HasEncodedObject(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) && o.local != nil {
		err = o.local.HasEncodedObject(h)
	}
	for _, alt := range o.alts {
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		err = alt.HasEncodedObject(h)
	}
	return err
}

func (o objects) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	n, err := o.EncodedObjectStorer.EncodedObjectSize(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) && o.local != nil {
		n, err = o.local.EncodedObjectSize(h)
	}
	for _, alt := range o.alts {
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		n, err = alt.EncodedObjectSize(h)
	}
	return n, err
}

var _ storer.EncodedObjectStorer = objects{}

// reader is the object database of reads; call it under objMu (read).
func (r *Repo) reader() objects {
	return objects{EncodedObjectStorer: r.objs, local: r.lst, alts: r.alts, cf: r.cf, repo: r}
}

// moveToLocal moves ref name from the repository's refs into the local store (see KeepLocal). It runs
// under the ctx lock.
func (r *Repo) moveToLocal(ctx context.Context, name string) error {
	old, err := readRef(r.commonDir, name)
	if err != nil || old.IsZero() {
		return err
	}
	if err := r.ensureLocal(); err != nil {
		return err
	}
	lst := r.localStorage()
	if err := r.copyReachable(ctx, lst, old); err != nil {
		return err
	}
	cur, err := readRef(r.LocalDir(), name)
	if err != nil {
		return err
	}
	switch {
	case cur.IsZero():
		// The caller holds the ctx lock (KeepLocal): updateRefs, not UpdateRef, which would take it again.
		if err := r.updateRefs(ctx, []refUpdate{{name: name, old: ZeroHash, new: old, msg: "ctx: move from the repository's refs"}}); err != nil {
			return err
		}
	case cur == old:
	default:
		contained, err := r.isAncestor(ctx, old, cur)
		if err != nil {
			return err
		}
		if !contained {
			base := name[strings.LastIndex(name, "/")+1:]
			rescue := "refs/ctx/rescued/" + base + "-" + old.String()[:12]
			if err := updateRefIn(ctx, r.LocalDir(), rescue, ZeroHash, old); err != nil && !errors.Is(err, ErrStaleRef) {
				return err
			}
		}
	}
	return deleteRef(ctx, r.commonDir, name, old)
}

// copyTree copies into dst every object of tree h (and its subtrees and blobs) that dst lacks.
func (r *Repo) copyTree(ctx context.Context, dst *filesystem.Storage, h Hash) error {
	if h.IsZero() {
		return nil
	}
	return r.copier(ctx, dst).tree(h)
}

// copyReachable copies into dst every object reachable from commit tip that dst lacks (commits, trees,
// blobs), reading from both databases. Objects are written before the objects that point to them, and
// each is checked on its own, so a copy that was interrupted is completed by running it again.
func (r *Repo) copyReachable(ctx context.Context, dst *filesystem.Storage, tip Hash) error {
	cp := r.copier(ctx, dst)
	// Commits in an order where parents come first: collect them, then copy from the oldest.
	var order []*Commit
	stack := []Hash{tip}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cp.seen[h] {
			continue
		}
		cp.seen[h] = true
		c, err := r.Commit(ctx, h)
		if err != nil {
			return err
		}
		order = append(order, c)
		stack = append(stack, c.ParentHashes...)
	}
	for i := len(order) - 1; i >= 0; i-- {
		if err := cp.tree(order[i].TreeHash); err != nil {
			return err
		}
		if err := cp.object(order[i].Hash); err != nil {
			return err
		}
	}
	return nil
}

// copier copies objects into dst, each once.
type copier struct {
	ctx  context.Context
	r    *Repo
	dst  *filesystem.Storage
	seen map[Hash]bool
}

func (r *Repo) copier(ctx context.Context, dst *filesystem.Storage) *copier {
	return &copier{ctx: ctx, r: r, dst: dst, seen: map[Hash]bool{}}
}

// object copies one object unless dst has it.
func (c *copier) object(h Hash) error {
	if c.dst.HasEncodedObject(h.ph()) == nil {
		return nil
	}
	var o plumbing.EncodedObject
	err := c.r.read(func() (err error) {
		o, err = c.r.reader().EncodedObject(plumbing.AnyObject, h.ph())
		return err
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", h, err)
	}
	if _, err := c.dst.SetEncodedObject(o); err != nil {
		return fmt.Errorf("write %s: %w", h, err)
	}
	return nil
}

// tree copies a tree with its subtrees and blobs, the tree object last.
func (c *copier) tree(h Hash) error {
	if c.seen[h] {
		return nil
	}
	c.seen[h] = true
	if err := c.ctx.Err(); err != nil {
		return err
	}
	t, err := c.r.tree(h)
	if err != nil {
		return err
	}
	for _, te := range t.Entries {
		e := Entry{Hash: Hash(te.Hash), Mode: FileMode(te.Mode)}
		switch {
		case e.Mode == ModeDir:
			if err := c.tree(e.Hash); err != nil {
				return err
			}
		case e.Mode == ModeSubmodule || c.seen[e.Hash]:
		default:
			c.seen[e.Hash] = true
			if err := c.object(e.Hash); err != nil {
				return err
			}
		}
	}
	return c.object(h)
}

// isAncestor reports whether commit a is b or one of b's ancestors.
func (r *Repo) isAncestor(ctx context.Context, a, b Hash) (bool, error) {
	seen := map[Hash]bool{}
	stack := []Hash{b}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == a {
			return true, nil
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := r.Commit(ctx, h)
		if err != nil {
			return false, err
		}
		stack = append(stack, c.ParentHashes...)
	}
	return false, nil
}

// updateRefIn creates ref name in git dir dir with the lock protocol of UpdateRef (old must be ZeroHash),
// without a reflog.
func updateRefIn(ctx context.Context, dir, name string, old, new Hash) error {
	r := &Repo{commonDir: dir}
	return r.UpdateRef(ctx, name, old, new, "")
}

// deleteRef deletes ref name of git dir dir when it still points at old, both its loose file and its
// packed-refs line (with its peeled line), each with git's lock protocol: <ref>.lock, then
// packed-refs.lock written and renamed over packed-refs. Missing is not an error.
func deleteRef(ctx context.Context, dir, name string, old Hash) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.FromSlash(name))
	lock := path + ".lock"
	lf, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("delete ref %s: %s exists: %w", name, lock, ErrRefLocked)
		}
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	lf.Close()
	defer os.Remove(lock)
	cur, err := readRef(dir, name)
	if err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if cur != old {
		return fmt.Errorf("delete ref %s: expected %s, found %s: %w", name, short(old), short(cur), ErrStaleRef)
	}
	if err := removePacked(dir, name); err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	_ = os.Remove(filepath.Join(dir, "logs", filepath.FromSlash(name)))
	return nil
}

// removePacked rewrites packed-refs without ref name, the way git does: packed-refs.lock created
// exclusively, written, fsynced and renamed over packed-refs. Nothing to do when name is not packed.
func removePacked(dir, name string) error {
	packed := filepath.Join(dir, "packed-refs")
	if _, err := os.Stat(packed); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	lock := packed + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists: %w", lock, ErrRefLocked)
		}
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(lock)
		}
	}()
	b, err := os.ReadFile(packed)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var out bytes.Buffer
	found, skipPeeled := false, false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if skipPeeled && strings.HasPrefix(line, "^") {
			continue
		}
		skipPeeled = false
		if _, ref, cut := strings.Cut(line, " "); cut && line[0] != '#' && line[0] != '^' && ref == name {
			found, skipPeeled = true, true
			continue
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil || !found {
		return err
	}
	if _, err := f.Write(out.Bytes()); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(lock, packed); err != nil {
		return err
	}
	ok = true
	return nil
}
