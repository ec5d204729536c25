package checkoutrec

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysStat adds the change time and inode of fi to st.
func sysStat(fi fs.FileInfo, st *FileStat) {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Ctime = s.Ctim.Nano()
		st.Ino = s.Ino
	}
}

// LstatIn is an lstat of name in the folder d, opened in r (fstatat(2) with AT_SYMLINK_NOFOLLOW on d's
// descriptor, which never follows a link): the type bits of its mode (fs.ModeSymlink, fs.ModeDir, 0 for a
// regular file, fs.ModeIrregular otherwise) and its stat data as StatOf takes them, without a FileInfo.
func LstatIn(_ *os.Root, d *os.File, name string) (fs.FileMode, FileStat, error) {
	var s unix.Stat_t
	fd := int(d.Fd())
	for {
		err := unix.Fstatat(fd, name, &s, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, FileStat{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		break
	}
	var typ fs.FileMode
	switch s.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		typ = fs.ModeDir
	case unix.S_IFLNK:
		typ = fs.ModeSymlink
	default:
		typ = fs.ModeIrregular
	}
	return typ, FileStat{Size: s.Size, Mtime: s.Mtim.Nano(), Ctime: s.Ctim.Nano(), Ino: s.Ino}, nil
}
