//go:build unix

package objread

import (
	"io/fs"
	"syscall"
)

// ReadFile reads the whole file at path as os.ReadFile does, with open(2), read(2) and close(2) only:
// os.ReadFile's *os.File first offers every descriptor to the runtime's poller (four fcntl calls and an
// epoll_ctl that a regular file refuses), five system calls of the eight that read a ref, and a front
// write reads some twenty small files (refs, packed-refs, config, its own state). Errors are
// *fs.PathError, so errors.Is(err, fs.ErrNotExist) holds for a missing file; a folder fails to read.
func ReadFile(path string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
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
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
