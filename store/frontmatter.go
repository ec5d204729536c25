package store

import (
	"github.com/ctx-dev/ctx/merge"
	"github.com/ctx-dev/ctx/store/frontmeta"
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

// Meta is a YAML front matter mapping that keeps its keys' order and every key it does not know
// (package frontmeta, which the lean front shares).
type Meta = frontmeta.Meta

// ParseMeta parses front matter text. Invalid YAML is an error (callers that must not lose the file keep
// it as body instead).
func ParseMeta(fm []byte) (*Meta, error) { return frontmeta.Parse(fm) }

// NewMeta returns an empty mapping.
func NewMeta() *Meta { return frontmeta.New() }

// JoinFrontMatter renders "---\n" + meta + "---\n" + body (docs/format.md).
func JoinFrontMatter(m *Meta, body []byte) []byte { return frontmeta.Join(m, body) }
