package history

import (
	"os"
	"path/filepath"
	"syscall"

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

// lstat returns path's fileStat (ok false when it cannot be read): size, mtime, ctime and inode.
func (s *statter) lstat(path string) fileStat {
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
		return fileStat{known: true}
	}
	return fileStat{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: int64(st.Ino), //nolint:gosec // an inode number is compared, never computed with
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG, ok: true, known: true}
}

// close closes the open directory.
func (s *statter) close() {
	if s.dir != "" {
		unix.Close(s.fd) //nolint:errcheck // a descriptor opened with O_PATH: nothing to flush
		s.dir = ""
	}
}

func lstatPath(path string) fileStat {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStat{known: true}
	}
	return statOf(fi)
}

// statOf is the fileStat of fi, an lstat or fstat of a source: size, mtime, ctime and inode.
func statOf(fi os.FileInfo) fileStat {
	fs := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), regular: fi.Mode().IsRegular(), ok: true, known: true}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		fs.ctime, fs.ino = st.Ctim.Nano(), int64(st.Ino) //nolint:gosec // an inode number is compared, never computed with
	}
	return fs
}
