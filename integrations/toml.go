package integrations

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// TOML files (Codex) are decoded with github.com/pelletier/go-toml/v2 for
// their meaning, and located with its unstable parser, which reports the
// byte range of every key and key/value. The entry is then edited as text:
// its table (with sub-tables, dotted keys and the comment lines directly
// above its header) is cut out or replaced, and a new entry is appended as
// its own table at the end of the file, so the rest of the file keeps its
// bytes. go-toml/v2 has no round-tripping document model of its own.

type tomlDoc struct {
	key string
	src []byte
	val map[string]any
}

func parseTOML(key string, src []byte) (*tomlDoc, error) {
	d := &tomlDoc{key: key, src: src, val: map[string]any{}}
	if len(bytes.TrimSpace(src)) == 0 {
		return d, nil
	}
	if err := toml.Unmarshal(src, &d.val); err != nil {
		return nil, fmt.Errorf("parse TOML: %w", err)
	}
	return d, nil
}

func (d *tomlDoc) value() map[string]any { return d.val }

// tomlSpan is a byte range of the file that defines part of the entry.
type tomlSpan struct {
	start, end int
	// header is set for the span of the entry's own [key.name] table; body
	// is where its header line starts (start may include comments above).
	header bool
	body   int
}

// spans locates the text defining key.name. It fails with ErrConflict when
// the entry is written inside an inline table that cannot be cut apart.
func (d *tomlDoc) spans(name string) ([]tomlSpan, error) {
	target := []string{d.key, name}
	var (
		p    unstable.Parser
		out  []tomlSpan
		open *tomlSpan
		cur  []string
	)
	closeOpen := func() {
		if open != nil {
			out = append(out, *open)
			open = nil
		}
	}
	p.Reset(d.src)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys, first := keyParts(e)
			closeOpen()
			cur = keys
			if hasPrefix(keys, target) {
				ls := lineStart(d.src, first)
				open = &tomlSpan{start: ls, body: ls, end: lineEnd(d.src, first),
					header: e.Kind == unstable.Table && len(keys) == 2}
				if open.header {
					open.start = commentsAbove(d.src, ls)
				}
			}
		case unstable.KeyValue:
			keys, _ := keyParts(e)
			full := append(slices.Clone(cur), keys...)
			end := lineEnd(d.src, int(e.Raw.Offset+e.Raw.Length))
			switch {
			case open != nil:
				open.end = end
			case hasPrefix(full, target):
				ls := lineStart(d.src, int(e.Raw.Offset))
				out = append(out, tomlSpan{start: ls, body: ls, end: end})
			case hasPrefix(target, full):
				return nil, fmt.Errorf("%w: %s is written as an inline table, which cannot be edited in place; edit it by hand", ErrConflict, strings.Join(full, "."))
			}
		}
	}
	closeOpen()
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("%w: parse TOML: %w", ErrInvalid, err)
	}
	return out, nil
}

func (d *tomlDoc) set(name string, entry object) ([]byte, error) {
	nl := newline(d.src)
	section := strings.ReplaceAll(tomlSection(d.key, name, entry), "\n", nl)
	spans, err := d.spans(name)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(d.src)
	replaced := len(spans) > 0 && spans[0].header
	for i := len(spans) - 1; i >= 0; i-- {
		s := spans[i]
		if i == 0 && replaced {
			out = slices.Concat(out[:s.body], []byte(section), out[s.end:])
			continue
		}
		out = cutSpan(out, s.start, s.end)
	}
	if replaced {
		return out, nil
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return []byte(section), nil
	}
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	if last := lineStart(out, len(out)-1); !isBlank(out[last:]) || last == 0 {
		out = append(out, nl...) // a blank line before the new table
	}
	return append(out, section...), nil
}

func (d *tomlDoc) remove(name string) ([]byte, bool, error) {
	spans, err := d.spans(name)
	if err != nil {
		return nil, false, err
	}
	out := slices.Clone(d.src)
	for i := len(spans) - 1; i >= 0; i-- {
		out = cutSpan(out, spans[i].start, spans[i].end)
	}
	return out, len(bytes.TrimSpace(out)) == 0, nil
}

// cutSpan removes b[start:end] and one of the blank lines that separated it
// from its neighbours (all trailing blank lines at the end of the file), so
// that removing an appended table restores the file before it.
func cutSpan(b []byte, start, end int) []byte {
	blankBefore := func(at int) (int, bool) {
		if at == 0 {
			return 0, false
		}
		prev := lineStart(b, at-1)
		return prev, isBlank(b[prev:at])
	}
	if isBlank(b[end:]) {
		end = len(b)
		for {
			prev, ok := blankBefore(start)
			if !ok {
				break
			}
			start = prev
		}
	} else if next := lineEnd(b, end); isBlank(b[end:next]) {
		if _, ok := blankBefore(start); ok || start == 0 {
			end = next
		}
	}
	return slices.Concat(b[:start], b[end:])
}

// keyParts returns the decoded key parts of a table header or key/value and
// the offset of the first part.
func keyParts(e *unstable.Node) ([]string, int) {
	var keys []string
	first := -1
	it := e.Key()
	for it.Next() {
		n := it.Node()
		if first < 0 {
			first = int(n.Raw.Offset)
		}
		keys = append(keys, string(n.Data))
	}
	return keys, first
}

func hasPrefix(s, prefix []string) bool {
	return len(s) >= len(prefix) && slices.Equal(s[:len(prefix)], prefix)
}

func lineStart(b []byte, off int) int {
	return bytes.LastIndexByte(b[:off], '\n') + 1
}

func lineEnd(b []byte, off int) int {
	if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(b)
}

// commentsAbove extends a line start upwards over directly preceding
// comment lines.
func commentsAbove(b []byte, start int) int {
	for start > 0 {
		prev := lineStart(b, start-1)
		if !strings.HasPrefix(strings.TrimSpace(string(b[prev:start])), "#") {
			break
		}
		start = prev
	}
	return start
}

// tomlSection renders the entry as its own table.
func tomlSection(key, name string, entry object) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "[%s.%s]\n", tomlKey(key), tomlKey(name))
	for _, f := range entry {
		fmt.Fprintf(&sb, "%s = %s\n", tomlKey(f.Key), tomlValue(f.Val))
	}
	return sb.String()
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case bool:
		return fmt.Sprint(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = tomlString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		q := make([]string, len(keys))
		for i, k := range keys {
			q[i] = tomlKey(k) + " = " + tomlString(v[k])
		}
		if len(q) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(q, ", ") + " }"
	}
	panic(fmt.Sprintf("integrations: unsupported TOML value %T", v))
}

var bareKey = lazyre.New(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey.Get().MatchString(k) {
		return k
	}
	return tomlString(k)
}

// tomlString renders a TOML basic string.
func tomlString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		case '\r':
			sb.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&sb, `\u%04X`, r)
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
