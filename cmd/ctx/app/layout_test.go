package app

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestLayoutPage keeps docs/layout.md true: every leaf command has a row, and the file of each row
// declares the functions the row names.
func TestLayoutPage(t *testing.T) {
	page, err := os.ReadFile("../../../docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(ctx [^`]+)` \\| `([a-z]+\\.go)` \\| `(\\w+)` \\| `(\\w+)` \\|")
	rows := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		rows[m[1]] = m[2:]
	}
	a := newApp(newEnv(IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}))
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			p := path + " " + c.Name
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
				if c.Action == nil { // a group only; one that also runs (ctx history sources) has its row
					continue
				}
			}
			if _, ok := rows[p]; !ok {
				t.Errorf("docs/layout.md has no row for `%s`", p)
			}
			delete(rows, p)
		}
	}
	walk("ctx", a.Commands)
	for p := range rows {
		t.Errorf("docs/layout.md lists `%s`, which is no command", p)
	}
	decls := map[string]map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		file, funcs := m[2], m[3:]
		if decls[file] == nil {
			decls[file] = map[string]bool{}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Errorf("`%s`: %v", m[1], err)
				continue
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					decls[file][fd.Name.Name] = true
				}
			}
		}
		for _, fn := range funcs {
			if !decls[file][fn] {
				t.Errorf("docs/layout.md: `%s`: %s declares no function %s", m[1], file, fn)
			}
		}
	}
}
