// Package wtfs reads and writes files of a work tree for the adapters: every path goes through an
// os.Root (no "..", no absolute path, no link out of the tree) and through no symbolic link at all, and
// every write is atomic (a temporary file in the same folder, synced, renamed over the target). Paths are
// slash-separated and relative to the root. The rules are in docs/adapters.md ("Safety").
package wtfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/internal/safepath"
)

// ErrLink is wrapped by the error for a path that is, or goes through, a symbolic link.
var ErrLink = errors.New("a symbolic link: ctx does not write through links")

// FS is a work tree opened for the adapters.
type FS struct {
	root *os.Root
}

// Open opens the work tree at dir.
func Open(dir string) (*FS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open work tree: %w", err)
	}
	return &FS{root: r}, nil
}

// Close releases the root.
func (f *FS) Close() error { return f.root.Close() }

// noLinks fails with ErrLink when p or a folder on the way to it is a symbolic link (safepath.FirstLink).
func (f *FS) noLinks(p string) error {
	link, err := safepath.FirstLink(f.root, p)
	if err != nil {
		return err
	}
	if link != "" {
		return fmt.Errorf("%s: %w", link, ErrLink)
	}
	return nil
}

// ReadFile returns the content of the regular file at p; an error wrapping fs.ErrNotExist when there is
// none, ErrLink for a link, an error for something that is not a regular file.
func (f *FS) ReadFile(p string) ([]byte, error) {
	if err := f.noLinks(p); err != nil {
		return nil, err
	}
	fi, err := f.root.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return f.root.ReadFile(p)
}

// Exists reports whether anything (file, folder, link) is at p.
func (f *FS) Exists(p string) bool {
	_, err := f.root.Lstat(p)
	return err == nil
}

// ReadDir lists the folder at p (nil when it does not exist).
func (f *FS) ReadDir(p string) ([]fs.DirEntry, error) {
	if err := f.noLinks(p); err != nil {
		return nil, err
	}
	es, err := fs.ReadDir(f.root.FS(), p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return es, err
}

// WriteFile writes data to p atomically, keeping the permission bits of the file it replaces (0644 for
// a new one). Missing folders are made.
func (f *FS) WriteFile(p string, data []byte) error {
	if err := f.noLinks(p); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := f.root.Lstat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	dir, _ := path.Split(p)
	if dir != "" {
		if err := f.root.MkdirAll(strings.TrimSuffix(dir, "/"), 0o777); err != nil {
			return err
		}
	}
	// One atomic writer for the whole project (temp file, fsync, rename, fsync folder), confined to root.
	return atomicfile.WriteIn(f.root, p, data, mode, atomicfile.Durable)
}

// Remove removes the file at p, then its folder when that is empty and is not stop (stop and the folders
// above it stay).
func (f *FS) Remove(p, stop string) error {
	if err := f.noLinks(p); err != nil {
		return err
	}
	if err := f.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if dir := path.Dir(p); dir != stop && dir != "." && strings.HasPrefix(dir, stop+"/") {
		_ = f.root.Remove(dir) // fails, as wanted, when the folder holds anything else
	}
	return nil
}
