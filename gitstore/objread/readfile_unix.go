//go:build unix

package objread

import (
	"io"
	"io/fs"
	"syscall"

	"github.com/ctx-dev/ctx/internal/plainfile"
)

// ReadFile reads the whole file at path as os.ReadFile does, with open(2), read(2) and close(2) only:
// os.ReadFile's *os.File first offers every descriptor to the runtime's poller (four fcntl calls and an
// epoll_ctl that a regular file refuses), five system calls of the eight that read a ref, and a front
// write reads some twenty small files (refs, packed-refs, config, its own state). Errors are
// *fs.PathError, so errors.Is(err, fs.ErrNotExist) holds for a missing file; a folder fails to read.
func ReadFile(path string) ([]byte, error) { return plainfile.ReadFile(path) }

// rawFile is a file opened for reading with open(2) alone (see ReadFile): read with read(2), closed with
// close(2), never registered with the runtime's poller.
type rawFile struct {
	fd   int
	path string
}

// openRead opens the file at path for reading (see rawFile). Errors are *fs.PathError.
func openRead(path string) (io.ReadCloser, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			return &rawFile{fd: fd, path: path}, nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// Read reads up to len(p) bytes; io.EOF at the end of the file.
func (f *rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }
