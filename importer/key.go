package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/ctx-dev/ctx/store"
	"golang.org/x/text/unicode/norm"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyBytes is the longest key in bytes of UTF-8 (store.MaxKeyBytes).
const MaxKeyBytes = store.MaxKeyBytes

// ErrInvalidKey is wrapped by every error ValidKey returns (store.ErrInvalidKey).
var ErrInvalidKey = store.ErrInvalidKey

// ValidKey is store.ValidKey: the one definition of the key rules of docs/format.md "Keys and names".
func ValidKey(s string) error { return store.ValidKey(s) }

// DeriveKey turns a file name (or a slash-separated relative path) into a key that passes ValidKey, as
// docs/format.md "Keys and names" asks of importers (derive a valid key from a file name and say so when
// they had to change it). Steps, in order:
//
//   - one trailing document extension (.md, .mdc, .markdown, .txt, any case) is dropped; this alone
//     does not count as a change, since stored entries get their own ".md";
//   - letters are lower-cased;
//   - spaces, '/', '\' and other separators become '-';
//   - characters a key may not hold are dropped;
//   - runs of '-' or '.' are squeezed to one, and leading and trailing '.', '-' and '_' are trimmed;
//   - the result is cut to 128 bytes on a character boundary.
//
// changed reports whether the key differs from the name (extension aside). A name with nothing usable in
// it (e.g. "???.md") yields "key-" plus the first 8 hex digits of the SHA-256 of the name, which is stable
// and valid. Examples: "CLAUDE.md" -> "claude" (changed); "apps/webapp/CLAUDE.md" ->
// "apps-webapp-claude" (changed); "style guide.md" -> "style-guide" (changed); "notes.md" -> "notes".
func DeriveKey(name string) (key string, changed bool) {
	key, reasons := deriveKey(name)
	return key, len(reasons) > 0
}

// docExtensions are the extensions DeriveKey drops from the last element of a name.
var docExtensions = []string{".markdown", ".md", ".mdc", ".txt"}

// stripDocExt drops one trailing document extension (case-insensitive) unless nothing would remain.
func stripDocExt(name string) string {
	lower := strings.ToLower(name)
	for _, ext := range docExtensions {
		if strings.HasSuffix(lower, ext) && len(name) > len(ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

// deriveKey is DeriveKey with the list of changes made, in words, for warnings.
func deriveKey(name string) (string, []string) {
	stem := stripDocExt(name)
	var reasons []string
	note := func(r string) {
		for _, have := range reasons {
			if have == r {
				return
			}
		}
		reasons = append(reasons, r)
	}
	if !utf8.ValidString(stem) {
		stem = strings.ToValidUTF8(stem, "")
		note("dropped invalid UTF-8")
	}
	if nfc := norm.NFC.String(stem); nfc != stem {
		stem = nfc
		note("Unicode normal form C")
	}
	var b strings.Builder
	elementStart := true
	for _, r := range stem {
		if r == '.' && elementStart {
			note("dropped the leading '.' of hidden names")
			continue
		}
		elementStart = r == '/' || r == '\\'
		switch {
		case r == '/' || r == '\\':
			b.WriteByte('-')
			note(`"/" -> "-"`)
		case unicode.IsSpace(r):
			b.WriteByte('-')
			note(`spaces -> "-"`)
		case r == '-' || r == '_' || r == '.':
			b.WriteRune(r)
		case unicode.IsLetter(r):
			if l := unicode.ToLower(r); l != r {
				note("lower-cased")
				if unicode.ToLower(l) == l {
					b.WriteRune(l)
				} else {
					note("dropped characters a key may not hold")
				}
			} else {
				b.WriteRune(r)
			}
		case unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		default:
			note("dropped characters a key may not hold")
		}
	}
	key := squeeze(b.String())
	key = strings.TrimLeft(key, ".-_")
	key = strings.TrimRight(key, ".-_")
	if len(key) > MaxKeyBytes {
		cut := MaxKeyBytes
		for cut > 0 && !utf8.RuneStart(key[cut]) {
			cut--
		}
		key = strings.TrimRight(key[:cut], ".-_")
		note(fmt.Sprintf("cut to %d bytes", MaxKeyBytes))
	}
	// A leading combining mark is not allowed either.
	for key != "" {
		r, size := utf8.DecodeRuneInString(key)
		if !unicode.IsMark(r) {
			break
		}
		key = strings.TrimLeft(key[size:], ".-_")
	}
	if key == "" {
		sum := sha256.Sum256([]byte(name))
		key = "key-" + hex.EncodeToString(sum[:4])
		note("nothing usable in the name; made a key from its hash")
	}
	if key != stem && len(reasons) == 0 {
		note("trimmed or squeezed '-', '_' and '.'")
	}
	if err := ValidKey(key); err != nil && strings.Contains(err.Error(), "reserved file name") {
		key += "-file"
		note("a Windows device name: added \"-file\"")
	}
	return key, reasons
}

// squeeze replaces each run of '-' and '.' with one character: '-' when the run holds one, else '.'
// (".." is never allowed, and "a-.b" reads better as "a-b").
func squeeze(s string) string {
	var b strings.Builder
	run := ""
	flush := func() {
		switch {
		case run == "":
		case strings.Contains(run, "-"):
			b.WriteByte('-')
		default:
			b.WriteByte('.')
		}
		run = ""
	}
	for _, r := range s {
		if r == '-' || r == '.' {
			run += string(r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}
