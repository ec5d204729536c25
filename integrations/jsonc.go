package integrations

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// JSON and JSONC files are parsed with github.com/tailscale/hujson, whose
// syntax tree keeps every byte of whitespace and every comment, so the file
// can be edited as a tree and packed back with everything outside the edited
// member unchanged. hujson's RFC 6902 patch moves comments and commas along
// with members; the whitespace of a new member (indentation, the space after
// the colon, trailing-comma style) is then copied from its siblings.

type jsonDoc struct {
	key  string
	src  []byte
	root *hujson.Value // nil for an empty or missing file
	val  map[string]any
}

// tree returns a fresh syntax tree to edit. The source is parsed again
// rather than cloned: hujson's Value.Clone turns the empty, non-nil
// AfterExtra that marks a trailing comma into nil, losing the comma.
func (d *jsonDoc) tree() (hujson.Value, error) {
	v, err := hujson.Parse(d.src)
	if err != nil {
		return v, fmt.Errorf("parse JSON: %w", err)
	}
	return v, nil
}

func parseJSON(key string, src []byte, jsonc bool) (*jsonDoc, error) {
	d := &jsonDoc{key: key, src: src, val: map[string]any{}}
	if len(bytes.TrimSpace(src)) == 0 {
		return d, nil
	}
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("parse JSON: %w", err)
	}
	if !jsonc && !json.Valid(src) {
		return nil, errors.New("comments or trailing commas are not allowed in this file")
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, errors.New("top level is not a JSON object")
	}
	d.root = &v
	std, _ := hujson.Standardize(bytes.Clone(src)) // it rewrites its argument in place
	if err := json.Unmarshal(std, &d.val); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return d, nil
}

func (d *jsonDoc) value() map[string]any { return d.val }

// jsonNewFile is the content of a new file holding one entry.
func jsonNewFile(key, name string, entry object) []byte {
	return append(render(object{{key, object{{name, entry}}}}, "", "  ", true), '\n')
}

// render marshals v, indented with prefix and unit when multiline.
func render(v any, prefix, unit string, multiline bool) []byte {
	b, err := marshal(v)
	if err != nil || !multiline {
		return b
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, prefix, unit); err != nil {
		return b
	}
	return buf.Bytes()
}

func (d *jsonDoc) set(name string, entry object) ([]byte, error) {
	if d.root == nil {
		return jsonNewFile(d.key, name, entry), nil
	}
	v, err := d.tree()
	if err != nil {
		return nil, err
	}
	root := v.Value.(*hujson.Object)
	unit := indentUnit(root)
	fileMultiline := isMultiline(root)
	nl := newline(d.src)
	render := func(v any, prefix string, multiline bool) []byte {
		return bytes.ReplaceAll(render(v, prefix, unit, multiline), []byte("\n"), []byte(nl))
	}

	ci := memberIndex(root, d.key)
	if ci < 0 {
		indent, ml := childLayout(root, "", unit, fileMultiline)
		val := render(object{{name, entry}}, indent, ml)
		if err := patchAdd(&v, pointer(d.key), val); err != nil {
			return nil, err
		}
		fixNewMember(root, nl+indent, ml)
		return v.Pack(), nil
	}
	cm := &root.Members[ci]
	servers := cm.Value.Value.(*hujson.Object)
	if ei := memberIndex(servers, name); ei >= 0 {
		m := &servers.Members[ei]
		indent, ml := indentAfterNewline(m.Name.BeforeExtra)
		nv, err := hujson.Parse(render(entry, indent, ml && fileMultiline))
		if err != nil {
			return nil, fmt.Errorf("render entry: %w", err)
		}
		m.Value.Value = nv.Value
		return v.Pack(), nil
	}
	parentIndent, _ := indentAfterNewline(cm.Name.BeforeExtra)
	indent, ml := childLayout(servers, parentIndent, unit, fileMultiline)
	if err := patchAdd(&v, pointer(d.key, name), render(entry, indent, ml)); err != nil {
		return nil, err
	}
	fixNewMember(servers, nl+indent, ml)
	if ml && len(servers.Members) == 1 && !bytes.Contains(servers.AfterExtra, []byte("\n")) {
		servers.AfterExtra = []byte(nl + parentIndent)
	}
	return v.Pack(), nil
}

func (d *jsonDoc) remove(name string) ([]byte, bool, error) {
	if d.root == nil {
		return nil, true, nil
	}
	v, err := d.tree()
	if err != nil {
		return nil, false, err
	}
	root := v.Value.(*hujson.Object)
	ci := memberIndex(root, d.key)
	if ci < 0 {
		return v.Pack(), false, nil
	}
	servers := root.Members[ci].Value.Value.(*hujson.Object)
	if memberIndex(servers, name) < 0 {
		return v.Pack(), false, nil
	}
	if err := removeMember(&v, servers, pointer(d.key, name)); err != nil {
		return nil, false, err
	}
	if len(servers.Members) == 0 && isBlank(servers.AfterExtra) {
		if ci := memberIndex(root, d.key); hasAttachedComments(root, ci) {
			servers.AfterExtra = nil // keep the table, as "{}"
		} else if err := removeMember(&v, root, pointer(d.key)); err != nil {
			// Drop the now empty table, as Install added it.
			return nil, false, err
		}
	}
	empty := len(root.Members) == 0 && isBlank(root.AfterExtra) &&
		isBlank(v.BeforeExtra) && isBlank(v.AfterExtra)
	return v.Pack(), empty, nil
}

// removeMember removes the member at ptr from obj (a node inside v) and
// restores the indentation of obj's closing brace and its trailing-comma
// style, which hujson's patch may disturb.
func removeMember(v *hujson.Value, obj *hujson.Object, ptr string) error {
	closeIndent, closeNL := indentAfterNewline(obj.AfterExtra)
	trailing := len(obj.Members) > 0 && obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	if err := v.Patch(fmt.Appendf(nil, `[{"op":"remove","path":%s}]`, mustMarshal(ptr))); err != nil {
		return fmt.Errorf("remove %s: %w", ptr, err)
	}
	if closeNL {
		if i := bytes.LastIndexByte(obj.AfterExtra, '\n'); i >= 0 && isBlank(obj.AfterExtra[i:]) {
			obj.AfterExtra = append(obj.AfterExtra[:i+1:i+1], closeIndent...)
		}
	}
	if n := len(obj.Members); n > 0 && trailing && obj.Members[n-1].Value.AfterExtra == nil {
		obj.Members[n-1].Value.AfterExtra = []byte{}
	}
	return nil
}

// hasAttachedComments reports whether comments surround member i of obj:
// before its name, around its colon or value, or on the rest of its line.
// hujson's patch would drop them along with the member.
func hasAttachedComments(obj *hujson.Object, i int) bool {
	m := obj.Members[i]
	if !isBlank(m.Name.BeforeExtra) || !isBlank(m.Name.AfterExtra) ||
		!isBlank(m.Value.BeforeExtra) || !isBlank(m.Value.AfterExtra) {
		return true
	}
	next := obj.AfterExtra
	if i+1 < len(obj.Members) {
		next = obj.Members[i+1].Name.BeforeExtra
	}
	if j := bytes.IndexByte(next, '\n'); j >= 0 {
		next = next[:j]
	}
	return !isBlank(next)
}

// patchAdd adds the JSON text val at ptr with hujson's patch, which moves
// trailing comments and commas correctly.
func patchAdd(v *hujson.Value, ptr string, val []byte) error {
	patch := fmt.Appendf(nil, `[{"op":"add","path":%s,"value":%s}]`, mustMarshal(ptr), val)
	if err := v.Patch(patch); err != nil {
		return fmt.Errorf("add %s: %w", ptr, err)
	}
	return nil
}

// fixNewMember gives the member just appended to obj the whitespace of its
// siblings: its own line (lead is the newline and indentation) when
// multiline, and the sibling's spacing around the colon and trailing-comma
// style.
func fixNewMember(obj *hujson.Object, lead string, multiline bool) {
	n := len(obj.Members)
	m := &obj.Members[n-1]
	var prev *hujson.ObjectMember
	if n > 1 {
		prev = &obj.Members[n-2]
	}
	if multiline {
		keep := bytes.TrimRight(m.Name.BeforeExtra, " \t\r\n")
		m.Name.BeforeExtra = append(keep[:len(keep):len(keep)], lead...)
	} else if prev != nil && isBlank(prev.Name.BeforeExtra) {
		m.Name.BeforeExtra = bytes.Clone(prev.Name.BeforeExtra)
	}
	m.Name.AfterExtra = nil
	m.Value.BeforeExtra = []byte(" ")
	if !multiline {
		m.Value.BeforeExtra = nil
	}
	if prev != nil {
		if isBlank(prev.Name.AfterExtra) {
			m.Name.AfterExtra = bytes.Clone(prev.Name.AfterExtra)
		}
		if isBlank(prev.Value.BeforeExtra) {
			m.Value.BeforeExtra = bytes.Clone(prev.Value.BeforeExtra)
		}
		// A trailing comma after the previous last member becomes the
		// separator; keep the object's trailing-comma style.
		if prev.Value.AfterExtra != nil && m.Value.AfterExtra == nil {
			m.Value.AfterExtra = []byte{}
		}
	}
}

// childLayout returns the indentation for a new member of obj, whose own
// member line is indented by parentIndent, and whether it goes on its own
// line.
func childLayout(obj *hujson.Object, parentIndent, unit string, fileMultiline bool) (string, bool) {
	if n := len(obj.Members); n > 0 {
		return indentAfterNewline(obj.Members[n-1].Name.BeforeExtra)
	}
	if bytes.Contains(obj.AfterExtra, []byte("\n")) || fileMultiline {
		return parentIndent + unit, true
	}
	return "", false
}

// indentUnit guesses one level of indentation from the top-level members.
func indentUnit(root *hujson.Object) string {
	for _, m := range root.Members {
		if ind, ok := indentAfterNewline(m.Name.BeforeExtra); ok && ind != "" {
			return ind
		}
	}
	return "  "
}

func isMultiline(root *hujson.Object) bool {
	for _, m := range root.Members {
		if bytes.Contains(m.Name.BeforeExtra, []byte("\n")) {
			return true
		}
	}
	return len(root.Members) == 0 && bytes.Contains(root.AfterExtra, []byte("\n"))
}

// indentAfterNewline returns the blanks after the last newline of extra and
// whether extra has a newline.
func indentAfterNewline(extra hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	rest := extra[i+1:]
	if j := bytes.IndexFunc(rest, func(r rune) bool { return r != ' ' && r != '\t' }); j >= 0 {
		rest = rest[:j]
	}
	return string(rest), true
}

func memberIndex(obj *hujson.Object, name string) int {
	idx := -1
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			idx = i // the last duplicate wins, as in encoding/json
		}
	}
	return idx
}

// newline returns the file's line ending: CRLF if it has any, else LF.
func newline(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// pointer builds an RFC 6901 JSON pointer.
func pointer(parts ...string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteByte('/')
		sb.WriteString(esc.Replace(p))
	}
	return sb.String()
}

func mustMarshal(s string) []byte {
	b, _ := marshal(s)
	return b
}
