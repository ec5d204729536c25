//go:build !linux

package history

import "os"

// statter lstats files one after another (statat_linux.go resolves each directory once).
type statter struct{}

// lstat returns path's fileStat (ok false when it cannot be read): size and mtime, no ctime or inode.
func (s *statter) lstat(path string) fileStat {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStat{known: true}
	}
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), regular: fi.Mode().IsRegular(), ok: true, known: true}
}

func (s *statter) close() {}

// statOf is the fileStat of fi, an lstat or fstat of a source: size and mtime, no ctime or inode.
func statOf(fi os.FileInfo) fileStat {
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), regular: fi.Mode().IsRegular(), ok: true, known: true}
}
