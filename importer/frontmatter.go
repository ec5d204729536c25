package importer

import (
	"strings"

	"github.com/ctx-dev/ctx/store"
)

// frontMatter is the parsed YAML front matter of a file to import, read by the one rule every path of ctx
// shares (store.ReadFrontMatter, docs/format.md "Front matter"), so that the dry run, the import, skill
// list and the MCP resources all show the same values.
type frontMatter struct {
	present bool              // the file has a closed front matter block (a UTF-8 BOM before it is allowed)
	values  map[string]string // top-level scalar keys -> values, as written
	keys    []string
	warning string // what the reading had to work around, with line numbers; "" for plain YAML
}

// get returns the value of key, matching it exactly first and then ignoring case.
func (fm frontMatter) get(key string) string {
	if v, ok := fm.values[key]; ok {
		return v
	}
	for _, k := range fm.keys {
		if strings.EqualFold(k, key) {
			return fm.values[k]
		}
	}
	return ""
}

// parseFrontMatter reads the front matter of content and returns the body after it. Invalid YAML or a
// repeated key is not fatal: the values are those every reader of the stored file gets, and the warning
// names the lines.
func parseFrontMatter(content []byte) (frontMatter, []byte) {
	read, body := store.ReadFrontMatter(content)
	fm := frontMatter{present: read.Present, values: read.Values, keys: read.Keys}
	var problems []string
	for _, p := range read.Problems {
		problems = append(problems, p.String())
	}
	switch {
	case read.Unclosed:
		fm.warning = "front matter opened with \"---\" but never closed; read the whole file as body"
	case len(problems) > 0:
		fm.warning = "front matter: " + strings.Join(problems, "; ")
	}
	return fm, body
}
