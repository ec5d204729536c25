package importer

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// maxImportDepth is how deep "@path" imports are followed (Claude Code's own limit is five hops).
const maxImportDepth = 5

// maxImportBytes bounds one imported file; a larger one is not appended (with a warning).
const maxImportBytes = 256 << 10

// atImport finds Claude Code's "@path" imports: an "@" at the start of a line or after a space or an
// opening bracket, then a path.
var atImport = lazyre.New("(?:^|[\\s(\\[])@([^\\s`()\\[\\]<>\"'@]+)")

// inlineCode matches a markdown code span, where "@path" is not an import.
var inlineCode = lazyre.New("`+[^`]*`+")

// followImports appends to a CLAUDE.md's content the files its "@path" lines import (see ScanWith), and
// returns the warnings about imports it did not follow, each naming the line ("line 4: ..." for the file
// itself, "docs/x.md:3: ..." for a file it imported).
func (s *scanner) followImports(r *root, f file, content []byte) ([]byte, []string) {
	var warnings []string
	out := append([]byte{}, content...)
	seen := map[string]bool{realPath(f.src): true}
	var visit func(from string, label func(int) string, body []byte, depth int)
	visit = func(from string, label func(int) string, body []byte, depth int) {
		fence := ""
		for i, line := range strings.Split(string(body), "\n") {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				switch {
				case fence == "":
					fence = t[:3]
				case strings.HasPrefix(t, fence):
					fence = ""
				}
				continue
			}
			if fence != "" {
				continue
			}
			for _, m := range atImport.Get().FindAllStringSubmatch(inlineCode.Get().ReplaceAllString(line, ""), -1) {
				ref := strings.TrimRight(m[1], ".,;:!?")
				if ref == "" {
					continue
				}
				warn := func(format string, args ...any) {
					warnings = append(warnings, label(i+1)+": @"+ref+": "+fmt.Sprintf(format, args...))
				}
				pathLike := strings.Contains(ref, "/") || path.Ext(ref) != ""
				if strings.HasPrefix(ref, "~") || filepath.IsAbs(ref) {
					warn("outside the repository (a file of one machine); kept as written, not imported")
					continue
				}
				target := filepath.Join(filepath.Dir(from), filepath.FromSlash(ref))
				real := realPath(target)
				fi, err := os.Stat(real)
				switch {
				case err != nil || !fi.Mode().IsRegular():
					if pathLike {
						warn("no such file; kept as written, not imported")
					}
					continue
				case !within(r.tree, real):
					warn("outside the imported tree; kept as written, not imported")
					continue
				}
				rel, _ := filepath.Rel(r.tree, real)
				rel = filepath.ToSlash(rel)
				switch {
				case underCheckout(rel):
					warn("inside .git/ or .context/; not imported")
					continue
				case r.inRoot && s.gitFiles != nil && !s.gitFiles[rel]:
					warn("a file git ignores; kept as written, not imported")
					continue
				case SecretName(real) != "":
					warn("%s; kept as written, not imported", SecretName(real))
					continue
				case fi.Size() > maxImportBytes:
					warn("larger than %d KiB; kept as written, not imported", maxImportBytes>>10)
					continue
				case seen[real]:
					continue
				case depth >= maxImportDepth:
					warn("imports nested deeper than %d levels; not imported", maxImportDepth)
					continue
				}
				data, err := os.ReadFile(real)
				if err != nil {
					warn("cannot read: %v; not imported", err)
					continue
				}
				if isExport(data) {
					continue
				}
				seen[real] = true
				if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
					out = append(out, '\n')
				}
				out = append(out, fmt.Sprintf("\n<!-- ctx: @%s -->\n", ref)...)
				out = append(out, data...)
				visit(real, func(n int) string { return fmt.Sprintf("%s:%d", rel, n) }, data, depth+1)
			}
		}
	}
	visit(f.src, func(n int) string { return fmt.Sprintf("line %d", n) }, content, 0)
	return out, warnings
}
