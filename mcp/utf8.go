package mcp

import (
	"fmt"
	"unicode/utf8"
)

// checkUTF8 reports why a JSON-RPC message is not valid UTF-8 text, "" when it is. JSON decoding in Go
// replaces invalid bytes and unpaired surrogate escapes (\ud800) with U+FFFD without a word, so a tool
// argument holding them would be stored changed; ctx refuses such a request instead, the same rule the
// CLI applies (store.ValidText, docs/security.md "Input hygiene").
func checkUTF8(msg []byte) string {
	if !utf8.Valid(msg) {
		i := 0
		for i < len(msg) {
			r, n := utf8.DecodeRune(msg[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Sprintf("the request is not valid UTF-8 (byte 0x%02X at offset %d): send text as UTF-8", msg[i], i)
	}
	for i := 0; i < len(msg); i++ {
		if msg[i] != '\\' {
			continue
		}
		if i+1 >= len(msg) {
			break
		}
		if msg[i+1] != 'u' {
			i++ // an escaped character: \\ , \" , \n ...
			continue
		}
		r, ok := hex4(msg, i+2)
		if !ok {
			i++
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if i+7 < len(msg) && msg[i+6] == '\\' && msg[i+7] == 'u' {
				if lo, ok := hex4(msg, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					continue
				}
			}
			return fmt.Sprintf(`the request holds an unpaired surrogate \u%04x at offset %d (not a character): send text as UTF-8`, r, i)
		case r >= 0xDC00 && r <= 0xDFFF:
			return fmt.Sprintf(`the request holds an unpaired surrogate \u%04x at offset %d (not a character): send text as UTF-8`, r, i)
		}
		i += 5
	}
	return ""
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}
