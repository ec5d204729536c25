// Package plainfile opens files as os.OpenFile does, without offering them to the runtime's poller: on
// Unix os.OpenFile makes every descriptor non-blocking and registers it with epoll (two fcntl, an
// epoll_ctl that the kernel refuses for a regular file or a folder, two fcntl to undo it), five system
// calls a file that a one-shot process (the lean front, docs/architecture.md "The lean front") pays some
// twenty times per write; the first one also sets up the poller (epoll_create1, eventfd2). The files
// ctx opens this way are regular files, folders and lock files, which the poller never waits on: reads
// and writes block as before. Standard library only.
package plainfile

import "io"

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
