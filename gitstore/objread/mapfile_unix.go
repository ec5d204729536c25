//go:build unix

package objread

import (
	"errors"
	"os"
	"syscall"

	"github.com/ctx-dev/ctx/internal/plainfile"
)

// MapPacks says whether packs are mapped whole (Unix), not read with pread; tests set it false to read
// through pread as on other platforms.
var MapPacks = true

// mapFile maps the file at path read-only into memory; unmap releases it. Git never rewrites a pack index
// in place (a new one is written beside and renamed), so the mapping stays valid while it is used.
func mapFile(path string) (data []byte, unmap func(), err error) {
	f, err := plainfile.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	return mapOpen(f, fi.Size())
}

// mapOpen maps the first size bytes of the open file f (size from its stat) read-only; unmap releases
// them. The mapping does not hold f: f may be closed at once.
func mapOpen(f *os.File, size int64) (data []byte, unmap func(), err error) {
	if size <= 0 || size > 1<<40 || int64(int(size)) != size {
		return nil, nil, errors.New("map " + f.Name() + ": bad size")
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
