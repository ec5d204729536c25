// Package plainfile opens files as os.OpenFile does, without offering them to the runtime's poller: on
// Unix os.OpenFile makes every descriptor non-blocking and registers it with epoll (two fcntl, an
// epoll_ctl that the kernel refuses for a regular file or a folder, two fcntl to undo it), five system
// calls a file that a one-shot process (the lean front, docs/architecture.md "The lean front") pays some
// twenty times per write; the first one also sets up the poller (epoll_create1, eventfd2). The files
// ctx opens this way are regular files, folders and lock files, which the poller never waits on: reads
// and writes block as before. Standard library only.
package plainfile

import (
	"io"
	"io/fs"
	"os"
)

// ReadSized reads r to its end into one buffer of size+1 bytes, size being the file's length from a stat
// just made: a file that did not change is read in one allocation, and the extra byte sees its end; one
// a writer appended to since the stat grows the buffer as append does. Errors are r's (io.EOF ends the
// read and is not one).
func ReadSized(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Overwrite makes the file at name hold data, as WriteFile does, without truncating it to nothing first:
// data is written over the old contents from the start and the file is cut to len(data) only when it was
// longer. The file is created (perm less the umask) when missing. Not atomic: for small files whose only
// writers hold one lock and whose readers take a damaged content for none (the ctx lock's holder record,
// gitstore's write counter). A process killed between the write and the cut leaves the new bytes followed
// by the old ones' tail ("99\n" over "12345\n" leaves "99\n45\n"), which no longer reads as one number:
// the holder record then names no process (gitstore's lockHolder), and the write counter, whose text only
// gets shorter when it is reset to "0\n", reads 0 either way.
//
// Why: ext4 (its auto_da_alloc default) writes a file's data back when the file is closed after being
// truncated to size 0 and written again, as O_TRUNC does: a write(2) of a few bytes then cost 0.25 to 2 ms
// on this project's test machine, against 15 µs written in place (bench/README.md "Thirteenth round",
// front13).
func Overwrite(name string, data []byte, perm fs.FileMode) error {
	f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	if err := OverwriteFile(f, data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// OverwriteFile is Overwrite of the open file f (opened for writing, not O_APPEND), which stays open.
func OverwriteFile(f *os.File, data []byte) error {
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > int64(len(data)) {
		return f.Truncate(int64(len(data)))
	}
	return nil
}
