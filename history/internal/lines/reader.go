// Package lines reads newline-delimited records of any length up to a bound, reporting each line's byte
// offset so that an append-only file can be resumed where the last read stopped.
package lines

import (
	"bufio"
	"errors"
	"io"
	"sync"
)

// bufSize is the read buffer of a Reader: a line that fits in it is returned without a copy.
const bufSize = 256 << 10

// maxPooledLine bounds the line buffer a Reader gives back to the pool (a longer one is dropped, so a
// megabyte line does not stay in memory for the rest of the process).
const maxPooledLine = 1 << 20

// pool holds the read buffers of closed Readers: an import reads thousands of files, and allocating and
// clearing 256 KiB for each cost more than reading most of them.
var pool = sync.Pool{New: func() any { return &buffers{br: bufio.NewReaderSize(nil, bufSize)} }}

type buffers struct {
	br   *bufio.Reader
	line []byte
}

// Reader yields the lines of r. Lines longer than Max bytes are skipped whole (Next reports them with
// TooLong set and no data) instead of failing the read or growing memory without bound.
type Reader struct {
	bufs *buffers
	max  int
	off  int64 // offset of the next unread byte
}

// New returns a Reader over r that starts at byte offset start (used only for reporting offsets) and
// skips lines longer than max bytes. Close gives its buffers back for the next Reader.
func New(r io.Reader, start int64, max int) *Reader {
	b := pool.Get().(*buffers)
	b.br.Reset(r)
	return &Reader{bufs: b, max: max, off: start}
}

// Close releases the Reader's buffers; the Reader and the Data of its last line must not be used after.
func (r *Reader) Close() {
	if r.bufs == nil {
		return
	}
	b := r.bufs
	r.bufs = nil
	b.br.Reset(nil)
	if cap(b.line) > maxPooledLine {
		b.line = nil
	}
	b.line = b.line[:0]
	pool.Put(b)
}

// Line is one line without its terminating newline.
type Line struct {
	Data     []byte // valid until the next call to Next or Close; not to be modified
	Start    int64  // offset of the first byte
	End      int64  // offset after the newline (or after the last byte when Complete is false)
	Complete bool   // the line ended in '\n' (false only for the last line of the input)
	TooLong  bool   // the line exceeded the bound; Data is nil
}

// Next returns the next line, or io.EOF when the input is exhausted. Other errors come from the
// underlying reader.
func (r *Reader) Next() (Line, error) {
	br := r.bufs.br
	buf := r.bufs.line[:0]
	defer func() { r.bufs.line = buf[:0] }()
	start := r.off
	tooLong := false
	copied := false // the line spans several reads and is assembled in buf
	var data []byte
	for {
		chunk, err := br.ReadSlice('\n')
		r.off += int64(len(chunk))
		if !tooLong {
			switch {
			case len(buf)+len(chunk) > r.max+1:
				tooLong, buf, data = true, buf[:0], nil
			case !copied && errors.Is(err, bufio.ErrBufferFull):
				buf, copied = append(buf, chunk...), true
			case copied:
				buf = append(buf, chunk...)
				data = buf
			default:
				data = chunk // the whole line is in the read buffer: no copy
			}
		}
		switch {
		case err == nil:
			l := Line{Start: start, End: r.off, Complete: true, TooLong: tooLong}
			if !tooLong {
				l.Data = trimEOL(data)
			}
			return l, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if r.off == start {
				return Line{}, io.EOF
			}
			l := Line{Start: start, End: r.off, TooLong: tooLong}
			if !tooLong {
				l.Data = trimEOL(data)
			}
			return l, nil
		default:
			return Line{}, err
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
