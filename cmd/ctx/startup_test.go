package main_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// initLine is one line of GODEBUG=inittrace=1: "init <package> @<t> ms, <t> ms clock, <n> bytes, <n> allocs".
var initLine = regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs`)

// The binary's package initialisation does no heavy work (docs/architecture.md "Start-up"):
//   - santhosh-tekuri/jsonschema (linked through mcp-go) compiles its metaschemas on first use, not in
//     init (the go.mod replace with third_party/santhosh-tekuri-jsonschema; 1.7 MB allocated in init
//     before);
//   - mtibben/confusables builds its table of 6,300 code points on first use (the replace with
//     third_party/mtibben-confusables; 218 KB in init before);
//   - no package of ctx allocates more than 8 KiB or 32 times before main (their regular expressions
//     compile on first use: merge allocated 31 KB in 346 allocations before, store/tokens 27 KB,
//     cmd/ctx/app 21 KB);
//   - no package allocates more than 512 KiB before main.
func TestInitIsLight(t *testing.T) {
	cmd := exec.Command(ctxBin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ctx --version: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	ours := 0
	for _, m := range initLine.FindAllStringSubmatch(string(out), -1) {
		pkg := m[1]
		n, _ := strconv.Atoi(m[2])
		allocs, _ := strconv.Atoi(m[3])
		switch {
		case pkg == "github.com/santhosh-tekuri/jsonschema/v6":
			seen[pkg] = true
			if n > 64<<10 {
				t.Errorf("%s allocates %d bytes at init: the metaschemas compile before main again", pkg, n)
			}
		case pkg == "github.com/mtibben/confusables":
			seen[pkg] = true
			if n > 4<<10 {
				t.Errorf("%s allocates %d bytes at init: its table is built before main again", pkg, n)
			}
		case strings.HasPrefix(pkg, "github.com/ctx-dev/ctx/"):
			ours++
			if n > 8<<10 || allocs > 32 {
				t.Errorf("ctx's package %s allocates %d bytes in %d allocations at init (a regular expression "+
					"compiled at package level? use internal/lazyre or sync.OnceValue)", pkg, n, allocs)
			}
		}
		if n > 512<<10 {
			t.Errorf("package %s allocates %d bytes at init", pkg, n)
		}
	}
	if ours < 5 {
		t.Errorf("inittrace lists %d packages of ctx:\n%s", ours, out)
	}
	for _, pkg := range []string{"github.com/santhosh-tekuri/jsonschema/v6", "github.com/mtibben/confusables"} {
		if !seen[pkg] {
			t.Logf("%s is no longer linked", pkg)
		}
	}
}

// TestNoRegexpAtInit: no package-level variable of ctx's own code (outside tests, third_party and the
// benchmark drivers) compiles a regular expression: it would run in every process, before main. Compile
// on first use with internal/lazyre or sync.OnceValue (docs/architecture.md "Start-up").
func TestNoRegexpAtInit(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case "third_party", "bench", "testdata", "node_modules", ".git", "bin":
				return filepath.SkipDir
			}
			if d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			ast.Inspect(gd, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // runs when called, not at init
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "regexp" && strings.HasPrefix(sel.Sel.Name, "MustCompile") {
							t.Errorf("%s: regexp.%s at package level runs at init", fset.Position(n.Pos()), sel.Sel.Name)
						}
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files under %s", files, root)
	}
}
