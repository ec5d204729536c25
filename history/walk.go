package history

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DirCache remembers the listing of each directory discovery walked, under the directory's stamp (its
// inode, mtime, ctime and size on Linux, mtime and size elsewhere; docs/history.md "Discovery"), as git's
// untracked cache does: a directory whose stamp did not change since it was listed is not read again,
// only its subdirectories are lstat'ed. Adding, removing or renaming an entry changes a directory's
// mtime and ctime; appending to a file changes neither, so every source file is still lstat'ed by the
// import (statUnchanged). A listing is kept only when the directory's times are at least racyWindow
// older than the walk, so a change within the file system's timestamp granularity is never missed.
// It is kept in the index (table dirs) by Index.LoadDirCache and Index.SaveDirCache. Safe for use by
// several goroutines.
type DirCache struct {
	mu    sync.Mutex
	old   map[string]cachedDir // as loaded
	put   map[string]cachedDir // listed by this process, to save
	seen  map[string]bool      // every directory walked
	roots []string             // the roots walked
	start time.Time            // when the first walk started
	all   bool                 // the walks covered every root the imports keep (ForgetOtherRoots)
}

// ForgetOtherRoots says that this process walks every root the imports of this index keep (a full import:
// every provider's root and every configured root), so SaveDirCache also forgets the listings of
// directories under no root walked: those of a one-off `ctx history import --provider P --path DIR`, of
// a configured root since removed, of a root that no longer exists. Without it only the directories under
// the walked roots that the walks no longer found are forgotten.
func (c *DirCache) ForgetOtherRoots() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = true
}

type cachedDir struct {
	stamp   string
	entries string // per entry: 'd' (directory) or 'f' (regular file), the name, NUL
}

// racyWindow: a directory changed this recently when it was listed may change again with the same
// stamp (timestamps are as coarse as a clock tick, two seconds on FAT); its listing is not kept.
const racyWindow = 2 * time.Second

// LoadDirCache reads the directory listings the last imports kept. A cache that cannot be read is
// empty (the walk lists every directory), never an error.
func (ix *Index) LoadDirCache(ctx context.Context) *DirCache {
	c := &DirCache{old: map[string]cachedDir{}, put: map[string]cachedDir{}, seen: map[string]bool{}}
	rows, err := ix.db.QueryContext(ctx, `SELECT path, stamp, entries FROM dirs`)
	if err != nil {
		return c
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var d cachedDir
		if rows.Scan(&p, &d.stamp, &d.entries) != nil {
			return &DirCache{old: map[string]cachedDir{}, put: map[string]cachedDir{}, seen: map[string]bool{}}
		}
		c.old[p] = d
	}
	return c
}

// SaveDirCache records the listings this process made, in one transaction, and forgets the
// directories under the walked roots that the walks no longer found (after ForgetOtherRoots, every
// directory the walks did not find).
func (ix *Index) SaveDirCache(ctx context.Context, c *DirCache) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var gone []string
	for p := range c.old {
		if !c.seen[p] && (c.all || underAny(p, c.roots)) {
			gone = append(gone, p)
		}
	}
	if len(c.put) == 0 && len(gone) == 0 {
		return nil
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save directory cache: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	if err := putDirs(ctx, tx, c.put, gone); err != nil {
		return fmt.Errorf("save directory cache: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save directory cache: %w", err)
	}
	for _, p := range gone {
		delete(c.old, p)
	}
	for p, d := range c.put {
		c.old[p] = d
	}
	clear(c.put)
	return nil
}

func putDirs(ctx context.Context, tx *sql.Tx, put map[string]cachedDir, gone []string) error {
	ins, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO dirs(path, stamp, entries) VALUES(?,?,?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for p, d := range put {
		if _, err := ins.ExecContext(ctx, p, d.stamp, d.entries); err != nil {
			return err
		}
	}
	del, err := tx.PrepareContext(ctx, `DELETE FROM dirs WHERE path=?`)
	if err != nil {
		return err
	}
	defer del.Close()
	for _, p := range gone {
		if _, err := del.ExecContext(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// walkFn is called for each regular file with its path, its path relative to the root and its lstat
// (ok false: it could not be read).
type walkFn func(path, rel string, st walkStat, ok bool) error

// walk visits the regular files under root in lexical order, depth first, as filepath.WalkDir would:
// it never follows a symbolic link (a root that is one has no files), skips hidden directories below the
// root and directories deeper than maxWalkDepth, and skips unreadable subdirectories (an unreadable root
// is an error). With a cache, an unchanged directory's listing comes from it (DirCache).
func walk(ctx context.Context, root string, c *DirCache, fn walkFn) error {
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return nil // a symbolic link: never followed
	}
	if c != nil {
		c.mu.Lock()
		if c.start.IsZero() {
			c.start = time.Now()
		}
		c.roots = append(c.roots, root)
		c.mu.Unlock()
	}
	d, err := openWalkRoot(root)
	if err != nil {
		return err
	}
	defer d.close()
	stamp, changed := dirStamp(fi)
	return walkDir(ctx, root, d, "", 0, stamp, changed, c, fn, true)
}

// walkDir walks dir, open as d, whose stamp is stamp and changed (DirCache).
func walkDir(ctx context.Context, dir string, d dirFD, rel string, depth int, stamp string, changed time.Time, c *DirCache, fn walkFn, isRoot bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := listDir(dir, stamp, changed, c)
	if err != nil {
		if isRoot {
			return err
		}
		return nil // unreadable subdirectory: skip it
	}
	sep := string(filepath.Separator)
	if strings.HasSuffix(dir, sep) {
		sep = "" // the root of the file system
	}
	for len(entries) > 0 {
		end := strings.IndexByte(entries, 0)
		if end < 1 {
			return nil // a malformed cache entry cannot come from listDir
		}
		kind, name := entries[0], entries[1:end]
		entries = entries[end+1:]
		path := dir + sep + name // dir is clean and name one element (validEntries): filepath.Join's result
		erel := name
		if rel != "" {
			erel = rel + string(filepath.Separator) + name
		}
		if kind == 'f' {
			st, ok := d.lstat(name, path)
			if err := fn(path, erel, st, ok); err != nil {
				return err
			}
			continue
		}
		if depth+1 > maxWalkDepth || strings.HasPrefix(name, ".") {
			continue
		}
		// The subdirectory's stamp decides whether its cached listing holds; lstat also tells a
		// directory replaced by a symbolic link, which is skipped (and never opened through one).
		st, ok := d.lstat(name, path)
		if !ok || !st.dir {
			continue
		}
		sub, err := d.sub(name, path)
		if err != nil {
			continue
		}
		subStamp, subChanged := st.stamp()
		err = walkDir(ctx, path, sub, erel, depth+1, subStamp, subChanged, c, fn, false)
		sub.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// listDir returns the directories and regular files of dir ('d' or 'f', the name, NUL; by name), from
// the cache when dir's stamp (dirStamp of its lstat) is the one recorded.
func listDir(dir, stamp string, changed time.Time, c *DirCache) (string, error) {
	if c != nil {
		c.mu.Lock()
		c.seen[dir] = true
		d, ok := c.put[dir] // listed by an earlier walk of this process
		if !ok {
			d, ok = c.old[dir]
		}
		c.mu.Unlock()
		if ok && d.stamp == stamp && validEntries(d.entries) {
			return d.entries, nil
		}
	}
	dirReads.Add(1)
	des, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, d := range des {
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			continue // never followed
		case d.IsDir():
			b.WriteByte('d')
		case d.Type().IsRegular():
			b.WriteByte('f')
		default:
			continue
		}
		b.WriteString(d.Name())
		b.WriteByte(0)
	}
	entries := b.String()
	if c != nil {
		c.mu.Lock()
		if changed.Before(c.start.Add(-racyWindow)) {
			c.put[dir] = cachedDir{stamp: stamp, entries: entries}
		} else {
			delete(c.put, dir) // too recent to trust next time
		}
		c.mu.Unlock()
	}
	return entries, nil
}

// dirReads counts the directories listed (read by the tests).
var dirReads atomic.Int64

// validEntries checks a cached listing before it names paths: each entry a kind and a single path
// element (the index is ctx's own, but a damaged one must not lead the walk elsewhere).
func validEntries(s string) bool {
	for len(s) > 0 {
		end := strings.IndexByte(s, 0)
		if end < 2 || (s[0] != 'd' && s[0] != 'f') {
			return false
		}
		name := s[1:end]
		if name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
			return false
		}
		s = s[end+1:]
	}
	return true
}
