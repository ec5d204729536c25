package merge

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The one reading of YAML front matter (docs/format.md "Front matter"), shared by every package that reads
// a markdown file of the context branch or a file to import: the merge layer, the store (skill list,
// entries, decisions, the validation of `ctx commit`) and the importer. merge imports no project package,
// so the rule lives here.

// utf8BOM is the byte order mark some editors write at the start of a UTF-8 file.
const utf8BOM = "\ufeff"

// SplitFrontMatter cuts a markdown file at its front matter: an optional UTF-8 byte order mark, a first
// line "---", the block, and the next line "---" ("\r\n" line ends accepted). open is the BOM and the
// opening line with its newline, close the closing line with its newline (if any), body everything after,
// byte for byte. ok is false when the file has no closed block; body is then the whole input and open,
// block and close are nil.
func SplitFrontMatter(b []byte) (open, block, close, body []byte, ok bool) {
	start := 0
	if bytes.HasPrefix(b, []byte(utf8BOM)) {
		start = len(utf8BOM)
	}
	rest := b[start:]
	switch {
	case bytes.HasPrefix(rest, []byte("---\n")):
		start += 4
	case bytes.HasPrefix(rest, []byte("---\r\n")):
		start += 5
	default:
		return nil, nil, nil, b, false
	}
	for p := start; p <= len(b); {
		end := len(b)
		if i := bytes.IndexByte(b[p:], '\n'); i >= 0 {
			end = p + i + 1
		}
		line := bytes.TrimSuffix(bytes.TrimSuffix(b[p:end], []byte("\n")), []byte("\r"))
		if string(line) == "---" {
			return b[:start], b[start:p], b[p:end], b[end:], true
		}
		if end == len(b) {
			break
		}
		p = end
	}
	return nil, nil, nil, b, false
}

// FrontMatterProblem is one thing the reading of a front matter block had to work around, with its
// 1-based line number in the file.
type FrontMatterProblem struct {
	Line int
	Msg  string
}

func (p FrontMatterProblem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Msg) }

// FrontMatter is what ReadFrontMatter found in a markdown file.
type FrontMatter struct {
	// Present: the file has a closed front matter block (possibly after a BOM).
	Present bool
	// Unclosed: the file starts with "---" but has no closing line; it is then all body.
	Unclosed bool
	// Values are the top-level keys whose value is a scalar, as text (no type conversion: "007" stays
	// "007", a date stays as written). A repeated key keeps its first value.
	Values map[string]string
	// Keys are the top-level keys in file order, each once.
	Keys []string
	// Problems say why the block is not plain YAML (invalid YAML, a repeated key) and what was read
	// instead; empty for a valid block.
	Problems []FrontMatterProblem
	// Valid: the block parses as a YAML mapping without repeated keys (Present and no Problems).
	Valid bool
}

// Get returns the value of key: an exact match first, then one ignoring case; "" when absent.
func (fm FrontMatter) Get(key string) string {
	if v, ok := fm.Values[key]; ok {
		return v
	}
	for _, k := range fm.Keys {
		if strings.EqualFold(k, key) {
			return fm.Values[k]
		}
	}
	return ""
}

// yamlLine finds the line number in a yaml.v3 error message ("yaml: line 3: ...").
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// topKey matches a top-level "key:" line of a front matter block.
var topKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^\s#:"'][^:]*?)[ \t]*:(?:[ \t]|$)`) })

// ReadFrontMatter reads the front matter of a markdown file by one rule, the same on every path (import,
// dry run, hand edit and `ctx commit`, a pulled commit, skill list, MCP reads):
//
//   - a UTF-8 BOM before the opening "---" is allowed;
//   - the block is YAML; the top-level scalar values are kept as written;
//   - when the block is not valid YAML, or repeats a key, each top-level "key: value" line (with the
//     indented lines after it) is read on its own: as YAML when that part parses, else the rest of the
//     line is the value as written ("description: a: b" gives "a: b"); a repeated key keeps its first
//     value. Each such case is a Problem with its line, so that writers can tell the user.
//
// body is what follows the block (the whole input when there is none).
func ReadFrontMatter(b []byte) (fm FrontMatter, body []byte) {
	fm.Values = map[string]string{}
	open, block, _, body, ok := SplitFrontMatter(b)
	if !ok {
		rest := bytes.TrimPrefix(b, []byte(utf8BOM))
		fm.Unclosed = bytes.HasPrefix(rest, []byte("---\n")) || bytes.HasPrefix(rest, []byte("---\r\n")) || string(bytes.TrimRight(rest, "\r")) == "---"
		return fm, body
	}
	fm.Present = true
	first := bytes.Count(open, []byte("\n")) + 1 // file line of the block's first line
	var doc yaml.Node
	err := yaml.Unmarshal(block, &doc)
	if err == nil {
		if len(doc.Content) == 0 {
			fm.Valid = true
			return fm, body
		}
		if m := doc.Content[0]; m.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(m.Content); i += 2 {
				k, v := m.Content[i], m.Content[i+1]
				fm.add(k.Value, v, first+k.Line-1)
			}
			fm.Valid = len(fm.Problems) == 0
			return fm, body
		}
		fm.Problems = append(fm.Problems, FrontMatterProblem{Line: first, Msg: "the front matter is not a YAML mapping"})
	} else {
		line := first
		if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			line = first + n - 1
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimSpace(yamlLine().ReplaceAllString(msg, ""))
		msg = strings.TrimLeft(msg, ": ")
		fm.Problems = append(fm.Problems, FrontMatterProblem{Line: line, Msg: "not valid YAML (" + oneLine(msg) + "); each top-level \"key: value\" line read on its own"})
	}
	fm.readLines(block, first)
	return fm, body
}

// add records one top-level key of a parsed mapping; a repeated key keeps its first value.
func (fm *FrontMatter) add(key string, v *yaml.Node, line int) {
	if _, dup := fm.Values[key]; dup || contains(fm.Keys, key) {
		fm.Problems = append(fm.Problems, FrontMatterProblem{Line: line, Msg: fmt.Sprintf("key %q repeated; the first value is kept", key)})
		return
	}
	fm.Keys = append(fm.Keys, key)
	if v != nil && v.Kind == yaml.ScalarNode {
		fm.Values[key] = strings.TrimSpace(v.Value)
	}
}

// readLines reads a block that is not valid YAML one top-level key at a time (see ReadFrontMatter).
func (fm *FrontMatter) readLines(block []byte, first int) {
	lines := strings.SplitAfter(string(block), "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimRight(lines[i], "\r\n")
		m := topKey().FindStringSubmatch(t)
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && (strings.HasPrefix(lines[j], " ") || strings.HasPrefix(lines[j], "\t") || strings.TrimSpace(lines[j]) == "") {
			j++
		}
		key := m[1]
		chunk := strings.Join(lines[i:j], "")
		var part yaml.Node
		var value *yaml.Node
		if yaml.Unmarshal([]byte(chunk), &part) == nil && len(part.Content) == 1 && part.Content[0].Kind == yaml.MappingNode &&
			len(part.Content[0].Content) == 2 && part.Content[0].Content[0].Value == key {
			value = part.Content[0].Content[1]
		} else {
			raw := strings.TrimSpace(t[len(m[0]):])
			value = &yaml.Node{Kind: yaml.ScalarNode, Value: unquoteRaw(raw)}
		}
		fm.add(key, value, first+i)
		i = j - 1
	}
}

// unquoteRaw strips one pair of matching quotes from a value read as written.
func unquoteRaw(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// oneLine joins the lines of s so that a message stays on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
