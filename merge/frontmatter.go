package merge

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Markdown files with YAML front matter: knowledge/*.md, conventions/*.md,
// decisions/*.md, skills/*/SKILL.md (docs/format.md, docs/merge.md).
//
// The front matter is the first block delimited by a line "---" at the very
// start of the file and the next line "---" ("---\r\n" is accepted too);
// everything after the closing line is the body, kept byte for byte. The
// front matter is cut into one chunk of raw text per top-level key (the key
// line and every line up to the next key), so untouched keys keep their
// exact bytes, comments included. Keys are merged 3-way one by one; the body
// is merged by the line-level diff3 (lines.go).

// mdDoc is a markdown file cut into front matter and body.
type mdDoc struct {
	hasFM       bool
	open, close string // delimiter lines as found, newline included
	pre         string // front-matter lines before the first key (comments)
	keys        []string
	chunks      map[string]string // key -> raw "key: value\n" lines
	body        string
}

// splitFM cuts content at the front matter delimiters by SplitFrontMatter (one rule for every reader,
// a UTF-8 BOM before "---" included: it stays in open). ok is false when there is no front matter.
func splitFM(s string) (open, fm, close, body string, ok bool) {
	o, b, c, rest, ok := SplitFrontMatter([]byte(s))
	if !ok {
		return "", "", "", s, false
	}
	return string(o), string(b), string(c), string(rest), true
}

// parseMD parses a markdown file. ok is false when a front matter block
// exists but is not a YAML mapping with one plain key a line (invalid YAML,
// duplicate keys, flow style...): such files are merged as plain text.
func parseMD(content []byte) (d mdDoc, ok bool) {
	open, fm, close, body, has := splitFM(string(content))
	d = mdDoc{hasFM: has, open: open, close: close, body: body, chunks: map[string]string{}}
	if !has {
		return d, true
	}
	if pre, keys, chunks, ok := simpleFM(fm); ok {
		d.pre, d.keys, d.chunks = pre, keys, chunks
		return d, true
	}
	return parseFMYAML(d, fm)
}

// parseFMYAML is parseMD's cut of the front matter fm by the YAML parser (d holds the rest).
func parseFMYAML(d mdDoc, fm string) (mdDoc, bool) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(fm), &n); err != nil {
		return d, false
	}
	lines := splitLines(fm)
	if n.Kind == 0 || len(n.Content) == 0 {
		d.pre = fm
		return d, true
	}
	m := n.Content[0]
	if n.Kind != yaml.DocumentNode || m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle != 0 {
		return d, false
	}
	prev := -1 // 0-based line of the previous key
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		at := k.Line - 1
		if k.Kind != yaml.ScalarNode || k.Column != 1 || at <= prev || at >= len(lines) {
			return d, false
		}
		if _, dup := d.chunks[k.Value]; dup {
			return d, false
		}
		if prev < 0 {
			d.pre = strings.Join(lines[:at], "")
		} else {
			d.chunks[d.keys[len(d.keys)-1]] = strings.Join(lines[prev:at], "")
		}
		d.keys = append(d.keys, k.Value)
		d.chunks[k.Value] = ""
		prev = at
	}
	if len(d.keys) > 0 {
		d.chunks[d.keys[len(d.keys)-1]] = strings.Join(lines[prev:], "")
	}
	return d, true
}

// simpleFM cuts front matter fm without the YAML parser when every line is "key: value\n" (or "key:\n")
// with a key of [A-Za-z_][A-Za-z0-9_]* (at most 64 bytes) and a value of printable ASCII that cannot
// start or end a YAML structure: not starting with an indicator (-?:,[]{}#&*!|>'"%@`), no "#", no ": ",
// no tab, no trailing ':' or space. Such a block is a YAML mapping with one plain key a line and no
// comment, which parseFMYAML cuts the same way (TestSimpleFMAsYAML); the entries ctx writes are of this
// shape, and the YAML parser was most of a merge of 500 changed entries (bench/README.md). ok is false
// for anything else, and for a duplicated key (the YAML path refuses it too).
func simpleFM(fm string) (pre string, keys []string, chunks map[string]string, ok bool) {
	if fm == "" {
		return "", nil, nil, false
	}
	chunks = map[string]string{}
	for rest := fm; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			return "", nil, nil, false // the closing delimiter follows a newline
		}
		line := rest[:i]
		rest = rest[i+1:]
		colon := strings.IndexByte(line, ':')
		if colon <= 0 || colon > 64 || !simpleKey(line[:colon]) {
			return "", nil, nil, false
		}
		if v := line[colon+1:]; v != "" && (v[0] != ' ' || !simpleValue(v[1:])) {
			return "", nil, nil, false
		}
		k := line[:colon]
		if _, dup := chunks[k]; dup {
			return "", nil, nil, false
		}
		keys = append(keys, k)
		chunks[k] = line + "\n"
	}
	return "", keys, chunks, true
}

func simpleKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func simpleValue(v string) bool {
	if v == "" || strings.IndexByte("-?:,[]{}#&*!|>'\"%@` ", v[0]) >= 0 {
		return false
	}
	if last := v[len(v)-1]; last == ':' || last == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c > 0x7e || c == '#' || c == ':' && v[i+1] == ' ' {
			return false
		}
	}
	return true
}

// render writes the document back: front matter block (when it has one or
// has keys), then the body.
func (d mdDoc) render() []byte {
	var b strings.Builder
	if d.hasFM || len(d.keys) > 0 {
		open, close := d.open, d.close
		if open == "" {
			open = "---\n"
		}
		if close == "" {
			close = "---\n"
		}
		b.WriteString(open)
		b.WriteString(d.pre)
		for _, k := range d.keys {
			c := d.chunks[k]
			b.WriteString(c)
			if !strings.HasSuffix(c, "\n") {
				b.WriteString("\n")
			}
		}
		b.WriteString(close)
	}
	b.WriteString(d.body)
	return []byte(b.String())
}

// value decodes the YAML value of a chunk; ok is false when it does not
// decode.
func chunkValue(key, chunk string) (any, bool) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(chunk), &m); err != nil {
		return nil, false
	}
	v, ok := m[key]
	return v, ok
}

// sameChunk compares two chunks of one key: equal bytes, or equal values.
func sameChunk(key, x, y string) bool {
	if x == y {
		return true
	}
	vx, okx := chunkValue(key, x)
	vy, oky := chunkValue(key, y)
	return okx && oky && reflect.DeepEqual(vx, vy)
}

// zeroChunk reports whether the value of a chunk is its type's zero value
// (empty or null, "", 0, false, [] or {}).
func zeroChunk(key, chunk string) bool {
	v, ok := chunkValue(key, chunk)
	if !ok {
		return false
	}
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int:
		return x == 0
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// seqNode returns the value node of key in a chunk when it is a sequence of
// distinct scalars (keyed by tag and value), with those keys.
func seqNode(key, chunk string) (*yaml.Node, []string, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(chunk), &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, nil, false
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode || len(m.Content) != 2 || m.Content[0].Value != key {
		return nil, nil, false
	}
	seq := m.Content[1]
	if seq.Kind != yaml.SequenceNode {
		return nil, nil, false
	}
	ids := make([]string, 0, len(seq.Content))
	seen := map[string]bool{}
	for _, e := range seq.Content {
		if e.Kind != yaml.ScalarNode {
			return nil, nil, false
		}
		id := e.ShortTag() + "\x00" + e.Value
		if seen[id] {
			return nil, nil, false
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return seq, ids, true
}

// mergeSeqChunk merges a front-matter list both sides changed as a set, as
// mergeSet does for JSON arrays: when the three versions (base may be
// absent) are lists of distinct scalars, elements added by either side are
// kept and elements removed by either side removed, in a's order with b's
// additions after their predecessor; the list keeps a's style (flow
// `[1, 3]` or block). ok is false for anything else.
func mergeSeqChunk(key, base string, baseOK bool, a, b string) (string, bool) {
	as, aIDs, ok1 := seqNode(key, a)
	bs, bIDs, ok2 := seqNode(key, b)
	if !ok1 || !ok2 {
		return "", false
	}
	inBase := map[string]bool{}
	if baseOK {
		_, ids, ok := seqNode(key, base)
		if !ok {
			return "", false
		}
		for _, id := range ids {
			inBase[id] = true
		}
	}
	nodes := map[string]*yaml.Node{}
	inA, inB := map[string]bool{}, map[string]bool{}
	for i, id := range bIDs {
		inB[id], nodes[id] = true, bs.Content[i]
	}
	for i, id := range aIDs {
		inA[id], nodes[id] = true, as.Content[i]
	}
	keep := func(id string) bool {
		if inBase[id] {
			return inA[id] && inB[id]
		}
		return inA[id] || inB[id]
	}
	out := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: as.Style & yaml.FlowStyle}
	for _, id := range mergeOrder(aIDs, bIDs, keep) {
		n := *nodes[id]
		n.HeadComment, n.LineComment, n.FootComment = "", "", ""
		out.Content = append(out.Content, &n)
	}
	if len(out.Content) == 0 {
		out.Style = yaml.FlowStyle
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, out}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return "", false
	}
	if err := enc.Close(); err != nil {
		return "", false
	}
	return buf.String(), true
}

// stamps returns the front-matter values of the stamp keys.
func (d mdDoc) stamps() map[string]string {
	out := map[string]string{}
	for _, k := range stampKeys {
		c, ok := d.chunks[k]
		if !ok {
			continue
		}
		if v, ok := plainDate(k, c); ok {
			out[k] = v
			continue
		}
		if v, ok := chunkValue(k, c); ok {
			out[k] = scalarString(v)
		}
	}
	return out
}

// plainDate returns what scalarString(chunkValue(key, chunk)) returns for a chunk "key: VALUE\n" whose
// VALUE is shaped as a date or an RFC 3339 time (2026-01-02, 2026-01-02T15:04:05Z,
// 2026-01-02T15:04:05.5+02:00), without the YAML parser: yaml.v3 reads such a plain scalar as a
// timestamp when time.Parse takes it in its layouts (then written back in RFC 3339 with nanoseconds),
// else as the text itself (TestPlainDateAsYAML). stamps reads one per side of every file both sides
// changed. ok is false for any other chunk.
func plainDate(key, chunk string) (string, bool) {
	v, ok := strings.CutPrefix(chunk, key+": ")
	if !ok || !strings.HasSuffix(v, "\n") {
		return "", false
	}
	v = v[:len(v)-1]
	// digits and separators by position: DDDD-DD-DD, then TDD:DD:DD, .D{1,9}, Z or +DD:DD / -DD:DD
	const date = "dddd-dd-dd"
	if len(v) < len(date) || !shaped(v[:len(date)], date) {
		return "", false
	}
	rest := v[len(date):]
	if rest == "" {
		return yamlTime("2006-1-2", v), true
	}
	if len(rest) < 9 || !shaped(rest[:9], "Tdd:dd:dd") {
		return "", false
	}
	rest = rest[9:]
	if strings.HasPrefix(rest, ".") {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n < 2 || n > 10 {
			return "", false
		}
		rest = rest[n:]
	}
	if rest == "Z" || len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && shaped(rest[1:], "dd:dd") {
		return yamlTime("2006-1-2T15:4:5.999999999Z07:00", v), true
	}
	return "", false
}

// yamlTime is v as yaml.v3 gives it back: parsed with layout (the one of its timestamp layouts that v's
// shape can match) and written in RFC 3339 with nanoseconds, or v itself when it does not parse.
func yamlTime(layout, v string) string {
	if t, err := time.Parse(layout, v); err == nil {
		return t.Format(time.RFC3339Nano)
	}
	return v
}

// shaped reports whether s has the shape of pattern: 'd' a digit, any other byte itself.
func shaped(s, pattern string) bool {
	if len(s) != len(pattern) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if pattern[i] == 'd' && (s[i] < '0' || s[i] > '9') || pattern[i] != 'd' && s[i] != pattern[i] {
			return false
		}
	}
	return true
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		b, err := yaml.Marshal(x)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
}

// sortedUnion returns the distinct strings of all lists, sorted.
func sortedUnion(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, k := range l {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// mergeOrder gives the key order of a merged map: a's keys in a's order,
// then each key only b has, placed after the key that precedes it in b.
// keep says whether a key is in the merged map.
func mergeOrder(a, b []string, keep func(string) bool) []string {
	out := make([]string, 0, len(a)+len(b))
	in := map[string]bool{}
	for _, k := range a {
		if keep(k) && !in[k] {
			out = append(out, k)
			in[k] = true
		}
	}
	prev := ""
	for _, k := range b {
		if in[k] {
			prev = k
			continue
		}
		if !keep(k) {
			continue
		}
		at := 0
		if prev != "" {
			for i, x := range out {
				if x == prev {
					at = i + 1
					break
				}
			}
		}
		out = append(out, "")
		copy(out[at+1:], out[at:])
		out[at] = k
		in[k] = true
		prev = k
	}
	return out
}

// fieldLog collects what a field-level merge found: conflicting fields and
// notes. It is filled only by the pass that builds the kept version.
type fieldLog struct {
	fields []string
	notes  []Note
	path   string
}

func (l *fieldLog) conflict(field string) {
	if l != nil {
		l.fields = append(l.fields, field)
	}
}

func (l *fieldLog) note(kind, msg string) {
	if l != nil {
		l.notes = append(l.notes, Note{Path: l.path, Kind: kind, Message: msg})
	}
}

// mergeFM merges the front matter of a and b (a wins conflicts when aWins;
// metadata keys always come from a, the overall winner). base may be
// empty (no front matter, or file absent).
func mergeFM(base, a, b mdDoc, aWins bool, log *fieldLog) mdDoc {
	out := mdDoc{hasFM: a.hasFM || b.hasFM, chunks: map[string]string{}, body: ""}
	out.open, out.close = a.open, a.close
	if !a.hasFM {
		out.open, out.close = b.open, b.close
	}
	// Comment lines before the first key.
	switch {
	case a.pre == b.pre || b.pre == base.pre:
		out.pre = a.pre
	case a.pre == base.pre:
		out.pre = b.pre
	default:
		log.conflict("#comments")
		out.pre = a.pre
		if !aWins {
			out.pre = b.pre
		}
	}
	for _, k := range sortedUnion(base.keys, a.keys, b.keys) {
		bv, bok := base.chunks[k]
		av, aok := a.chunks[k]
		cv, cok := b.chunks[k]
		var v string
		var present bool
		switch {
		case metaKeys[k]:
			// The kept version names the winner's write; the lost one its own (who wrote it, when).
			v, present = av, aok
			if !aWins {
				v, present = cv, cok
			}
		case aok == cok && (!aok || sameChunk(k, av, cv)):
			v, present = av, aok
		case aok == bok && (!aok || sameChunk(k, av, bv)):
			v, present = cv, cok
		case cok == bok && (!cok || sameChunk(k, cv, bv)):
			v, present = av, aok
		case !bok && zeroChunk(k, cv):
			// Added on both sides, one of them with its type's zero value (see mergeObj).
			v, present = av, true
		case !bok && zeroChunk(k, av):
			v, present = cv, true
		case !aok || !cok:
			// The change is kept in the kept version; the lost version has the delete.
			v = av
			if !aok {
				v = cv
			}
			present = aWins
			log.conflict(k)
			log.note("delete-vs-edit", "front matter key "+k+" deleted on one side and changed on the other: the change is kept")
		default:
			if set, ok := mergeSeqChunk(k, bv, bok, av, cv); ok {
				v, present = set, true
				break
			}
			log.conflict(k)
			v, present = av, true
			if !aWins {
				v = cv
			}
		}
		if present {
			out.chunks[k] = v
		}
	}
	out.keys = mergeOrder(a.keys, b.keys, func(k string) bool { _, ok := out.chunks[k]; return ok })
	return out
}

// mergeMarkdown merges a markdown file both sides changed. It returns the
// kept and lost versions, the conflicting fields ("body" for overlapping
// body lines, else front-matter keys; "" when the file had to be merged as
// plain text) and the rule that picked the winner.
func mergeMarkdown(path string, base []byte, baseOK bool, x, y []byte) (kept, lost []byte, fields []string, rule string, notes []Note) {
	bd, bok := parseMD(base)
	xd, xok := parseMD(x)
	yd, yok := parseMD(y)
	if !baseOK {
		bd, bok = mdDoc{chunks: map[string]string{}}, true
	}
	if !bok {
		// An unreadable base: merge the front matter as if it had none.
		bd = mdDoc{chunks: map[string]string{}, body: bd.body}
	}
	if !xok || !yok {
		return mergeText(base, x, y, nil, nil)
	}
	aWins, rule := pickWinner(x, y, xd.stamps(), yd.stamps())
	a, b := xd, yd
	if !aWins {
		a, b = yd, xd
	}
	log := &fieldLog{path: path}
	k := mergeFM(bd, a, b, true, log)
	l := mergeFM(bd, a, b, false, nil)
	kb, lb, n := merge3([]byte(bd.body), []byte(a.body), []byte(b.body))
	k.body, l.body = string(kb), string(lb)
	if n > 0 {
		log.fields = append(log.fields, "body")
	}
	return k.render(), l.render(), log.fields, rule, log.notes
}

// mergeText merges two versions as plain text with Lines' diff3; the winner
// is picked by pickWinner with the given stamps. A conflict is reported
// with the field "".
func mergeText(base, x, y []byte, sx, sy map[string]string) (kept, lost []byte, fields []string, rule string, notes []Note) {
	aWins, rule := pickWinner(x, y, sx, sy)
	a, b := x, y
	if !aWins {
		a, b = y, x
	}
	kept, lost, n := merge3(base, a, b)
	if n > 0 {
		fields = []string{""}
	}
	return kept, lost, fields, rule, nil
}

// isText reports whether b looks like text: valid UTF-8 without NUL.
func isText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}
