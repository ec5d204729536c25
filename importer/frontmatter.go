package importer

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// frontMatter is the parsed YAML front matter of a markdown file: top-level scalar values by key, as the
// text found in the file (no type conversion, so a date stays "2020-09-24" and a number stays "007").
type frontMatter struct {
	present bool              // the file starts with a "---" line
	values  map[string]string // top-level scalar keys -> values
	warning string            // set when the block was not valid YAML or not closed; what was guessed
}

// get returns the value of key, matching it exactly first and then ignoring case.
func (fm frontMatter) get(key string) string {
	if v, ok := fm.values[key]; ok {
		return v
	}
	for k, v := range fm.values {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return ""
}

// splitFrontMatter splits content into its front matter block and the body after it, following
// docs/format.md: the block is delimited by a line "---" at the very start of the file and the next line
// "---"; the body is everything after that closing line's newline. A file without a closing line has no
// front matter (open reports that it started like one). CR LF line ends are accepted.
func splitFrontMatter(content []byte) (block, body []byte, open, closed bool) {
	first, rest, _ := cutLine(content)
	if string(first) != "---" {
		return nil, content, false, false
	}
	start := len(content) - len(rest)
	pos := start
	for pos < len(content) {
		line, next, _ := cutLine(content[pos:])
		end := len(content) - len(next)
		if string(line) == "---" {
			return content[start:pos], content[end:], true, true
		}
		pos = end
	}
	return nil, content, true, false
}

// cutLine returns the first line of b without its "\n" or "\r\n", the rest after it, and whether a
// newline was found.
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.TrimSuffix(b, []byte("\r")), nil, false
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], true
}

// fallbackLine matches a top-level "key: value" line, used when the front matter is not valid YAML.
var fallbackLine = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*?)[ \t]*$`)

// parseFrontMatter reads the front matter of content with yaml.v3. Invalid YAML is not fatal: the
// top-level "key: value" lines are read one by one instead and the warning says so.
func parseFrontMatter(content []byte) (frontMatter, []byte) {
	block, body, open, closed := splitFrontMatter(content)
	fm := frontMatter{values: map[string]string{}}
	if !open {
		return fm, body
	}
	if !closed {
		fm.warning = "front matter opened with \"---\" but never closed; read the whole file as body"
		return fm, body
	}
	fm.present = true
	var doc yaml.Node
	err := yaml.Unmarshal(block, &doc)
	if err == nil {
		if len(doc.Content) == 0 {
			return fm, body // empty block
		}
		if m := doc.Content[0]; m.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(m.Content); i += 2 {
				k, v := m.Content[i], m.Content[i+1]
				if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
					continue
				}
				if _, dup := fm.values[k.Value]; !dup {
					fm.values[k.Value] = strings.TrimSpace(v.Value)
				}
			}
			return fm, body
		}
		err = fmt.Errorf("it is a YAML %s, not a mapping", kindName(doc.Content[0].Kind))
	}
	for _, line := range strings.Split(string(block), "\n") {
		m := fallbackLine.FindStringSubmatch(strings.TrimSuffix(line, "\r"))
		if m == nil {
			continue
		}
		if _, dup := fm.values[m[1]]; !dup {
			fm.values[m[1]] = unquote(m[2])
		}
	}
	fm.warning = fmt.Sprintf("front matter is not valid YAML (%s); read its top-level \"key: value\" lines one by one",
		oneLine(err.Error()))
	return fm, body
}

// kindName names a yaml node kind for messages.
func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	default:
		return "document"
	}
}

// unquote strips one pair of matching single or double quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// oneLine joins the lines of s with "; " so a warning stays on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
