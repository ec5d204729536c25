package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrNotFound is returned when a path does not exist in a tree.
var ErrNotFound = errors.New("not found")

// WriteBlob stores data as a blob in the repository's object database and returns its object name.
func (r *Repo) WriteBlob(ctx context.Context, data []byte) (Hash, error) {
	return r.writeBlob(ctx, r.objs, data)
}

// writeBlob stores data as a blob in st.
func (r *Repo) writeBlob(ctx context.Context, st storer.EncodedObjectStorer, data []byte) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return ZeroHash, err
	}
	o := st.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	o.SetSize(int64(len(data)))
	w, err := o.Writer()
	if err != nil {
		return ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	return r.store(st, o)
}

// store writes o into st unless st already has it. Only st is checked (not the other database), so that
// each database holds every object reachable from its own refs. A repository's database on disk gets a
// loose object (writeLoose); an in-memory one (newMemory) takes o as it is.
func (r *Repo) store(st storer.EncodedObjectStorer, o plumbing.EncodedObject) (Hash, error) {
	h := Hash(o.Hash())
	r.ensureIndex()
	r.objMu.RLock()
	defer r.objMu.RUnlock()
	if err := st.HasEncodedObject(h.ph()); err == nil {
		return h, nil
	}
	fst, onDisk := st.(*filesystem.Storage)
	if !onDisk {
		if _, err := st.SetEncodedObject(o); err != nil {
			return ZeroHash, fmt.Errorf("store %s %s: %w", o.Type(), h, err)
		}
		return h, nil
	}
	dir := r.commonDir
	if fst != r.st {
		dir = r.LocalDir()
	}
	if err := r.writeLoose(dir, o); err != nil {
		return ZeroHash, fmt.Errorf("store %s %s: %w", o.Type(), h, err)
	}
	return h, nil
}

// objectFile is the writer of a loose object's temporary file; tests replace it to fail as a full disk
// does.
var objectFile = func(f *os.File) io.Writer { return f }

// writeLoose stores o as a loose object of the repository at gitDir (the main one, or the local store) the way C git does: zlib-compressed into a temporary file
// objects/xx/tmp_obj_* (the name git's own prune knows), then renamed to objects/xx/<rest of the name>
// and made read-only. On any failure (a full disk) the temporary file is removed: a failed write leaves
// nothing behind (go-git's own writer left tmp_obj_* files in objects/pack on ENOSPC).
func (r *Repo) writeLoose(gitDir string, o plumbing.EncodedObject) error {
	hex := o.Hash().String()
	dir := filepath.Join(gitDir, "objects", hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	w := objfile.NewWriter(objectFile(f))
	if err := w.WriteHeader(o.Type(), o.Size()); err != nil {
		return fail(err)
	}
	rd, err := o.Reader()
	if err != nil {
		return fail(err)
	}
	_, err = io.Copy(w, rd)
	rd.Close()
	if err != nil {
		return fail(err)
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return err
	}
	_ = os.Chmod(final, 0o444)
	return nil
}

// ReadBlob returns the content of a blob.
func (r *Repo) ReadBlob(ctx context.Context, h Hash) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var data []byte
	err := r.read(func() error {
		b, err := object.GetBlob(r.reader(), h.ph())
		if err != nil {
			return err
		}
		rd, err := b.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		data, err = io.ReadAll(rd)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return data, nil
}

// Commit reads a commit object.
func (r *Repo) Commit(ctx context.Context, h Hash) (*Commit, error) {
	c, err := r.ogCommit(ctx, h)
	return commitOf(c), err
}

// ogCommit reads a commit object as go-git's type (for its merge-base and ancestry walks).
func (r *Repo) ogCommit(ctx context.Context, h Hash) (*object.Commit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var c *object.Commit
	err := r.read(func() (err error) {
		c, err = object.GetCommit(r.reader(), h.ph())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c, nil
}

// TreeOf returns the tree of a commit; the empty tree (ZeroHash) for ZeroHash.
func (r *Repo) TreeOf(ctx context.Context, commit Hash) (Hash, error) {
	if commit.IsZero() {
		return ZeroHash, nil
	}
	c, err := r.Commit(ctx, commit)
	if err != nil {
		return ZeroHash, err
	}
	return c.TreeHash, nil
}

func (r *Repo) tree(h Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	if t := r.trees.get(h); t != nil {
		return t, nil
	}
	var t *object.Tree
	err := r.read(func() (err error) {
		t, err = object.GetTree(r.reader(), h.ph())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	r.trees.put(h, t)
	return t, nil
}

// treeCache keeps recently decoded trees by object name. Trees are immutable, so a cached tree is never
// stale; one write of a large store reads the same big subtree several times (the edit, the diff of the
// commit, the refresh of .context/), and decoding it dominated the write (bench/README.md).
type treeCache struct {
	mu    sync.Mutex
	m     map[Hash]*object.Tree
	order []Hash
	bytes int // the estimated size of the trees in m (treeBytes)
}

// treeCacheSize and treeCacheBytes bound the cache: at most 64 trees and about 16 MiB of decoded trees
// (a 10,000-entry tree is about 1 MB decoded). A long-running process (ctx mcp serve) decodes a new big
// tree on every write; a bound in entries alone let 64 of them stay alive (docs/architecture.md).
const (
	treeCacheSize  = 64
	treeCacheBytes = 16 << 20
)

// treeBytes estimates the memory a decoded tree holds: the entries (name, mode, hash) and go-git's
// name-to-entry map.
func treeBytes(t *object.Tree) int {
	n := 128
	for _, e := range t.Entries {
		n += len(e.Name) + int(unsafe.Sizeof(e)) + 48
	}
	return n
}

func (c *treeCache) get(h Hash) *object.Tree {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[h]
}

func (c *treeCache) put(h Hash, t *object.Tree) {
	size := treeBytes(t)
	if size > treeCacheBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[Hash]*object.Tree{}
	}
	if _, ok := c.m[h]; ok {
		return
	}
	for len(c.order) > 0 && (len(c.order) >= treeCacheSize || c.bytes+size > treeCacheBytes) {
		c.bytes -= treeBytes(c.m[c.order[0]])
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[h] = t
	c.order = append(c.order, h)
	c.bytes += size
}

// sortEntries orders tree entries as git does (a directory sorts as if its name ended in '/'), without
// the allocation per comparison of go-git's TreeEntrySorter.
func sortEntries(es []object.TreeEntry) {
	key := func(e object.TreeEntry, i int) byte {
		if i < len(e.Name) {
			return e.Name[i]
		}
		if i == len(e.Name) && e.Mode == filemode.Dir {
			return '/'
		}
		return 0
	}
	sort.Slice(es, func(a, b int) bool {
		x, y := es[a], es[b]
		n := len(x.Name)
		if len(y.Name) > n {
			n = len(y.Name)
		}
		for i := 0; i <= n; i++ {
			cx, cy := key(x, i), key(y, i)
			if cx != cy {
				return cx < cy
			}
		}
		return false
	})
}

// Change is one edit of a tree: Data is the new content of Path, or Delete removes it. Path is
// slash-separated and relative to the tree root.
type Change struct {
	Path   string
	Data   []byte
	Delete bool
}

// EditTree returns the tree made by applying changes to the tree root (ZeroHash = empty tree). Only the trees
// on the changed paths are rewritten; every other subtree is reused by object name (docs/architecture.md
// "Commits"). Directories left empty are removed, as git cannot record them. It returns ZeroHash for an empty
// result. New objects go to the repository's object database.
func (r *Repo) EditTree(ctx context.Context, root Hash, changes []Change) (Hash, error) {
	return r.editTreeIn(ctx, r.objs, root, changes)
}

// editTreeIn is EditTree writing new objects into st.
func (r *Repo) editTreeIn(ctx context.Context, st storer.EncodedObjectStorer, root Hash, changes []Change) (Hash, error) {
	if len(changes) == 0 {
		return root, nil
	}
	clean := make([]Change, len(changes))
	for i, c := range changes {
		p := path.Clean(strings.TrimPrefix(c.Path, "/"))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "\x00") {
			return ZeroHash, fmt.Errorf("edit tree: invalid path %q", c.Path)
		}
		c.Path = p
		clean[i] = c
	}
	return r.editTree(ctx, st, root, clean)
}

func (r *Repo) editTree(ctx context.Context, st storer.EncodedObjectStorer, root Hash, changes []Change) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return ZeroHash, err
	}
	t, err := r.tree(root)
	if err != nil {
		return ZeroHash, err
	}
	entries := map[string]object.TreeEntry{}
	for _, e := range t.Entries {
		entries[e.Name] = e
	}
	sub := map[string][]Change{}
	var subOrder []string
	for _, c := range changes {
		first, rest, nested := strings.Cut(c.Path, "/")
		if nested {
			if _, seen := sub[first]; !seen {
				subOrder = append(subOrder, first)
			}
			sub[first] = append(sub[first], Change{Path: rest, Data: c.Data, Delete: c.Delete})
			continue
		}
		if c.Delete {
			delete(entries, first)
			continue
		}
		h, err := r.writeBlob(ctx, st, c.Data)
		if err != nil {
			return ZeroHash, err
		}
		entries[first] = object.TreeEntry{Name: first, Mode: filemode.Regular, Hash: h.ph()}
	}
	for _, name := range subOrder {
		var base Hash
		e, exists := entries[name]
		if exists && e.Mode == filemode.Dir {
			base = Hash(e.Hash)
		}
		h, err := r.editTree(ctx, st, base, sub[name])
		if err != nil {
			return ZeroHash, err
		}
		if h.IsZero() {
			// Nothing left below name. Only a directory goes away: deleting name/x where name is a file
			// deletes nothing (the file stays).
			if exists && e.Mode == filemode.Dir {
				delete(entries, name)
			}
		} else {
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h.ph()}
		}
	}
	if len(entries) == 0 {
		return ZeroHash, nil
	}
	nt := &object.Tree{Entries: make([]object.TreeEntry, 0, len(entries))}
	for _, e := range entries {
		nt.Entries = append(nt.Entries, e)
	}
	sortEntries(nt.Entries)
	o := st.NewEncodedObject()
	if err := nt.Encode(o); err != nil {
		return ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	return r.store(st, o)
}

// CommitSpec describes a commit to write. Parents are in order (the first parent is the branch's previous
// tip). Tree ZeroHash means the empty tree.
type CommitSpec struct {
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	Message   string
}

// WriteCommit stores a commit object in the repository's object database and returns its name. It does
// not move any ref.
func (r *Repo) WriteCommit(ctx context.Context, spec CommitSpec) (Hash, error) {
	return r.writeCommit(ctx, r.objs, spec)
}

func (r *Repo) writeCommit(ctx context.Context, st storer.EncodedObjectStorer, spec CommitSpec) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return ZeroHash, err
	}
	tree := spec.Tree
	if tree.IsZero() {
		o := st.NewEncodedObject()
		if err := (&object.Tree{}).Encode(o); err != nil {
			return ZeroHash, fmt.Errorf("encode empty tree: %w", err)
		}
		h, err := r.store(st, o)
		if err != nil {
			return ZeroHash, err
		}
		tree = h
	}
	c := &object.Commit{
		Author:       spec.Author.og(),
		Committer:    spec.Committer.og(),
		Message:      spec.Message,
		TreeHash:     tree.ph(),
		ParentHashes: phs(spec.Parents),
	}
	o := st.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	return r.store(st, o)
}
