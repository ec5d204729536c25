//go:build linux && (amd64 || arm64)

package store

import (
	"io/fs"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lstatName is lstatIn without an allocation per call: the name is copied, NUL-terminated, into *buf
// (grown as needed, reused by the caller) and handed to fstatat(2) with AT_SYMLINK_NOFOLLOW on d's
// descriptor. A name holding a NUL byte is refused (errNameNUL), never cut short.
//
// The call is a raw one (no entersyscall/exitsyscall): an lstat of a file whose inode is cached takes a
// few microseconds, and around 10,000 of them the runtime's bookkeeping made its monitor take the
// processors of goroutines "in a system call" and start threads to run them: 465 futex and 1,984
// nanosleep calls in one `ctx status` of 10,000 entries, against 53 and 105 raw, and 12% of its CPU
// (bench/README.md "Seventh round"). An lstat that waits for the disk (an inode not cached) holds its
// processor for that one call; the goroutine is preempted as usual between calls.
func lstatName(_ *os.Root, d *os.File, name string, buf *[]byte) (fs.FileMode, FileStat, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return 0, FileStat{}, &fs.PathError{Op: "lstat", Path: name, Err: errNameNUL}
	}
	b := append(append((*buf)[:0], name...), 0)
	*buf = b
	var s unix.Stat_t
	fd := d.Fd()
	for {
		_, _, e := unix.RawSyscall6(sysFstatat, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&s)),
			unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, FileStat{}, &fs.PathError{Op: "lstat", Path: name, Err: e}
		}
		break
	}
	return modeType(s.Mode), FileStat{Size: s.Size, Mtime: s.Mtim.Nano(), Ctime: s.Ctim.Nano(), Ino: s.Ino}, nil
}

// sysFstatat is fstatat(2) with the Stat_t of golang.org/x/sys/unix (the call of unix.Fstatat; arm64's
// SYS_FSTATAT is the same number).
const sysFstatat = unix.SYS_NEWFSTATAT

// modeType is the type bits of a stat(2) mode as lstatIn gives them.
func modeType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	default:
		return fs.ModeIrregular
	}
}
