package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/ctx-dev/ctx/gitstore/objread"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Entry is one name in a tree listing.
type Entry struct {
	Name string
	Dir  bool
	Hash Hash
	Mode FileMode
}

// IsFile reports whether the entry is a regular file (mode 100644 or 100755), the only entries ctx reads:
// a symbolic link or a gitlink (submodule) is not one.
func (e Entry) IsFile() bool { return e.Mode == ModeRegular || e.Mode == ModeExecutable }

// lookup finds the entry at a slash-separated path below tree root.
func (r *Repo) lookup(ctx context.Context, root Hash, p string) (Entry, error) {
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return Entry{Dir: true, Hash: root, Mode: ModeDir}, nil
	}
	cur := root
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if err := ctx.Err(); err != nil {
			return Entry{}, err
		}
		if cur.IsZero() {
			return Entry{}, fmt.Errorf("%s: %w", p, ErrNotFound)
		}
		e, found, err := r.entryIn(cur, part)
		if err != nil {
			return Entry{}, err
		}
		if !found {
			return Entry{}, fmt.Errorf("%s: %w", p, ErrNotFound)
		}
		if i == len(parts)-1 {
			return e, nil
		}
		if !e.Dir {
			return Entry{}, fmt.Errorf("%s: %w", p, ErrNotFound)
		}
		cur = e.Hash
	}
	return Entry{}, fmt.Errorf("%s: %w", p, ErrNotFound)
}

// entryIn finds the entry called name in tree h. A tree this Repo has decoded already (treeCache) is
// searched as it is; any other is scanned in its raw form without being decoded, so reading one path
// through a folder of 10,000 entries allocates nothing per entry (git's own path lookup works the same
// way). The scan checks the tree's framing and fails with an error on a malformed tree.
func (r *Repo) entryIn(h Hash, name string) (Entry, bool, error) {
	if t := r.trees.get(h); t != nil {
		for _, e := range t.Entries {
			if e.Name == name {
				return Entry{Name: e.Name, Dir: e.Mode == filemode.Dir, Hash: Hash(e.Hash), Mode: FileMode(e.Mode)}, true, nil
			}
		}
		return Entry{}, false, nil
	}
	if pr, ok := r.cf.(*packReader); ok {
		if e, found, handled, err := pr.treeEntry(h, name); handled {
			if err != nil {
				return Entry{}, false, fmt.Errorf("read tree %s: %w", h, err)
			}
			return e, found, nil
		}
	}
	if es, ok, hit := r.raws.get(h); hit && ok {
		return rawEntryNamed(es, name)
	}
	raw, err := r.rawTree(h)
	if err != nil {
		return Entry{}, false, fmt.Errorf("read tree %s: %w", h, err)
	}
	// A loose tree is inflated whole: its entries are kept (rawCache) for the other readers of the same
	// write (the secrets check, the edit, the diff of the commit, the refresh of .context/).
	if es, ok := parseRawEntries(raw); ok {
		r.raws.put(h, raw, es, ok)
		return rawEntryNamed(es, name)
	}
	e, found, err := scanTree(raw, name)
	if err != nil {
		return Entry{}, false, fmt.Errorf("read tree %s: %w", h, err)
	}
	return e, found, nil
}

// rawEntryNamed finds name among the parsed entries of a tree in git's order (parseRawEntries said ok, so
// no name is there twice).
func rawEntryNamed(es []rawEntry, name string) (Entry, bool, error) {
	for _, e := range es {
		if string(e.name) == name {
			return Entry{Name: name, Dir: e.dir(), Hash: e.hash, Mode: e.mode}, true, nil
		}
	}
	return Entry{}, false, nil
}

// errMalformedTree reports a tree object whose bytes do not follow git's tree format.
var errMalformedTree = objread.ErrMalformedTree

// scanTree finds name in the raw bytes of a tree object: a sequence of "<octal mode> <name>\x00<20-byte
// object name>" (gitformat-tree(5)). The first entry of that name wins.
func scanTree(raw []byte, name string) (e Entry, found bool, err error) {
	oe, found, err := objread.FindTreeEntry(raw, name)
	return Entry{Name: oe.Name, Dir: oe.Dir, Hash: Hash(oe.Hash), Mode: FileMode(oe.Mode)}, found, err
}

// eachRawEntry calls fn with the name (a slice of raw), mode and object name of each entry of the raw
// bytes of a tree object, in the order stored, until fn returns false (objread.EachTreeEntry). It fails
// with errMalformedTree where the bytes do not follow git's tree format.
func eachRawEntry(raw []byte, fn func(name []byte, mode FileMode, h *Hash) bool) error {
	return objread.EachTreeEntry(raw, func(n []byte, mode objread.FileMode, h *objread.Hash) bool {
		return fn(n, FileMode(mode), (*Hash)(h))
	})
}

// ReadFile returns the content of the file at path in tree root. Errors wrap ErrNotFound when the path
// is absent, names a directory, or names an entry that is not a regular file (a symbolic link, a gitlink).
func (r *Repo) ReadFile(ctx context.Context, root Hash, p string) ([]byte, error) {
	e, err := r.lookup(ctx, root, p)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return nil, fmt.Errorf("%s is a directory: %w", p, ErrNotFound)
	}
	if !e.IsFile() {
		return nil, fmt.Errorf("%s is not a regular file (mode %o): %w", p, uint32(e.Mode), ErrNotFound)
	}
	return r.ReadBlob(ctx, e.Hash)
}

// Lookup returns the entry at the slash path p below tree root (p "" is root itself, as a folder); found is
// false when the path is absent (a name of the path missing, or one before the last not a folder).
func (r *Repo) Lookup(ctx context.Context, root Hash, p string) (e Entry, found bool, err error) {
	e, err = r.lookup(ctx, root, p)
	if isNotFound(err) {
		return Entry{}, false, nil
	}
	return e, err == nil, err
}

// PathHash returns the object name at path in tree root (a blob or a tree), ZeroHash when absent.
func (r *Repo) PathHash(ctx context.Context, root Hash, p string) (Hash, error) {
	e, err := r.lookup(ctx, root, p)
	if err != nil {
		if isNotFound(err) {
			return ZeroHash, nil
		}
		return ZeroHash, err
	}
	return e.Hash, nil
}

// List returns the entries of the directory at path in tree root, sorted by name; none when absent.
func (r *Repo) List(ctx context.Context, root Hash, dir string) ([]Entry, error) {
	e, err := r.lookup(ctx, root, dir)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if !e.Dir || e.Hash.IsZero() {
		return nil, nil
	}
	t, err := r.tree(e.Hash)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(t.Entries))
	for _, te := range t.Entries {
		out = append(out, Entry{Name: te.Name, Dir: te.Mode == filemode.Dir, Hash: Hash(te.Hash), Mode: FileMode(te.Mode)})
	}
	// git's tree order is byte order but for folders (sorted as if named "name/"): a folder of files is
	// already sorted by name: one pass checks it (sorting 10,000 names again was 4 ms of CPU in each write
	// of a 10,000-entry store, bench/README.md "MCP write tool").
	byName := func(a, b Entry) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(out, byName) {
		slices.SortFunc(out, byName)
	}
	return out, nil
}

// CountEntries returns how many entries tree root and every folder below it hold, files and folders
// alike, each path counted (a subtree under two names counts twice). It stops once the count passes limit
// and returns limit+1 then, without reading further trees: a tree of a few objects whose folders name one
// subtree twice, level after level, names 2^depth paths, and costs limit entries here, not 2^depth.
// Errors: a tree that cannot be read, ctx's error.
func (r *Repo) CountEntries(ctx context.Context, root Hash, limit int) (int, error) {
	n := 0
	var count func(h Hash) error
	count = func(h Hash) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, err := r.tree(h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			if n++; n > limit {
				return nil
			}
			if e.Mode == filemode.Dir {
				if err := count(Hash(e.Hash)); err != nil || n > limit {
					return err
				}
			}
		}
		return nil
	}
	if root.IsZero() {
		return 0, nil
	}
	err := count(root)
	return n, err
}

// Walk calls fn for every file below tree root (depth first, in git's tree order) with its slash path
// and blob name.
func (r *Repo) Walk(ctx context.Context, root Hash, fn func(p string, blob Hash) error) error {
	return r.walk(ctx, root, "", fn)
}

func (r *Repo) walk(ctx context.Context, h Hash, prefix string, fn func(string, Hash) error) error {
	if h.IsZero() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := r.tree(h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := prefix + e.Name
		if e.Mode == filemode.Dir {
			if err := r.walk(ctx, Hash(e.Hash), p+"/", fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(p, Hash(e.Hash)); err != nil {
			return err
		}
	}
	return nil
}

// Files returns every file of tree root with its content, keyed by slash path.
func (r *Repo) Files(ctx context.Context, root Hash) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := r.Walk(ctx, root, func(p string, blob Hash) error {
		b, err := r.ReadBlob(ctx, blob)
		if err != nil {
			return err
		}
		out[p] = b
		return nil
	})
	return out, err
}

// IsMissingBlob reports whether err, from ReadBlob, says the object is not there or is not a blob: what
// FilesAt leaves out as an absent file.
func IsMissingBlob(err error) bool {
	return err != nil && (errors.Is(err, plumbing.ErrObjectNotFound) || strings.Contains(err.Error(), "not a blob"))
}

// EntriesAt returns the entries of tree root at the given paths that are not folders, keyed by slash path
// as given, found as FilesAt finds the files it reads (the same cleaning of a path, the first entry of a
// name): a caller that takes a file's object name instead of its content (a merge's one-sided change,
// docs/merge.md "What a pull reads") sees what FilesAt would have read. Absent paths are left out; objects
// are not read.
func (r *Repo) EntriesAt(ctx context.Context, root Hash, paths []string) (map[string]Entry, error) {
	out := map[string]Entry{}
	err := r.entriesAt(ctx, root, paths, func(f Entry, given []string) error {
		for _, p := range given {
			out[p] = f
		}
		return nil
	})
	return out, err
}

// entriesAt calls found with each entry of tree root at the given paths that is not a folder (the first
// entry of its name), with the paths as given that name it. Each folder holding some of the paths is read
// and scanned once.
func (r *Repo) entriesAt(ctx context.Context, root Hash, paths []string, found func(f Entry, given []string) error) error {
	// The wanted names of each folder (cleaned as lookup cleans a path), and the paths asking for each.
	type want struct {
		names map[string][]string // base name -> the paths as given
	}
	folders := map[string]*want{}
	var order []string
	given := make(map[string]bool, len(paths))
	for _, p := range paths {
		if given[p] {
			continue
		}
		given[p] = true
		clean := strings.Trim(path.Clean("/"+p), "/")
		if clean == "" {
			continue // the root is a folder, not a file
		}
		dir, base := path.Split(clean)
		w := folders[dir]
		if w == nil {
			w = &want{names: map[string][]string{}}
			folders[dir] = w
			order = append(order, dir)
		}
		w.names[base] = append(w.names[base], p)
	}
	for _, dir := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		w := folders[dir]
		e, err := r.lookup(ctx, root, dir)
		if isNotFound(err) || err == nil && (!e.Dir || e.Hash.IsZero()) {
			continue
		}
		if err != nil {
			return err
		}
		es, err := r.entriesNamed(e.Hash, w.names)
		if err != nil {
			return err
		}
		for _, f := range es {
			if f.Dir {
				continue
			}
			if err := found(f, w.names[f.Name]); err != nil {
				return err
			}
		}
	}
	return nil
}

// FilesAt returns the files of tree root at the given paths (absent ones, folders and entries whose object
// is not a blob are left out; duplicates are read once) and every file below the given directories, keyed
// by slash path as given. It reads only those blobs: a merge of two sides that changed 1,000 entries of a
// 10,000-entry store reads 1,000 files, not 10,000. Each folder holding some of the paths is read once and
// scanned once for all of its names (a lookup per path read and scanned the 10,000-entry folder 1,000
// times: 2 s of CPU per merge, bench/README.md "Third round").
func (r *Repo) FilesAt(ctx context.Context, root Hash, paths []string, dirs []string) (map[string][]byte, error) {
	return r.filesAt(ctx, root, paths, dirs, nil)
}

// FilesAtEach is FilesAt of each tree of roots (a merge's base, ours and theirs) with the same paths and
// dirs, reading each blob once: a file one side did not change is the same blob in two of the trees (a
// 1,000 × 1,000 merge of a 10,000-entry store asks for 4,500 files, 3,500 of them distinct). Each map has
// its own copy of a blob's bytes, as from separate FilesAt calls.
func (r *Repo) FilesAtEach(ctx context.Context, roots []Hash, paths []string, dirs []string) ([]map[string][]byte, error) {
	read := map[Hash][]byte{}
	out := make([]map[string][]byte, len(roots))
	for i, root := range roots {
		m, err := r.filesAt(ctx, root, paths, dirs, read)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// filesAt is FilesAt; read, when not nil, holds the blobs read by earlier calls of the same FilesAtEach
// (a copy is taken from it) and gets the ones this call reads.
func (r *Repo) filesAt(ctx context.Context, root Hash, paths []string, dirs []string, read map[Hash][]byte) (map[string][]byte, error) {
	blob := func(h Hash) ([]byte, error) {
		if b, ok := read[h]; ok {
			return bytes.Clone(b), nil
		}
		b, err := r.ReadBlob(ctx, h)
		if err == nil && read != nil {
			read[h] = b
		}
		return b, err
	}
	out := map[string][]byte{}
	err := r.entriesAt(ctx, root, paths, func(f Entry, given []string) error {
		b, err := blob(f.Hash)
		if err != nil {
			if IsMissingBlob(err) {
				return nil
			}
			return err
		}
		for _, p := range given {
			out[p] = b
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		e, err := r.lookup(ctx, root, d)
		if isNotFound(err) || err == nil && !e.Dir {
			continue
		}
		if err != nil {
			return nil, err
		}
		err = r.walk(ctx, Hash(e.Hash), strings.Trim(d, "/")+"/", func(p string, h Hash) error {
			b, err := blob(h)
			if err != nil {
				return err
			}
			out[p] = b
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// entriesNamed returns the entries of tree h whose names are keys of names (the first entry of each name,
// as entryIn finds it), in the tree's order, reading and scanning the tree once: the decoded tree when
// this Repo holds it, else its raw bytes (not decoded).
func (r *Repo) entriesNamed(h Hash, names map[string][]string) ([]Entry, error) {
	var out []Entry
	seen := make(map[string]bool, len(names))
	if t := r.trees.get(h); t != nil {
		for _, e := range t.Entries {
			if _, ok := names[e.Name]; ok && !seen[e.Name] {
				seen[e.Name] = true
				out = append(out, Entry{Name: e.Name, Dir: e.Mode == filemode.Dir, Hash: Hash(e.Hash), Mode: FileMode(e.Mode)})
			}
		}
		return out, nil
	}
	raw, err := r.rawTree(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	err = eachRawEntry(raw, func(n []byte, mode FileMode, eh *Hash) bool {
		if _, ok := names[string(n)]; ok && !seen[string(n)] {
			seen[string(n)] = true
			out = append(out, Entry{Name: string(n), Dir: mode == ModeDir, Hash: *eh, Mode: mode})
		}
		return len(seen) < len(names)
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	return out, nil
}

// DiffTrees returns the paths of files that differ between trees a and b (added, removed or changed),
// sorted: the paths of DiffItems' leaves (a mode change counts, as in git diff-tree; an empty folder does
// not). Subtrees with the same object name are skipped without being read.
func (r *Repo) DiffTrees(ctx context.Context, a, b Hash) ([]string, error) {
	added, removed, err := r.DiffItems(ctx, a, b)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(added)+len(removed))
	var out []string
	for _, it := range append(added, removed...) {
		if it.Mode == ModeDir { // an empty folder: no file changed
			continue
		}
		if p := it.Path(); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
