package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/mcp/searchpage"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON"}

// formatFlag is jsonFlag's other spelling for `ctx status` and `ctx sources` (docs/history.md "CLI"): --format text or json.
var formatFlag = &cli.StringFlag{Name: "format", Value: "text", Usage: "`FORMAT`: text or json (json is --json)"}

// jsonOrFormat is whether a command with jsonFlag and formatFlag prints JSON: --json, or --format json.
// Another --format value is a usage error.
func jsonOrFormat(c *cli.Context) (bool, error) {
	switch c.String("format") {
	case "text":
		return c.Bool("json"), nil
	case "json":
		return true, nil
	}
	return false, usagef("--format is text or json")
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printOut prints v as JSON to standard output when asJSON, else calls text.
func (e *env) printOut(asJSON bool, v any, text func()) error {
	if asJSON {
		return printJSON(e.stdout, v)
	}
	text()
	return nil
}

// table returns a tabwriter for a list: cells separated by tabs, each column as wide as its longest cell
// plus two spaces. Call Flush when done. What is written to it is escaped first as the sanitizer would
// (tableText), so that columns are measured on what is shown: a raw byte 0xFF (invalid UTF-8, from a
// teammate's plain-git commit) is tabwriter's Escape character and would turn the padding of every row
// after it into raw tabs.
func table(w io.Writer) *tableWriter {
	return &tableWriter{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

// tableWriter is a tabwriter.Writer whose input is tableText.
type tableWriter struct{ *tabwriter.Writer }

func (t *tableWriter) Write(p []byte) (int, error) {
	if _, err := t.Writer.Write(tableText(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// tableText is p with invalid UTF-8 bytes written as \xFF and the characters the sanitizer escapes
// (unsafeRune, tab and newline kept: they are the table's) as \uXXXX, the sanitizer's own forms.
func tableText(p []byte) []byte {
	if utf8.Valid(p) && !bytes.ContainsFunc(p, func(r rune) bool { return r != '\t' && r != '\n' && r != '\r' && unsafeRune(r) }) {
		return p
	}
	var out bytes.Buffer
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&out, `\x%02X`, p[i])
		case r != '\t' && r != '\n' && r != '\r' && unsafeRune(r):
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			out.Write(p[i : i+n])
		}
		i += n
	}
	return out.Bytes()
}

// plural is "1 knowledge entry", "2 knowledge entries": n and the singular or the plural form.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// commitLine prints what a write did: the commit, or that nothing changed.
func commitLine(w io.Writer, what string, c *store.Committed) {
	if c == nil || !c.Changed() {
		fmt.Fprintf(w, "%s: unchanged, no commit\n", what)
		return
	}
	for _, sc := range store.Scopes {
		if h, ok := c.Commits[sc]; ok {
			fmt.Fprintf(w, "%s: committed %s (%s)\n", what, h.String()[:12], sc)
		}
	}
}

// oneCell is s as one cell of a line of output: a newline, carriage return or tab is written as the two
// characters \n, \r or \t, so a value from a fetched branch (a decision title, a member name, a task
// written by a teammate's tool or an older ctx) can neither start a forged row nor shift a column. The
// other control characters are escaped by the sanitizer every output goes through (sanitize.go).
func oneCell(s string) string { return searchpage.OneLine(s) }

// firstLine is the first line of s with text (front matter fences skipped), cut to 80 characters.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "---" {
			if r := []rune(l); len(r) > 80 {
				l = string(r[:77]) + "..."
			}
			return oneCell(l)
		}
	}
	return ""
}

// indent indents every line of s by four spaces.
func indent(s string) string {
	if s == "" {
		return ""
	}
	s = "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ")
	return s + "\n"
}

// requireFlags returns the usage error of urfave/cli's Required for the first of names not given.
func requireFlags(c *cli.Context, names ...string) error {
	for _, n := range names {
		if !c.IsSet(n) {
			return usagef("Required flag %q not set", n)
		}
	}
	return nil
}
