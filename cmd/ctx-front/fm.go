package main

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// flatMeta is front matter in the shape ctx writes it, read and written without a YAML library, so that
// the front links none (yaml.v3 compiles regular expressions at initialisation, which every run of the
// front paid; docs/architecture.md "The lean front"): one "key: value" line per key, the key lower-case
// ASCII, the value a scalar that yaml.v3 (store/frontmeta) writes back as it is. parseFlatMeta accepts
// only front matter every line of which it can vouch for, and set only values whose encoding it knows;
// anything else (comments, lists, nested mappings, quoting it does not know, lines yaml.v3 folds) is ctx-full's,
// which the write then runs (TestFlatMetaSameAsFrontmeta, TestSetSameAsFull).
type flatMeta struct {
	keys, values []string // values: the text after "key: ", as written
}

// foldColumn is the last byte offset of a line at which flatMeta writes a space: yaml.v3 breaks a scalar
// at a space past column 80 (emitter.best_width), and a column counts characters, at most bytes. A line
// without spaces past it is written whole at any length (an author "Name <a.long@address>").
const foldColumn = 78

// lineFits reports whether yaml.v3 writes the mapping line "key: value" as one line: key at most 64
// bytes (it writes a longer one as a simple key all the same, up to 128), no space past foldColumn, and
// at most 1 KiB.
func lineFits(key, value string) bool {
	if len(key) > 64 || len(key)+2+len(value) > 1024 {
		return false
	}
	last := strings.LastIndexByte(value, ' ')
	return last < 0 || len(key)+2+last <= foldColumn
}

// parseFlatMeta reads the front matter block fm (the text between the delimiters); ok is false unless
// every line is "key: value" with a key of [a-z_][a-z0-9_]* seen once and a value that is a plain
// scalar of letters, digits, spaces and a few marks (plainValue), or such a value double-quoted.
func parseFlatMeta(fm []byte) (m *flatMeta, ok bool) {
	m = &flatMeta{}
	s := string(fm)
	if strings.TrimSpace(s) == "" {
		return m, s == ""
	}
	if !strings.HasSuffix(s, "\n") {
		return nil, false
	}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		key, value, found := strings.Cut(line, ": ")
		if !found || !lineFits(key, value) || !metaKey(key) || m.index(key) >= 0 {
			return nil, false
		}
		if inner, quoted := strings.CutPrefix(value, `"`); quoted {
			inner, closed := strings.CutSuffix(inner, `"`)
			if !closed || !quotedValue(inner) {
				return nil, false
			}
		} else if !plainValue(value, true) {
			return nil, false
		}
		m.keys, m.values = append(m.keys, key), append(m.values, value)
	}
	return m, true
}

func (m *flatMeta) index(key string) int {
	for i, k := range m.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// String is frontmeta.Meta.String: the scalar's value, "" when key is absent.
func (m *flatMeta) String(key string) string {
	i := m.index(key)
	if i < 0 {
		return ""
	}
	if inner, quoted := strings.CutPrefix(m.values[i], `"`); quoted {
		return strings.TrimSuffix(inner, `"`)
	}
	return m.values[i]
}

// set is frontmeta.Meta.Set of a string: key keeps its place, or is appended. ok is false when v is not
// a value whose encoding by yaml.v3 flatMeta knows: a plainValue that resolves to a string (plain), or
// an RFC 3339 time in UTC (double-quoted, as yaml.v3 quotes a string that would read as a timestamp).
func (m *flatMeta) set(key, v string) (ok bool) {
	enc := v
	switch {
	case plainValue(v, false) && !yamlWord(v):
	case utcTime(v):
		enc = `"` + v + `"`
	default:
		return false
	}
	if !lineFits(key, enc) {
		return false
	}
	if i := m.index(key); i >= 0 {
		m.values[i] = enc
		return true
	}
	m.keys, m.values = append(m.keys, key), append(m.values, enc)
	return true
}

// join is frontmeta.Join: "---\n", the lines, "---\n" and body.
func (m *flatMeta) join(body []byte) []byte {
	var b strings.Builder
	b.WriteString("---\n")
	for i, k := range m.keys {
		b.WriteString(k + ": " + m.values[i] + "\n")
	}
	b.WriteString("---\n")
	b.Write(body)
	return []byte(b.String())
}

func metaKey(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// plainValue reports whether yaml.v3 reads s written plain as s and writes it back plain: it starts with
// a letter (or, for a value read, a digit: a number or a date is kept as written), holds only letters,
// digits, single spaces and the marks ._-@<>+'/=() (and, read, ':' not followed by a space), and does
// not end with a space.
func plainValue(s string, read bool) bool {
	if s == "" || strings.HasSuffix(s, " ") || !utf8.ValidString(s) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsLetter(first) && !(read && first >= '0' && first <= '9') {
		return false
	}
	prev := rune(0)
	for i, r := range s {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
		case r >= utf8.RuneSelf && unicode.IsLetter(r):
		case r == ' ' && prev != ' ':
		case strings.ContainsRune("._-@<>+'/=()", r):
		case read && r == ':' && i+1 < len(s) && s[i+1] != ' ':
		default:
			return false
		}
		prev = r
	}
	return true
}

// quotedValue reports whether inner, the text between double quotes, is one yaml.v3 writes back
// unchanged in double quotes: printable ASCII without '"' and '\'.
func quotedValue(inner string) bool {
	for i := 0; i < len(inner); i++ {
		if c := inner[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// yamlWord reports the words a plain scalar that starts with a letter must not be to be a string for
// yaml.v3: booleans (YAML 1.1's too, which it quotes) and null, in any case.
func yamlWord(s string) bool {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off", "true", "false", "null":
		return true
	}
	return false
}

// utcTime reports whether s is YYYY-MM-DDTHH:MM:SSZ.
func utcTime(s string) bool {
	if len(s) != len("2006-01-02T15:04:05Z") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != 'T' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		case 19:
			if c != 'Z' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}
