package main

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store/frontmeta"
)

// TestFlatMetaSameAsFrontmeta: for front matter blocks and values of every shape flatMeta meets (ctx's
// own, a teammate's, quoting, unicode, numbers, dates, YAML's words, long lines, comments, lists), what
// flatMeta accepts it reads and writes exactly as store/frontmeta (yaml.v3) does: the same provenance
// read, the same bytes after the write's five sets. What it refuses is ctx-full's; the test checks that
// it refuses what it cannot vouch for and accepts ctx's own shapes (so the front serves them).
func TestFlatMetaSameAsFrontmeta(t *testing.T) {
	blocks := []string{
		"",
		"author: Bench <bench@example.com>\nagent: cli\nupdated_at: \"2026-01-01T00:00:00Z\"\nprovenance: owner_instruction\nscope: public\n",
		"author: A <a@x>\nprovenance: owner_approved\n",
		"title: Plain title here\nversion: 1\nratio: 1.5\nwhen: 2020-01-01\nat: 2020-01-01T00:00:00Z\nflag: true\nnothing: null\nold: yes\nno: off\n",
		"title: \"A: title\"\nnote: \"# not a comment\"\ntime: \"12:30\"\n",
		"author: José Ñúñez <jn@example.com>\nplace: 日本語\n",
		"author: O'Brien (ops) <ob+ctx@example.com>\nurl: a/b=c\n",
		"a_b: x\n_c: y\nk9: z\n",
		"title: " + strings.Repeat("word ", 14) + "end\n",
		"title: " + strings.Repeat("word ", 20) + "end\n",
		"author: Seed cc32c848 maintainers <maintainers@users.noreply.a-seed-cc32c848.example>\n",
		"title: " + strings.Repeat("w", 70) + " " + strings.Repeat("x", 40) + "\n",
		"title: " + strings.Repeat("w", 72) + " " + strings.Repeat("x", 40) + "\n",
		"title: \"" + strings.Repeat("w", 70) + " " + strings.Repeat("x", 40) + "\"\n",
		"title: \"" + strings.Repeat("w", 72) + " " + strings.Repeat("x", 40) + "\"\n",
		"tags: [a, b]\n",
		"# comment\nauthor: x\n",
		"author: x # trailing\n",
		"title: 'single'\n",
		"title: \"esc\\\"aped\"\n",
		"extra:\n  nested: 1\n",
		"author:  two spaces\n",
		"author: trailing \n",
		"Author: capital\n",
		"dup: 1\ndup: 2\n",
		"title: a:b\n",
		"title: a: b\n",
		"title: -dash\n",
		"title: @at\n",
		"list: - a\n",
		"title: x\r\n",
		"   \n",
		"empty:\n",
		"text: |\n  literal\n",
	}
	values := []string{"cli", "claude-code", "Bench <bench@example.com>", "José <j@x>", "O'Brien <o@x>", "2026-12-02T03:04:05Z",
		"owner_instruction", "agent_generated", "public", "yes", "No", "null", "true", "1", "1.5", "2020-01-01", "a: b", "a #b",
		" lead", "trail ", "two  spaces", "x" + strings.Repeat("y", 80), "tab\there", "quote\"d", "Seed cc32c848 maintainers <maintainers@users.noreply.a-seed-cc32c848.example>",
		strings.Repeat("n", 60) + " " + strings.Repeat("m", 30), strings.Repeat("n", 75) + " " + strings.Repeat("m", 30),
		"ñ" + strings.Repeat("é", 40) + " " + strings.Repeat("m", 30), "back\\slash", "",
		"ünïcode ñame <u@x>", "{brace}", "[list]", "a,b", "a?b", "a*b", "a&b", "a!b", "a|b", "a%b", "a`b", "~"}
	served := 0
	for _, block := range blocks {
		for _, v := range values {
			m, ok := parseFlatMeta([]byte(block))
			if !ok {
				continue
			}
			want, err := frontmeta.Parse([]byte(block))
			if err != nil {
				t.Errorf("flatMeta accepted %q, which yaml.v3 refuses: %v", block, err)
				continue
			}
			if got, w := m.String("provenance"), want.String("provenance"); got != w {
				t.Errorf("%q: provenance %q, frontmeta %q", block, got, w)
			}
			if got, w := m.String("title"), want.String("title"); got != w {
				t.Errorf("%q: title %q, frontmeta %q", block, got, w)
			}
			sets := [][2]string{{"author", v}, {"agent", "cli"}, {"updated_at", "2026-12-02T03:04:05Z"}, {"provenance", v}, {"scope", "public"}}
			all := true
			for _, kv := range sets {
				all = m.set(kv[0], kv[1]) && all
				want.Set(kv[0], kv[1])
			}
			if !all {
				continue
			}
			served++
			body := []byte("body\n")
			if got, w := string(m.join(body)), string(frontmeta.Join(want, body)); got != w {
				t.Errorf("block %q, value %q:\nflatMeta  %q\nfrontmeta %q", block, v, got, w)
			}
		}
	}
	for _, block := range append([]string{blocks[0], blocks[1], blocks[2]}, "author: Seed cc32c848 maintainers <maintainers@users.noreply.a-seed-cc32c848.example>\n") {
		if _, ok := parseFlatMeta([]byte(block)); !ok {
			t.Errorf("ctx's own front matter refused: %q", block)
		}
	}
	for _, v := range []string{"cli", "Bench <bench@example.com>", "Seed cc32c848 maintainers <maintainers@users.noreply.a-seed-cc32c848.example>", "José <j@x>", "2026-12-02T03:04:05Z", "owner_instruction"} {
		if !(&flatMeta{}).set("author", v) {
			t.Errorf("value %q refused", v)
		}
	}
	if served < 80 {
		t.Errorf("only %d of the combinations written: the test checks too little", served)
	}
}
