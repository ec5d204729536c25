package store

import (
	"bytes"
	"fmt"

	"github.com/ctx-dev/ctx/merge"
	"go.yaml.in/yaml/v3"
)

// SplitFrontMatter splits a markdown file into its YAML front matter and body (docs/format.md "Front
// matter"), by the one rule every reader uses (merge.SplitFrontMatter): an optional UTF-8 BOM, a first
// line "---", the block, the next line "---"; the body is everything after that closing line's newline,
// byte for byte. ok is false (and body is the whole input) when the file has none.
func SplitFrontMatter(b []byte) (fm, body []byte, ok bool) {
	_, block, _, rest, ok := merge.SplitFrontMatter(b)
	return block, rest, ok
}

// ReadFrontMatter reads the front matter of a markdown file by the one rule of docs/format.md (see
// merge.ReadFrontMatter): top-level scalar values as written, a BOM allowed, and a block that is not valid
// YAML or repeats a key read key by key, its first value kept, each problem reported with its line.
func ReadFrontMatter(b []byte) (merge.FrontMatter, []byte) { return merge.ReadFrontMatter(b) }

// Meta is a YAML front matter mapping that keeps its keys' order and every key it does not know.
type Meta struct {
	node yaml.Node // a MappingNode
}

// ParseMeta parses front matter text. Invalid YAML is an error (callers that must not lose the file keep
// it as body instead).
func ParseMeta(fm []byte) (*Meta, error) {
	m := &Meta{node: yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}}
	if len(bytes.TrimSpace(fm)) == 0 {
		return m, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		return nil, fmt.Errorf("front matter: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("front matter: not a mapping")
	}
	m.node = *doc.Content[0]
	return m, nil
}

// NewMeta returns an empty mapping.
func NewMeta() *Meta { return &Meta{node: yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}} }

func (m *Meta) find(key string) int {
	for i := 0; i+1 < len(m.node.Content); i += 2 {
		if m.node.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// String returns a scalar value, "" when absent or not a scalar.
func (m *Meta) String(key string) string {
	i := m.find(key)
	if i < 0 || m.node.Content[i+1].Kind != yaml.ScalarNode {
		return ""
	}
	return m.node.Content[i+1].Value
}

// Decode decodes the value of key into v; false when absent.
func (m *Meta) Decode(key string, v any) bool {
	i := m.find(key)
	if i < 0 {
		return false
	}
	return m.node.Content[i+1].Decode(v) == nil
}

// Has reports whether key is present.
func (m *Meta) Has(key string) bool { return m.find(key) >= 0 }

// Set sets key to v (encoded as YAML), keeping its place when present, appending it otherwise.
func (m *Meta) Set(key string, v any) {
	var val yaml.Node
	if err := val.Encode(v); err != nil {
		val = yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(v)}
	}
	if val.Kind == yaml.SequenceNode {
		val.Style = yaml.FlowStyle
	}
	if i := m.find(key); i >= 0 {
		m.node.Content[i+1] = &val
		return
	}
	m.node.Content = append(m.node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &val)
}

// Delete removes key.
func (m *Meta) Delete(key string) {
	if i := m.find(key); i >= 0 {
		m.node.Content = append(m.node.Content[:i], m.node.Content[i+2:]...)
	}
}

// Keys lists the keys in order.
func (m *Meta) Keys() []string {
	var out []string
	for i := 0; i+1 < len(m.node.Content); i += 2 {
		out = append(out, m.node.Content[i].Value)
	}
	return out
}

// Bytes renders the mapping as YAML (no delimiters), ending in a newline; empty for an empty mapping.
func (m *Meta) Bytes() []byte {
	if len(m.node.Content) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	_ = enc.Encode(&m.node)
	_ = enc.Close()
	return buf.Bytes()
}

// JoinFrontMatter renders "---\n" + meta + "---\n" + body (docs/format.md).
func JoinFrontMatter(m *Meta, body []byte) []byte {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	buf.Write(m.Bytes())
	buf.WriteString("---\n")
	buf.Write(body)
	return buf.Bytes()
}
