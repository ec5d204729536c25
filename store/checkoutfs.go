package store

import (
	"errors"
	"fmt"
	"github.com/ctx-dev/ctx/internal/plainfile"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/internal/safepath"
)

// errLink is returned by checkoutFS for a path that is, or goes through, a symbolic link.
var errLink = errors.New("a symbolic link: ctx does not follow links in " + CheckoutDir + "/")

// checkoutFS is the checked-out tree opened as an os.Root: every read and write of .context/ goes through
// it, so no path reaches outside the folder (os.Root refuses "..", absolute paths and links that lead
// out), and it refuses to go through a symbolic link at all, even one that stays inside
// (docs/security.md). Paths are slash-separated and relative to the folder.
type checkoutFS struct {
	root *os.Root
}

// openCheckout opens (creating it when missing) the checked-out tree at dir, never through a symbolic
// link: dir is made with mkdir (which does not follow a link at its place), checked with lstat to be a
// folder, opened, and the opened folder must be the one lstat saw (a folder swapped for a link in between
// is refused). *CheckoutDirError when dir is a link or not a folder (docs/security.md "Trust boundaries:
// the user's branches").
func openCheckout(dir string) (*checkoutFS, error) {
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	before, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		link, _ := os.Readlink(dir)
		if link == "" {
			link = "?"
		}
		return nil, &CheckoutDirError{Dir: dir, Link: link}
	}
	if !before.IsDir() {
		return nil, &CheckoutDirError{Dir: dir, NotDir: true}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	after, err := r.Stat(".")
	if err != nil || !os.SameFile(before, after) {
		_ = r.Close()
		return nil, fmt.Errorf("open %s: %w", dir, &CheckoutDirError{Dir: dir, Link: "?"})
	}
	return &checkoutFS{root: r}, nil
}

func (c *checkoutFS) Close() error { return c.root.Close() }

// noLinks fails with errLink when p or a folder on the way to it is a symbolic link (safepath.FirstLink).
func (c *checkoutFS) noLinks(p string) error {
	link, err := safepath.FirstLink(c.root, p)
	if err != nil {
		return err
	}
	if link != "" {
		return fmt.Errorf("%s: %w", link, errLink)
	}
	return nil
}

// onCheckoutRead, when set (tests), is called with the path of every file read from the checked-out tree.
var onCheckoutRead func(p string)

// errNotRegular is matched (errors.Is) by the error of a read of something in .context/ that is neither a
// regular file nor a folder: a named pipe, a socket, a device (notRegularError). It is never opened for
// reading, and a FIFO's open does not wait for a writer (openNonBlock).
var errNotRegular = errors.New("not a regular file")

// notRegularError names what stands at a path instead of a regular file.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	what := "not a regular file"
	switch t := e.mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		what = "a socket"
	case t&fs.ModeDevice != 0:
		what = "a device"
	}
	return what + ": ctx reads only regular files in " + CheckoutDir + "/ (remove it)"
}

func (e *notRegularError) Is(target error) bool { return target == errNotRegular }

// openRegular opens the file at p for reading without following a link at its end or blocking (a FIFO),
// and fails with a *notRegularError (and closes it) when it is neither a regular file nor a folder.
func (c *checkoutFS) openRegular(p string) (*os.File, fs.FileInfo, error) {
	f, err := c.root.OpenFile(p, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() { // a folder fails its read (EISDIR), as os.ReadFile's
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", p, &notRegularError{mode: fi.Mode()})
	}
	return f, fi, nil
}

// readFile returns the content of the file at p: a regular file (errNotRegular otherwise, never waiting
// on a FIFO), reached without a symbolic link (errLink).
func (c *checkoutFS) readFile(p string) ([]byte, error) {
	if onCheckoutRead != nil {
		onCheckoutRead(p)
	}
	if err := c.noLinks(p); err != nil {
		return nil, err
	}
	f, fi, err := c.openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return plainfile.ReadSized(f, fi.Size())
}

// hashFile returns the blob name of the file at p, streamed (for a file too large to read whole: over
// MaxFileBytes); size is its size from an lstat.
func (c *checkoutFS) hashFile(p string, size int64) (gitstore.Hash, error) {
	if err := c.noLinks(p); err != nil {
		return gitstore.ZeroHash, err
	}
	f, _, err := c.openRegular(p)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	defer f.Close()
	h, err := gitstore.BlobHashOf(f, size)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("%s: %w", p, err)
	}
	return h, nil
}

// lstat is os.Root.Lstat.
func (c *checkoutFS) lstat(p string) (fs.FileInfo, error) { return c.root.Lstat(p) }

// writeFile writes data to p with atomicfile.WriteIn: a temporary file next to it
// (atomicfile.TempPrefix), renamed over p; the folders on the way are made. It does not fsync
// (atomicfile.NoSync): the checked-out tree is a view the refs can rebuild, and an fsync per file makes
// a full refresh of 2,000 entries about four times slower (store's BenchmarkRefresh).
func (c *checkoutFS) writeFile(p string, data []byte) error {
	if err := c.noLinks(p); err != nil {
		return err
	}
	if dir, _ := path.Split(p); dir != "" {
		if err := c.root.MkdirAll(strings.TrimSuffix(dir, "/"), 0o777); err != nil {
			return err
		}
	}
	return atomicfile.WriteIn(c.root, p, data, 0o644, atomicfile.NoSync)
}

// dirWriter writes many files of the checked-out tree through one os.Root per folder: each folder is
// checked for links, made and opened once, not once per file (a refresh that writes 1,500 files of one
// folder spent most of its time walking the path of each file again, bench/README.md). Close it after use.
type dirWriter struct {
	c     *checkoutFS
	roots map[string]*os.Root
	dirs  map[string]*os.File // each root's folder opened, for atomicfile.WriteInDir
}

func (c *checkoutFS) dirWriter() *dirWriter {
	return &dirWriter{c: c, roots: map[string]*os.Root{}, dirs: map[string]*os.File{}}
}

// writeFile is checkoutFS.writeFile through the folder's root; it returns the file's stat data (an lstat
// right after the write).
func (d *dirWriter) writeFile(p string, data []byte) (*FileStat, error) {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		if err := d.c.writeFile(p, data); err != nil {
			return nil, err
		}
		fi, err := d.c.lstat(p)
		if err != nil {
			return nil, err
		}
		return statOf(fi), nil
	}
	r, f, err := d.open(dir, true)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteInDir(r, f, base, data, 0o644, atomicfile.NoSync); err != nil {
		return nil, err
	}
	_, st, err := lstatIn(r, f, base)
	return &st, err
}

// open returns the root of folder dir of the tree and the folder opened, checked once for links on the
// way; with mkdir the folder is made when missing.
func (d *dirWriter) open(dir string, mkdir bool) (*os.Root, *os.File, error) {
	if r, ok := d.roots[dir]; ok {
		return r, d.dirs[dir], nil
	}
	if err := d.c.noLinks(dir); err != nil {
		return nil, nil, err
	}
	if mkdir {
		if err := d.c.root.MkdirAll(dir, 0o777); err != nil {
			return nil, nil, err
		}
	}
	r, err := d.c.root.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.Open(".")
	if err != nil {
		_ = r.Close()
		return nil, nil, err
	}
	d.roots[dir], d.dirs[dir] = r, f
	return r, f, nil
}

// lstat is an lstat of the file at p through its folder, opened once for all the files of the folder (an
// lstat through the tree's root opens and closes every folder on the way: three calls for one). typ is
// lstatIn's; an error when p, or a folder on the way, is missing or a symbolic link.
func (d *dirWriter) lstat(p string) (typ fs.FileMode, st FileStat, err error) {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		fi, err := d.c.lstat(p)
		if err != nil {
			return 0, FileStat{}, err
		}
		typ = fi.Mode().Type()
		if typ&^(fs.ModeDir|fs.ModeSymlink) != 0 {
			typ = fs.ModeIrregular
		}
		return typ, *statOf(fi), nil
	}
	r, f, err := d.open(dir, false)
	if err != nil {
		return 0, FileStat{}, err
	}
	return lstatIn(r, f, base)
}

// remove is checkoutFS.remove; the folders it may remove are forgotten (a later write makes them again).
func (d *dirWriter) remove(p string) error {
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if r, ok := d.roots[dir]; ok {
			_ = r.Close()
			_ = d.dirs[dir].Close()
			delete(d.roots, dir)
			delete(d.dirs, dir)
		}
	}
	return d.c.remove(p)
}

// Close closes the folders' roots.
func (d *dirWriter) Close() {
	for _, r := range d.roots {
		_ = r.Close()
	}
	for _, f := range d.dirs {
		_ = f.Close()
	}
	d.roots, d.dirs = nil, nil
}

// appendFile appends data to the file at p (made when missing) with one write: a crash leaves the file
// with or without data, or with a part of it at the end (RecordLogFile's readers ignore a last line
// without its newline).
func (c *checkoutFS) appendFile(p string, data []byte) error {
	if err := c.noLinks(p); err != nil {
		return err
	}
	f, err := c.root.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// remove removes the file at p and the folders it leaves empty.
func (c *checkoutFS) remove(p string) error {
	if err := c.noLinks(p); err != nil {
		return err
	}
	if err := c.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if c.root.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// cleanTemps removes the temporary files a killed writeFile of p may have left.
func (c *checkoutFS) cleanTemps(p string) {
	dir, base := path.Split(p)
	d := strings.TrimSuffix(dir, "/")
	if d == "" {
		d = "."
	}
	if c.noLinks(d) != nil {
		return
	}
	es, err := fs.ReadDir(c.root.FS(), d)
	if err != nil {
		return
	}
	for _, e := range es {
		// Exactly the names a write makes (a user's ".notes.md.tmp" stays), regular files only.
		if b, ok := atomicfile.TempTarget(e.Name()); ok && b == base && e.Type().IsRegular() {
			_ = c.root.Remove(dir + e.Name()) // best effort: a leftover is removed on the next write
		}
	}
}

// isTemp reports whether a file name is one of writeFile's temporary files.
func isTemp(name string) bool { return atomicfile.IsTemp(name) }

// blockedFolder returns the first folder on the way to the file at p (slash path) that is a symbolic link
// or not a folder, "" when there is none (a folder that is missing blocks nothing: a write makes it). A
// write of p would have to go through it, which ctx never does (docs/security.md).
func (c *checkoutFS) blockedFolder(p string) (dir string, link bool) {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		fi, err := c.root.Lstat(p[:i])
		if err != nil {
			return "", false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return p[:i], true
		}
		if !fi.IsDir() {
			return p[:i], false
		}
	}
	return "", false
}
