//go:build !linux

package history

import "os"

// statter lstats files one after another (statat_linux.go resolves each directory once).
type statter struct{}

// lstat returns path's size, its mtime in Unix nanoseconds and whether it is a regular file; ok is
// false when it cannot be read.
func (s *statter) lstat(path string) (size, mtime int64, regular, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, 0, false, false
	}
	return fi.Size(), fi.ModTime().UnixNano(), fi.Mode().IsRegular(), true
}

func (s *statter) close() {}
