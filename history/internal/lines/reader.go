// Package lines reads newline-delimited records of any length up to a bound, reporting each line's byte
// offset so that an append-only file can be resumed where the last read stopped.
package lines

import (
	"bufio"
	"errors"
	"io"
)

// Reader yields the lines of r. Lines longer than Max bytes are skipped whole (Next reports them with
// TooLong set and no data) instead of failing the read or growing memory without bound.
type Reader struct {
	br  *bufio.Reader
	max int
	off int64 // offset of the next unread byte
	buf []byte
}

// New returns a Reader over r that starts at byte offset start (used only for reporting offsets) and
// skips lines longer than max bytes.
func New(r io.Reader, start int64, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 256<<10), max: max, off: start}
}

// Line is one line without its terminating newline.
type Line struct {
	Data     []byte // valid until the next call to Next
	Start    int64  // offset of the first byte
	End      int64  // offset after the newline (or after the last byte when Complete is false)
	Complete bool   // the line ended in '\n' (false only for the last line of the input)
	TooLong  bool   // the line exceeded the bound; Data is nil
}

// Next returns the next line, or io.EOF when the input is exhausted. Other errors come from the
// underlying reader.
func (r *Reader) Next() (Line, error) {
	r.buf = r.buf[:0]
	start := r.off
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.off += int64(len(chunk))
		if !tooLong {
			if len(r.buf)+len(chunk) > r.max+1 {
				tooLong = true
				r.buf = r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			l := Line{Start: start, End: r.off, Complete: true, TooLong: tooLong}
			if !tooLong {
				l.Data = trimEOL(r.buf)
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
				l.Data = trimEOL(r.buf)
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
