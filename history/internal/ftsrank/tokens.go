package ftsrank

import (
	"sort"
	"unicode/utf8"
)

// TokenCount is the number of tokens FTS5's Tokenizer makes of s (what FTS5 records as the document's
// length), and ok false when s is not valid UTF-8 (SQLite decodes invalid sequences its own way: the
// length is then left to FTS5). unicode61 starts a token at a letter or digit (tokenStart) and continues
// it over letters, digits and the diacritics it removes (tokenCont); the tables are measured on the
// SQLite this is built with (TestTokenCharsMatchSQLite).
func TokenCount(s string) (n int, ok bool) {
	in := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiTokenChar[c] {
				if !in {
					n++
				}
				in = true
			} else {
				in = false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, false
		}
		i += size
		switch {
		case in:
			in = inRanges(tokenCont, r)
		case inRanges(tokenStart, r):
			n++
			in = true
		}
	}
	return n, true
}

// asciiTokenChar: digits and letters.
var asciiTokenChar = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return t
}()

// inRanges reports whether r is in one of the sorted ranges [lo, hi].
func inRanges(ranges [][2]uint32, r rune) bool {
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i][1] >= uint32(r) })
	return i < len(ranges) && ranges[i][0] <= uint32(r)
}
