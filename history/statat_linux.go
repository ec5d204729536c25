package history

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// statter lstats files one after another, resolving each file's directory once for a run of files of
// the same directory: an lstat of a full path walks every element of it in the kernel, which was most
// of a refresh's system time at 20,000 sources (bench/README.md "Fourth round"). The result is lstat's
// (the directory is opened following symbolic links, as lstat resolves the elements before the last;
// the file itself is never followed). Not safe for use by several goroutines.
type statter struct {
	dir string // the directory fd is open on ("" none)
	fd  int
}

// lstat returns path's size, its mtime in Unix nanoseconds and whether it is a regular file; ok is
// false when it cannot be read.
func (s *statter) lstat(path string) (size, mtime int64, regular, ok bool) {
	dir, name := filepath.Split(path)
	if dir == "" || name == "" {
		return lstatPath(path)
	}
	if dir != s.dir {
		s.close()
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return lstatPath(path)
		}
		s.dir, s.fd = dir, fd
	}
	var st unix.Stat_t
	if err := unix.Fstatat(s.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, 0, false, false
	}
	return st.Size, st.Mtim.Nano(), st.Mode&unix.S_IFMT == unix.S_IFREG, true
}

// close closes the open directory.
func (s *statter) close() {
	if s.dir != "" {
		unix.Close(s.fd) //nolint:errcheck // a descriptor opened with O_PATH: nothing to flush
		s.dir = ""
	}
}

func lstatPath(path string) (size, mtime int64, regular, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, 0, false, false
	}
	return fi.Size(), fi.ModTime().UnixNano(), fi.Mode().IsRegular(), true
}
