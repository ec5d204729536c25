// Package frontmeta is the YAML front matter of an entry as ctx writes it (docs/format.md "Front
// matter"): a mapping that keeps its keys' order and every key it does not know, encoded by yaml.v3 with
// an indent of 2. store uses it for every entry it writes, and the lean front (docs/architecture.md "The
// lean front") for the entries it writes, so that both encode the same bytes. It links yaml.v3 and the
// standard library only.
package frontmeta

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Meta is a YAML front matter mapping that keeps its keys' order and every key it does not know.
type Meta struct {
	node yaml.Node // a MappingNode
}

// Parse parses front matter text. Invalid YAML is an error (callers that must not lose the file keep
// it as body instead).
func Parse(fm []byte) (*Meta, error) {
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

// New returns an empty mapping.
func New() *Meta { return &Meta{node: yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}} }

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

// Join renders "---\n" + meta + "---\n" + body (docs/format.md).
func Join(m *Meta, body []byte) []byte {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	buf.Write(m.Bytes())
	buf.WriteString("---\n")
	buf.Write(body)
	return buf.Bytes()
}
