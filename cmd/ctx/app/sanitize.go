package app

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// sanitizer is ctx's standard output and error: it writes text as it is, except characters that would
// drive the terminal rather than show up in it. Control characters (C0 but tab, newline and the CR of a
// CRLF; DEL; C1, e.g. U+009B CSI) and the bidirectional overrides and isolates (U+202A-U+202E,
// U+2066-U+2069, which reorder what is shown) are written as \uXXXX, invalid UTF-8 bytes as \xFF. So an entry
// holding ESC ] 52 (OSC 52 writes the clipboard) or a colour reset prints visibly and does nothing.
// \uXXXX is also a JSON escape of the same character, so --json output stays valid and means the same
// (encoding/json writes C1 characters and DEL raw). docs/security.md, "Input hygiene".
type sanitizer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence or a CR held until the next write
	err     error  // the first error of a write to w (a full disk, a closed file), kept for Run
}

// failed is the first error a write to the stream returned, nil when every write succeeded.
func (s *sanitizer) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func newSanitizer(w io.Writer) *sanitizer { return &sanitizer{w: w} }

func (s *sanitizer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := append(s.pending, p...)
	s.pending = nil
	var out bytes.Buffer
	out.Grow(len(in))
	for i := 0; i < len(in); {
		c := in[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			out.WriteByte(c)
			i++
			continue
		}
		if c == '\r' {
			if i+1 == len(in) {
				s.pending = []byte{c}
				break
			}
			if in[i+1] == '\n' {
				out.WriteByte(c)
			} else {
				fmt.Fprintf(&out, `\u%04x`, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		if r == utf8.RuneError && n <= 1 {
			if !utf8.FullRune(in[i:]) && len(in)-i < utf8.UTFMax {
				s.pending = append([]byte{}, in[i:]...)
				break
			}
			fmt.Fprintf(&out, `\x%02X`, c)
			i++
			continue
		}
		if unsafeRune(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(in[i : i+n])
		}
		i += n
	}
	if _, err := s.w.Write(out.Bytes()); err != nil {
		if s.err == nil {
			s.err = err
		}
		return 0, err
	}
	return len(p), nil
}

// flush writes what is held back (an incomplete sequence at the very end of the output), escaped.
func (s *sanitizer) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.pending {
		var err error
		if c == '\r' {
			_, err = fmt.Fprintf(s.w, `\u%04x`, c)
		} else {
			_, err = fmt.Fprintf(s.w, `\x%02X`, c)
		}
		if err != nil && s.err == nil {
			s.err = err
		}
	}
	s.pending = nil
}

// unsafeRune reports the characters sanitizer escapes (besides the ASCII controls handled inline).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
