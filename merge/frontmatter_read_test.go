package merge

import (
	"strings"
	"testing"
)

// TestReadFrontMatter: the one reading of front matter gives the value the user sees on every input
// that used to lose it (BOM, invalid YAML, a repeated key) and says where the problem is.
func TestReadFrontMatter(t *testing.T) {
	for _, c := range []struct {
		name, in, desc, body string
		problemLine          int // 0: none expected
		valid                bool
	}{
		{"plain", "---\nname: x\ndescription: Reads files\n---\nBody\n", "Reads files", "Body\n", 0, true},
		{"bom", "\ufeff---\nname: x\ndescription: Reads files\n---\nBody\n", "Reads files", "Body\n", 0, true},
		{"crlf", "---\r\nname: x\r\ndescription: Reads files\r\n---\r\nBody\r\n", "Reads files", "Body\r\n", 0, true},
		{"colon", "---\nname: x\ndescription: a: b\n---\nBody\n", "a: b", "Body\n", 3, false},
		{"repeated", "---\nname: x\ndescription: first\ndescription: second\n---\n", "first", "", 4, false},
		{"repeated and invalid", "---\nname: x\ndescription: first\nbad: a: b\ndescription: second\n---\n", "first", "", 4, false},
		{"folded in an invalid block", "---\nname: x: y\ndescription: >\n  long\n  text\n---\n", "long text", "", 2, false},
		{"quoted in an invalid block", "---\nname: x: y\ndescription: \"quoted: yes\"\n---\n", "quoted: yes", "", 2, false},
		{"case", "---\nDescription: Upper\n---\n", "Upper", "", 0, true},
		{"none", "# Title\n", "", "# Title\n", 0, false},
		{"unclosed", "---\ndescription: x\n", "", "---\ndescription: x\n", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fm, body := ReadFrontMatter([]byte(c.in))
			if got := fm.Get("description"); got != c.desc {
				t.Errorf("description %q, want %q", got, c.desc)
			}
			if string(body) != c.body {
				t.Errorf("body %q, want %q", body, c.body)
			}
			if fm.Valid != c.valid {
				t.Errorf("valid %v, want %v (problems %v)", fm.Valid, c.valid, fm.Problems)
			}
			switch {
			case c.problemLine == 0 && len(fm.Problems) > 0:
				t.Errorf("unexpected problems %v", fm.Problems)
			case c.problemLine > 0 && (len(fm.Problems) == 0 || fm.Problems[0].Line != c.problemLine):
				t.Errorf("problems %v, want the first on line %d", fm.Problems, c.problemLine)
			}
		})
	}
	if fm, _ := ReadFrontMatter([]byte("---\ndescription: x\n")); !fm.Unclosed {
		t.Error("an unclosed block is not reported")
	}
	// merge's own cut agrees: a BOM file has front matter, and renders back byte for byte.
	in := "\ufeff---\nname: x\ndescription: y\n---\nBody\n"
	d, ok := parseMD([]byte(in))
	if !ok || !d.hasFM || string(d.render()) != in || !strings.Contains(d.chunks["description"], "y") {
		t.Errorf("parseMD of a BOM file: ok %v fm %v render %q", ok, d.hasFM, d.render())
	}
}
