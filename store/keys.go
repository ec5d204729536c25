package store

import (
	"errors"
	"fmt"
	"golang.org/x/text/unicode/norm"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyBytes is the longest key, skill name or member name in bytes of UTF-8 (docs/format.md "Keys and
// names").
const MaxKeyBytes = 128

// ErrInvalidKey is wrapped by every error ValidKey returns, so callers can test with errors.Is.
var ErrInvalidKey = errors.New("invalid key")

// windowsReserved are the device names Windows refuses as file names, with or without an extension.
var windowsReserved = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true}

// ErrInvalid is wrapped by every error about a value the caller gave (a status, a rating, a scope, an
// activity field, a file of the checked-out tree that does not parse...), so that the CLI can report a
// usage error (exit 2) and the MCP server a tool error. Nothing is written when it is returned.
var ErrInvalid = errors.New("invalid input")

// invalidf returns an error wrapping ErrInvalid with the message as given (no prefix).
func invalidf(format string, a ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, a...)}
}

type invalidError struct {
	msg     string
	wrapped error // an error errors.Is also matches, or nil
}

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Is(target error) bool {
	return target == ErrInvalid || (e.wrapped != nil && target == e.wrapped)
}

// NormalizeKey returns s in Unicode normal form C, checked by ValidKey. Every store function that takes
// a key, skill name, session id or member name calls it first, so that a key typed in decomposed form
// (NFD: "cafe" + U+0301, as some keyboards and macOS file names give it) names the same entry as its
// composed form on every path: CLI, MCP tools and context:// URIs (docs/format.md "Keys and names").
// The error is ValidKey's.
func NormalizeKey(s string) (string, error) {
	if utf8.ValidString(s) && !norm.NFC.IsNormalString(s) {
		s = norm.NFC.String(s)
	}
	return s, ValidKey(s)
}

// normKey is NormalizeKey in place.
func normKey(s *string) error {
	n, err := NormalizeKey(*s)
	if err == nil {
		*s = n
	}
	return err
}

// reservedSkillNames are skill names that a context:// URI already gives to something else,
// with the reason: context://skills/stats is the skills' statistics resource, so a skill named "stats"
// could never be read there.
var reservedSkillNames = map[string]string{
	"stats": "context://skills/stats is the skill statistics resource",
}

// ErrReservedName is wrapped by the error for a skill name that a context:// URI already uses.
var ErrReservedName = errors.New("reserved name")

// ValidSkillName is NormalizeKey for the name of a new skill: the name must also not be reserved
// (docs/format.md "Keys and names": "stats"). It returns the normalised name.
func ValidSkillName(name string) (string, error) {
	n, err := NormalizeKey(name)
	if err != nil {
		return n, err
	}
	if why, ok := reservedSkillNames[n]; ok {
		return n, &invalidError{msg: fmt.Sprintf("skill name %q is reserved (%s): choose another name", n, why), wrapped: ErrReservedName}
	}
	return n, nil
}

// ValidKey reports whether s may be used as a knowledge or convention key, a skill name, a session id or
// a member/agent name. The rules are those of docs/format.md "Keys and names": 1 to 128 bytes
// of UTF-8; letters of any script, lower case where the script has case; digits; '-', '_' and '.' inside
// ('.' neither first nor last and never "..", '-' not first). Not allowed: '/', '\', NUL, control
// characters, spaces, a leading dot or dash. Two more rules keep the checked-out tree portable: the key must
// be in Unicode normal form C (NFC and NFD spellings of "é" would be two keys that collide on macOS), and
// not a Windows device name (con, nul, com1, ...). "_x" and "x-" pass. Combining marks
// (Unicode categories Mn, Mc, Me) are accepted after the first character, because many scripts
// (Devanagari, decomposed Latin) cannot be written without them.
//
// The error wraps ErrInvalidKey and names the first problem found, e.g.
// `invalid key "a/b": '/' at byte 1 is not allowed (keys are single path elements)`.
func ValidKey(s string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, s, fmt.Sprintf(format, args...))
	}
	switch {
	case s == "":
		return fmt.Errorf("%w: key is empty (1 to %d bytes required)", ErrInvalidKey, MaxKeyBytes)
	case len(s) > MaxKeyBytes:
		return fmt.Errorf("%w: key is %d bytes long, at most %d allowed", ErrInvalidKey, len(s), MaxKeyBytes)
	case !utf8.ValidString(s):
		return bad("not valid UTF-8")
	case s[0] == '.':
		return bad("starts with '.' (hidden names are not allowed)")
	case s[0] == '-':
		return bad("starts with '-' (would read as a command-line flag)")
	case s[len(s)-1] == '.':
		return bad("ends with '.'")
	case strings.Contains(s, ".."):
		return bad(`contains ".." (a path traversal)`)
	}
	if !norm.NFC.IsNormalString(s) {
		return bad("not in Unicode normal form C (the same name typed on another system would differ; use %q)", norm.NFC.String(s))
	}
	if base, _, _ := strings.Cut(s, "."); windowsReserved[base] {
		return bad("%q is a reserved file name on Windows, where teammates check the store out", base)
	}
	for i, r := range s {
		switch {
		case r == '/' || r == '\\':
			return bad("%q at byte %d is not allowed (keys are single path elements)", r, i)
		case r == 0:
			return bad("NUL at byte %d is not allowed", i)
		case unicode.IsControl(r):
			return bad("control character %U at byte %d is not allowed", r, i)
		case unicode.IsSpace(r):
			return bad("space %U at byte %d is not allowed (use '-')", r, i)
		case r == '-' || r == '_' || r == '.':
		case unicode.IsLetter(r):
			if unicode.ToLower(r) != r {
				return bad("upper-case letter %q at byte %d (keys are lower case; use %q)", r, i, unicode.ToLower(r))
			}
		case unicode.IsDigit(r):
		case unicode.IsMark(r):
			if i == 0 {
				return bad("starts with the combining mark %U", r)
			}
		default:
			return bad("character %q at byte %d is not allowed (letters, digits, '-', '_' and '.' only)", r, i)
		}
	}
	return nil
}
