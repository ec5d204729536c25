package history

import (
	"bytes"
	"unicode/utf8"

	json "github.com/segmentio/encoding/json"
)

// unquote decodes a JSON string value (raw: one value, without surrounding spaces) as json.Unmarshal into
// a string does, without the decoder's second pass over the string and its rune-by-rune copy
// (segmentio's unquoting decodes and re-encodes every rune of a string that holds an escape or a
// non-ASCII byte: the tool outputs of a transcript, bench/README.md "Third round"). The common case is done
// here: printable text, valid UTF-8, the two-character escapes. Anything else (\u escapes, control
// characters, invalid UTF-8, not one string) goes to json.Unmarshal, so the result and the error are
// always json.Unmarshal's (FuzzUnquoteSame).
func unquote(raw []byte) (string, error) {
	if s, ok := unquoteFast(raw); ok {
		return s, nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// unquoteFast is unquote's common case; ok is false when raw is anything else.
func unquoteFast(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		if !plain(s) {
			return "", false
		}
		return string(s), true
	}
	out := make([]byte, 0, len(s))
	for {
		chunk := s
		if i >= 0 {
			chunk = s[:i]
		}
		if !plain(chunk) {
			return "", false
		}
		out = append(out, chunk...)
		if i < 0 {
			return string(out), true
		}
		if i+1 >= len(s) {
			return "", false // the closing quote is escaped: not one string
		}
		var c byte
		switch s[i+1] {
		case '"', '\\', '/':
			c = s[i+1]
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		default: // \u (surrogates, replacement characters) and invalid escapes: the decoder's
			return "", false
		}
		out = append(out, c)
		s = s[i+2:]
		i = bytes.IndexByte(s, '\\')
	}
}

// plain reports whether b holds no quote, no control character (below 0x20) and only valid UTF-8: bytes
// a JSON string carries as they are.
func plain(b []byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	ascii := true
	for ; i+8 <= len(b); i += 8 {
		w := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		q := w ^ (lo * '"')
		// A byte below 0x20, a quote (0 after the xor) or a byte with its high bit set.
		if ((w-lo*0x20)|(q-lo)|w)&hi != 0 {
			if (w-lo*0x20)&^w&hi != 0 || (q-lo)&^q&hi != 0 {
				return false
			}
			ascii = false
		}
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c < 0x20 || c == '"':
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || utf8.Valid(b)
}
