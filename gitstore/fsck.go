package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrBadName is wrapped by CheckName's errors: a tree entry name that ctx never writes to disk.
var ErrBadName = errors.New("unsafe tree entry name")

// MaxNameLen bounds a tree entry name in bytes: longer names cannot be created on common file systems
// (NAME_MAX is 255), so an entry that long could never be checked out.
const MaxNameLen = 255

// CheckName reports whether name may be the name of a tree entry that ctx checks out, with git fsck's
// rules for tree entries (fsck.c: hasDot, hasDotdot, hasDotgit, fullPathname, emptyName) and a few stricter
// ones. Refused, with an error wrapping ErrBadName:
//   - "", ".", ".." and any name holding "/" or NUL;
//   - ".git" in any case, and its NTFS aliases (the 8.3 short name "git~1", trailing dots and spaces,
//     an alternate data stream ".git::$INDEX_ALLOCATION") and HFS+ aliases (".git" with ignorable Unicode
//     code points such as U+200C anywhere), as git's is_ntfs_dotgit and is_hfs_dotgit do;
//   - a backslash (a path separator on Windows, so "..\x" would climb out there) and names longer
//     than MaxNameLen bytes.
func CheckName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%q: %s: %w", name, why, ErrBadName) }
	switch {
	case name == "":
		return bad("empty name")
	case name == ".":
		return bad("names the folder itself")
	case name == "..":
		return bad("names the parent folder")
	case strings.ContainsRune(name, '/'):
		return bad("contains '/'")
	case strings.ContainsRune(name, 0):
		return bad("contains NUL")
	case strings.ContainsRune(name, '\\'):
		return bad("contains '\\' (a path separator on Windows)")
	case len(name) > MaxNameLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxNameLen))
	case isNTFSDotGit(name) || isHFSDotGit(name):
		return bad("is .git or one of its aliases")
	}
	return nil
}

// isNTFSDotGit reports whether NTFS would open name as ".git": ".git" or the short name "git~1" (any
// case, and, stricter than git, any "git~N"), followed only by dots and spaces (NTFS drops them) up to the
// end or a ':' (an alternate data stream: ".git::$INDEX_ALLOCATION" is the folder .git).
func isNTFSDotGit(name string) bool {
	lower := strings.ToLower(name)
	var rest string
	switch {
	case strings.HasPrefix(lower, ".git"):
		rest = lower[4:]
	case strings.HasPrefix(lower, "git~"):
		rest = lower[4:]
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		rest = rest[n:]
	default:
		return false
	}
	for _, c := range []byte(rest) {
		switch c {
		case ':', '\\', '/':
			return true
		case '.', ' ':
		default:
			return false
		}
	}
	return true
}

// hfsIgnorable are the code points HFS+ drops when it compares names (git's utf8.c next_hfs_char).
func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// isHFSDotGit reports whether HFS+ would open name as ".git": ".git" in any case once the ignorable code
// points are dropped (git's is_hfs_dotgit).
func isHFSDotGit(name string) bool {
	// Every ignorable code point is outside ASCII: a name of ASCII bytes only (every name ctx writes) is
	// ".git" in some case or not, without decoding it (a fetched tree or a checkout record has 10,000 names
	// to check, and the general path below builds a string for each).
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return isHFSDotGitUTF8(name)
		}
	}
	return len(name) == 4 && strings.EqualFold(name, ".git")
}

// isHFSDotGitUTF8 is isHFSDotGit for any name (the path of names with bytes outside ASCII).
func isHFSDotGitUTF8(name string) bool {
	if !utf8.ValidString(name) {
		return false
	}
	var b strings.Builder
	for _, r := range name {
		if hfsIgnorable(r) {
			continue
		}
		if r > 127 {
			return false
		}
		b.WriteRune(r)
	}
	return strings.EqualFold(b.String(), ".git")
}

// Item is one entry of a tree met by a walk (DiffItems): the names of the trees above it and its own,
// its mode and its object name. Names are kept apart because a hostile tree may hold a name with a "/"
// in it: joined, "a/b" as one name and "a" then "b" would look the same.
type Item struct {
	Names []string
	Mode  FileMode
	Hash  Hash
	// Duplicate is set when the tree holding the entry has another entry of the same name (git fsck's
	// duplicateEntries): which one a reader gets is undefined.
	Duplicate bool
}

// Path is the item's names joined by "/" (for messages; ambiguous when a name is unsafe, see CheckItem).
func (it Item) Path() string { return strings.Join(it.Names, "/") }

// IsFile reports whether the item is a regular file (mode 100644 or 100755): the only entries ctx reads.
func (it Item) IsFile() bool { return it.Mode == ModeRegular || it.Mode == ModeExecutable }

// Kind names the item's mode as git does: "file", "executable file", "folder", "symbolic link",
// "gitlink (submodule)", or "mode 0NNNNNN".
func (it Item) Kind() string {
	switch it.Mode {
	case ModeRegular:
		return "file"
	case ModeExecutable:
		return "executable file"
	case ModeDir:
		return "folder"
	case ModeSymlink:
		return "symbolic link"
	case ModeSubmodule:
		return "gitlink (submodule)"
	}
	return fmt.Sprintf("mode %07o", uint32(it.Mode))
}

// CheckItem applies CheckName to every name of the item's path and refuses duplicate names and modes git
// does not know (git fsck's badFilemode). Symbolic links and gitlinks pass: whether a reader can use them
// is the caller's rule.
func CheckItem(it Item) error {
	for _, n := range it.Names {
		if err := CheckName(n); err != nil {
			return err
		}
	}
	if it.Duplicate {
		return fmt.Errorf("%q: the tree holds this name twice: %w", it.Names[len(it.Names)-1], ErrBadName)
	}
	switch it.Mode {
	case ModeRegular, ModeExecutable, ModeDir, ModeSymlink, ModeSubmodule:
		return nil
	}
	return fmt.Errorf("%s: unknown mode %07o: %w", it.Path(), uint32(it.Mode), ErrBadName)
}

// DiffItems walks tree b against tree a (ZeroHash = the empty tree) and returns the leaves of b (every
// entry that is not a folder) that a does not hold with the same names, mode and object name, and the
// leaves of a that b no longer holds at the same names with the same type (file or not). Subtrees with the
// same object name on both sides are skipped without being read, so the cost is what changed. Empty
// folders of b are returned as leaves too (mode 040000), so that every name of b meets the caller.
func (r *Repo) DiffItems(ctx context.Context, a, b Hash) (added, removed []Item, err error) {
	return r.DiffItemsWithin(ctx, a, b, 0)
}

// DiffItemsWithin is DiffItems bounded: it visits at most maxEntries entries (files and folders, each
// path counted) of tree b and at most maxEntries of tree a, else stops with an error wrapping
// ErrTooManyEntries (maxEntries <= 0: no bound). A diff visits each path of either tree at most once, so
// trees of at most maxEntries paths each (gitstore.Repo.CountEntries) always pass; a few trees that name one subtree twice at each of
// 21 levels (2^21 paths) are refused after max entries instead of being walked for minutes
// (docs/limits.md "Files of a fetched tip").
func (r *Repo) DiffItemsWithin(ctx context.Context, a, b Hash, maxEntries int) (added, removed []Item, err error) {
	var bud *diffBudget
	if maxEntries > 0 {
		bud = &diffBudget{max: maxEntries}
	}
	err = r.diffItems(ctx, a, b, nil, &added, &removed, bud)
	return added, removed, err
}

// ErrTooManyEntries is wrapped by DiffItemsWithin and CheckHistory when a diff visits more entries than
// their bound (TooManyEntriesError).
var ErrTooManyEntries = errors.New("too many files and folders")

// TooManyEntriesError is CheckHistory's error for a commit whose diff against its first parent visits
// more than Max entries of either tree; it wraps ErrTooManyEntries.
type TooManyEntriesError struct {
	Commit Hash
	Max    int
}

func (e *TooManyEntriesError) Error() string {
	return fmt.Sprintf("commit %s: its diff against its first parent visits more than %d files and folders of one tree", e.Commit, e.Max)
}

func (e *TooManyEntriesError) Unwrap() error { return ErrTooManyEntries }

// diffBudget counts the entries a bounded diff (DiffItemsWithin) visited on each side; nil: no bound.
type diffBudget struct {
	max, a, b int
}

// take counts na more entries of tree a and nb of tree b.
func (d *diffBudget) take(na, nb int) error {
	if d == nil {
		return nil
	}
	d.a += na
	d.b += nb
	if d.a > d.max || d.b > d.max {
		return fmt.Errorf("diff: more than %d entries of one tree: %w", d.max, ErrTooManyEntries)
	}
	return nil
}

// mapDiffOnly, set by tests, makes diffItems take its general path for every tree.
var mapDiffOnly bool

type treeSide struct {
	mode FileMode
	hash Hash
	dup  bool
}

func (r *Repo) sides(h Hash) (map[string]treeSide, []string, error) {
	t, err := r.tree(h)
	if err != nil {
		return nil, nil, err
	}
	m := make(map[string]treeSide, len(t.Entries))
	order := make([]string, 0, len(t.Entries))
	for _, e := range t.Entries {
		if s, ok := m[e.Name]; ok {
			s.dup = true
			m[e.Name] = s
			continue
		}
		m[e.Name] = treeSide{mode: FileMode(e.Mode), hash: Hash(e.Hash)}
		order = append(order, e.Name)
	}
	return m, order, nil
}

func (r *Repo) diffItems(ctx context.Context, a, b Hash, names []string, added, removed *[]Item, bud *diffBudget) error {
	if a == b {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Trees in git's order with no name twice (every tree git writes) are merged as sorted lists.
	if ea, okA, err := r.rawEntries(a); err == nil && okA && !mapDiffOnly {
		if eb, okB, err := r.rawEntries(b); err == nil && okB {
			return r.diffSorted(ctx, ea, eb, names, added, removed, bud)
		}
	}
	ma, orderA, err := r.sides(a)
	if err != nil {
		return err
	}
	mb, orderB, err := r.sides(b)
	if err != nil {
		return err
	}
	path := func(n string) []string {
		p := make([]string, len(names)+1)
		copy(p, names)
		p[len(names)] = n
		return p
	}
	for _, n := range orderB {
		eb := mb[n]
		ea, inA := ma[n]
		if inA && ea == eb {
			continue
		}
		na := 0
		if inA {
			na = 1
		}
		if err := bud.take(na, 1); err != nil {
			return err
		}
		if eb.mode == ModeDir {
			var base Hash
			if inA && ea.mode == ModeDir {
				base = ea.hash
			}
			before := len(*added)
			if err := r.diffItems(ctx, base, eb.hash, path(n), added, removed, bud); err != nil {
				return err
			}
			if eb.dup || len(*added) == before && (!inA || ea.mode != ModeDir) {
				// A new folder with no leaves (or a duplicated one): its name must still be seen.
				*added = append(*added, Item{Names: path(n), Mode: eb.mode, Hash: eb.hash, Duplicate: eb.dup})
			}
			if inA && ea.mode != ModeDir {
				*removed = append(*removed, Item{Names: path(n), Mode: ea.mode, Hash: ea.hash})
			}
			continue
		}
		*added = append(*added, Item{Names: path(n), Mode: eb.mode, Hash: eb.hash, Duplicate: eb.dup})
		if inA && ea.mode == ModeDir {
			if err := r.diffItems(ctx, ea.hash, ZeroHash, path(n), &[]Item{}, removed, bud); err != nil {
				return err
			}
		}
	}
	for _, n := range orderA {
		if _, inB := mb[n]; inB {
			continue
		}
		if err := bud.take(1, 0); err != nil {
			return err
		}
		ea := ma[n]
		if ea.mode == ModeDir {
			if err := r.diffItems(ctx, ea.hash, ZeroHash, path(n), &[]Item{}, removed, bud); err != nil {
				return err
			}
			continue
		}
		*removed = append(*removed, Item{Names: path(n), Mode: ea.mode, Hash: ea.hash})
	}
	return nil
}

// Stat returns the entry at the slash path p of tree root with its mode (ok false when absent, when a
// folder on the way is not a folder, or when a tree on the way holds the name twice).
func (r *Repo) Stat(ctx context.Context, root Hash, p string) (Item, bool, error) {
	cur := root
	names := strings.Split(p, "/")
	for i, n := range names {
		if err := ctx.Err(); err != nil {
			return Item{}, false, err
		}
		if cur.IsZero() {
			return Item{}, false, nil
		}
		t, err := r.tree(cur)
		if err != nil {
			return Item{}, false, err
		}
		var e object.TreeEntry
		found := 0
		for _, te := range t.Entries {
			if te.Name == n {
				e = te
				found++
			}
		}
		if found != 1 {
			return Item{}, false, nil
		}
		if i == len(names)-1 {
			return Item{Names: names, Mode: FileMode(e.Mode), Hash: Hash(e.Hash)}, true, nil
		}
		if e.Mode != filemode.Dir {
			return Item{}, false, nil
		}
		cur = Hash(e.Hash)
	}
	return Item{}, false, nil
}

// NameProblem is an entry of a commit's tree that CheckItem refuses.
type NameProblem struct {
	Commit Hash
	Item   Item
	Err    error
}

// CheckHistory applies CheckItem to every entry added by every commit reachable from tip but not from any
// of known (the commits a fetch brought), each commit's tree compared with its first parent's: what git
// fsck does to received trees (transfer.fsckObjects), done by ctx itself so that it also holds when go-git
// fetched, or a git without fsck did. At most limit problems are returned (0 = no limit). Each commit's
// diff visits at most maxEntries entries of its tree and of its first parent's (DiffItemsWithin; 0 = no
// bound): past that, CheckHistory stops with a *TooManyEntriesError naming the commit, so that a commit
// under a small tip cannot make the check walk millions of paths.
func (r *Repo) CheckHistory(ctx context.Context, tip Hash, known []Hash, limit, maxEntries int) ([]NameProblem, error) {
	commits, err := r.NewCommits(ctx, tip, known)
	if err != nil {
		return nil, err
	}
	var out []NameProblem
	for _, h := range commits {
		c, err := r.Commit(ctx, h)
		if err != nil {
			return nil, err
		}
		var parentTree Hash
		if len(c.ParentHashes) > 0 {
			if parentTree, err = r.TreeOf(ctx, c.ParentHashes[0]); err != nil {
				return nil, err
			}
		}
		added, _, err := r.DiffItemsWithin(ctx, parentTree, c.TreeHash, maxEntries)
		if errors.Is(err, ErrTooManyEntries) {
			return nil, &TooManyEntriesError{Commit: h, Max: maxEntries}
		}
		if err != nil {
			return nil, fmt.Errorf("check commit %s: %w", h, err)
		}
		for _, it := range added {
			if err := CheckItem(it); err != nil {
				out = append(out, NameProblem{Commit: h, Item: it, Err: err})
				if limit > 0 && len(out) >= limit {
					return out, nil
				}
			}
		}
	}
	return out, nil
}

// ErrFsck is wrapped by a fetch whose received objects git's fsck refused (transfer.fsckObjects).
var ErrFsck = errors.New("the fetched objects fail git fsck")

// fsckArgs are the git options of every fetch: check every received object (fetch.fsckObjects and
// transfer.fsckObjects, git-config(1)).
func fsckArgs() []string {
	return []string{"-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true"}
}

// isFsckFailure reports whether git's stderr says that fsck refused received objects.
func isFsckFailure(stderr string) bool {
	return strings.Contains(stderr, "fsck error") || strings.Contains(stderr, "fsck failed")
}

// FetchQuarantine fetches the ref src of remote (a configured remote's name, or a URL) with the system git
// into a new, empty, throwaway bare repository under ctx's folder, without fsck, and returns it opened with
// the fetched commit; cleanup removes it. The fetched objects never enter this repository: it serves to
// name the commit and path that git's fsck refused (ErrFsck), with CheckHistory on the returned repository.
func (r *Repo) FetchQuarantine(ctx context.Context, remote, src string, opt TransferOptions) (q *Repo, tip Hash, cleanup func(), err error) {
	cleanup = func() {}
	if !HasGit() {
		return nil, ZeroHash, cleanup, errors.New("quarantine fetch: no git binary")
	}
	if err := r.CheckRemote(remote, opt.Origin); err != nil {
		return nil, ZeroHash, cleanup, err
	}
	url := remote
	if remotes, err := r.Remotes(ctx); err == nil {
		for _, rm := range remotes {
			if rm.Name == remote {
				// The throwaway repository has no remotes: use the URL, with insteadOf applied.
				out, _, err := r.runGit(ctx, opt, nil, "--git-dir="+r.commonDir, "remote", "get-url", "--", remote)
				if err != nil {
					return nil, ZeroHash, cleanup, fmt.Errorf("quarantine fetch: %w", err)
				}
				url = strings.TrimSpace(out)
			}
		}
	}
	if err := os.MkdirAll(r.CtxDir(), 0o777); err != nil {
		return nil, ZeroHash, cleanup, fmt.Errorf("quarantine fetch: %w", err)
	}
	dir, err := os.MkdirTemp(r.CtxDir(), "quarantine-")
	if err != nil {
		return nil, ZeroHash, cleanup, fmt.Errorf("quarantine fetch: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	if _, stderr, err := r.runGit(ctx, opt, nil, "init", "-q", "--bare", "--", dir); err != nil {
		return nil, ZeroHash, cleanup, fmt.Errorf("quarantine fetch: git init: %s: %w", strings.TrimSpace(stderr), err)
	}
	const dst = "refs/quarantine/tip"
	if _, stderr, err := r.runGit(ctx, opt, nil, "-c", "fetch.fsckObjects=false", "-c", "transfer.fsckObjects=false",
		"--git-dir="+dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		"--", url, "+"+src+":"+dst); err != nil {
		return nil, ZeroHash, cleanup, fmt.Errorf("quarantine fetch: %s", lastLines(stderr, err))
	}
	q, err = Open(ctx, dir)
	if err != nil {
		return nil, ZeroHash, cleanup, fmt.Errorf("quarantine fetch: %w", err)
	}
	tip, err = q.Resolve(ctx, dst)
	if err != nil {
		return nil, ZeroHash, cleanup, fmt.Errorf("quarantine fetch: %w", err)
	}
	return q, tip, cleanup, nil
}

// RemoveItems returns tree root without the entries at the given paths, each given as its raw names (so
// that an entry whose name holds "/" or is ".." can be named). Folders left empty are removed. Names not
// found are ignored; a duplicated name removes every entry of that name.
//
// The new trees are written to the object database of ref (the local store for a private or ephemeral
// ref, so nothing of a private tree enters the main one).
func (r *Repo) RemoveItems(ctx context.Context, ref string, root Hash, paths [][]string) (Hash, error) {
	if len(paths) == 0 || root.IsZero() {
		return root, nil
	}
	st, err := r.storageFor(ref)
	if err != nil {
		return ZeroHash, err
	}
	if err := ctx.Err(); err != nil {
		return ZeroHash, err
	}
	t, err := r.tree(root)
	if err != nil {
		return ZeroHash, err
	}
	drop := map[string]bool{}
	below := map[string][][]string{}
	for _, p := range paths {
		if len(p) == 0 {
			continue
		}
		if len(p) == 1 {
			drop[p[0]] = true
			continue
		}
		below[p[0]] = append(below[p[0]], p[1:])
	}
	nt := &object.Tree{}
	changed := false
	for _, e := range t.Entries {
		if drop[e.Name] {
			changed = true
			continue
		}
		if sub, ok := below[e.Name]; ok && e.Mode == filemode.Dir {
			h, err := r.RemoveItems(ctx, ref, Hash(e.Hash), sub)
			if err != nil {
				return ZeroHash, err
			}
			if h != Hash(e.Hash) {
				changed = true
				if h.IsZero() {
					continue
				}
				e.Hash = h.ph()
			}
		}
		nt.Entries = append(nt.Entries, e)
	}
	if !changed {
		return root, nil
	}
	if len(nt.Entries) == 0 {
		return ZeroHash, nil
	}
	o := st.NewEncodedObject()
	if err := nt.Encode(o); err != nil {
		return ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	return r.store(st, o)
}
