package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ctx-dev/ctx/store"
)

// maxInputBytes is the most a command takes from a file or standard input as one entry, skill, decision
// body or conflict resolution: 32 MiB (docs/limits.md "What the CLI reads"). Larger input is a usage
// error, refused before it is read whole, so that `-f /dev/zero` or a wrong file cannot fill the memory.
const maxInputBytes = store.MaxEntryBytes

// readInput reads r whole, up to maxInputBytes; what names it in errors ("standard input", a path).
// A cancelled ctx (SIGINT, SIGTERM) ends the wait at once even while r blocks (a slow pipe, a FIFO): the
// read is abandoned to the process's exit. Errors: ctx's error, a *usageError for input over the limit,
// or the read error wrapped with what.
func readInput(ctx context.Context, r io.Reader, what string) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, maxInputBytes+2))
		done <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("read %s: %w", what, res.err)
		}
		if overLimit(res.b) {
			return nil, tooLarge(what)
		}
		return res.b, nil
	}
}

// readInputFile is readInput of the file at path; a regular file over the limit is refused from its
// size, unread. A path that names no file, a folder or a file ctx may not read is a mistake of the
// command line: a *usageError (exit 2), as ctx import PATH says of a missing path.
func readInputFile(ctx context.Context, path string) ([]byte, error) {
	f, err := openInput(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // interrupted while the open waited (a FIFO): exit 130, not a usage error
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once
		}
		return nil, usagef("cannot read %s: %v", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		return nil, usagef("%s is a directory: name a file", path)
	}
	if err == nil && fi.Mode().IsRegular() && fi.Size() > maxInputBytes+1 {
		return nil, tooLarge(path)
	}
	return readInput(ctx, f, path)
}

// openInput opens path for reading. Opening a FIFO blocks until a writer opens it, so the open runs
// aside and a cancelled ctx (SIGINT, SIGTERM) ends the wait at once, as readInput does for the read; a
// file opened after that is closed by the abandoned goroutine.
func openInput(ctx context.Context, path string) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result) // unbuffered: an open that ends after the wait was abandoned is closed
	abandoned := make(chan struct{})
	go func() {
		f, err := os.Open(path)
		select {
		case done <- result{f, err}:
		case <-abandoned:
			if f != nil {
				f.Close()
			}
		}
	}()
	select {
	case <-ctx.Done():
		close(abandoned)
		return nil, ctx.Err()
	case res := <-done:
		return res.f, res.err
	}
}

// overLimit reports whether input b is over maxInputBytes, not counting one final newline: an entry
// file ends in one that is not content (docs/format.md), so what ctx knowledge get prints of an entry of
// exactly the limit reads back with ctx knowledge set -f.
func overLimit(b []byte) bool {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
	}
	return n > maxInputBytes
}

func tooLarge(what string) error {
	return usagef("%s is over %d MiB, the most ctx takes as one entry (docs/limits.md \"What the CLI reads\")", what, maxInputBytes>>20)
}
