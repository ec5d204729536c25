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
	var in uint8 // 1 inside a token
	for i := 0; i < len(s); {
		// A run of ASCII: a token starts at each token byte after a non-token one (no branch per byte).
		for ; i < len(s) && s[i] < utf8.RuneSelf; i++ {
			t := asciiTokenByte[s[i]]
			n += int(t &^ in)
			in = t
		}
		if i == len(s) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, false
		}
		i += size
		switch {
		case in == 1:
			if !inRanges(tokenCont, r) {
				in = 0
			}
		case inRanges(tokenStart, r):
			n++
			in = 1
		}
	}
	return n, true
}

// asciiTokenByte: 1 for digits and letters, 0 for any other ASCII byte.
var asciiTokenByte = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		if asciiTokenChar[c] {
			t[c] = 1
		}
	}
	return t
}()

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
