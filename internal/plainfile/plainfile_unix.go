//go:build unix

package plainfile

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenFile is os.OpenFile(name, flag, perm) for a regular file, a folder or a lock file: open(2) with
// O_CLOEXEC (retried on EINTR), then os.NewFile, which checks the descriptor's flags once (one fcntl)
// and leaves it blocking, out of the poller. perm is narrowed by the umask as os.OpenFile's is; only its
// permission bits are used. Errors are *fs.PathError (errors.Is(err, fs.ErrExist), fs.ErrNotExist hold as
// for os.OpenFile).
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return os.NewFile(uintptr(fd), name), nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// WriteFile is os.WriteFile through OpenFile: the file at name truncated or created (perm less the
// umask) and data written whole.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err1 := f.Close(); err1 != nil && err == nil {
		err = err1
	}
	return err
}

// ReadFile reads the whole file at name as os.ReadFile does, with open(2), read(2) and close(2) only.
// Errors are *fs.PathError; a folder fails to read.
func ReadFile(name string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// Rename renames the file (not folder) oldname to newname, replacing a file there, with rename(2) alone:
// os.Rename first lstats newname to refuse a folder there, which rename(2) refuses for a file anyway
// (EISDIR). Errors are *os.LinkError.
func Rename(oldname, newname string) error {
	for {
		err := syscall.Rename(oldname, newname)
		if err == nil {
			return nil
		}
		if err != syscall.EINTR {
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
		}
	}
}
