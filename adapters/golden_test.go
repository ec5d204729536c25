package adapters

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden")

// goldenCases are the work trees an export goes into: empty, holding the user's own instruction files
// (from the corpus) and a Cursor rule, the same with CRLF line endings, and the same with a BOM.
func goldenCases(t *testing.T) map[string]map[string]string {
	corpus := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "agents", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	user := map[string]string{
		"CLAUDE.md":                       corpus("superpowers/CLAUDE.md"),
		"AGENTS.md":                       corpus("trigger.dev/AGENTS.md"),
		"GEMINI.md":                       corpus("gemini-cli/GEMINI.md"),
		".github/copilot-instructions.md": corpus("superpowers/AGENTS.md"),
		".cursor/rules/repo.mdc":          "---\ndescription: Repository layout\nglobs:\nalwaysApply: true\n---\nThe web app lives in apps/webapp.\n",
	}
	crlf, bom := map[string]string{}, map[string]string{}
	for p, s := range user {
		crlf[p] = strings.ReplaceAll(s, "\n", "\r\n")
		if strings.HasSuffix(p, ".md") {
			bom[p] = "\ufeff" + s
		} else {
			bom[p] = s
		}
	}
	return map[string]map[string]string{"empty": {}, "user-text": user, "crlf": crlf, "bom": bom}
}

// TestGolden: the export of each client into each case is its golden file (testdata/golden/<case>/
// <client>.txtar; go test -run TestGolden -update rewrites them), the user's bytes are kept, a second
// export changes nothing, the import of the result is the inverse (it yields exactly the user's own
// files, no byte of ctx's), and PlanRemove gives back the work tree byte for byte.
func TestGolden(t *testing.T) {
	f := newFixture(t)
	c := f.content(t)
	c.Project = "demo" // the fixture's project name comes from a temporary folder's name
	ctx := context.Background()
	for name, files := range goldenCases(t) {
		for _, cl := range Clients {
			t.Run(name+"/"+cl.Name, func(t *testing.T) {
				root := t.TempDir()
				for p, s := range files {
					full := filepath.Join(root, filepath.FromSlash(p))
					if err := os.MkdirAll(filepath.Dir(full), 0o777); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				opts := Options{Root: root, StateDir: t.TempDir()}
				pl, err := PlanExport(ctx, opts, c, cl.Name)
				if err != nil {
					t.Fatal(err)
				}
				if err := pl.Apply(ctx); err != nil {
					t.Fatal(err)
				}
				got := archive(t, root, files)
				golden := filepath.Join("testdata", "golden", name, cl.Name+".txtar")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o777); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("export differs from %s; go test -run TestGolden -update, then review the diff", golden)
				}
				for p, s := range files {
					b, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
					if !bytes.HasPrefix(b, []byte(s)) {
						t.Fatalf("%s: the user's bytes were not kept", p)
					}
				}
				again, err := PlanExport(ctx, opts, c, cl.Name)
				if err != nil || len(again.Pending()) != 0 || len(again.Problems) != 0 {
					t.Fatalf("second export not a no-op: %v %+v %v", err, again.Pending(), again.Problems)
				}
				plan, err := ImportPlan(ctx, opts, nil, cl.Name)
				if err != nil {
					t.Fatal(err)
				}
				imported := map[string]string{}
				for _, it := range plan.Items {
					rel, _ := filepath.Rel(root, it.Source)
					imported[filepath.ToSlash(rel)] = string(it.Content)
				}
				wantImport := map[string]string{}
				for p, s := range files {
					if p == cl.Instructions || cl.Rules != "" && strings.HasPrefix(p, cl.Rules+"/") {
						wantImport[p] = s
					}
				}
				if len(imported) != len(wantImport) {
					t.Fatalf("import read %v, want the user's files %v", keys(imported), keys(wantImport))
				}
				for p, s := range wantImport {
					if imported[p] != s {
						t.Fatalf("import of %s is not the user's file", p)
					}
				}
				// And remove gives back the work tree as it was, byte for byte.
				rm, err := PlanRemove(ctx, opts, cl.Name)
				if err != nil {
					t.Fatal(err)
				}
				if err := rm.Apply(ctx); err != nil {
					t.Fatal(err)
				}
				if left := archive(t, root, files); len(left) != 0 {
					t.Fatalf("after remove, files differ from before the export:\n%s", left)
				}
				for p, s := range files {
					if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p))); err != nil || string(b) != s {
						t.Fatalf("%s not restored", p)
					}
				}
			})
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// archive is every file under root that is not the user's file as it was (before), as a txtar archive
// in path order.
func archive(t *testing.T, root string, before map[string]string) []byte {
	t.Helper()
	var a txtar.Archive
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if s, ok := before[filepath.ToSlash(rel)]; ok && s == string(b) {
			return nil
		}
		a.Files = append(a.Files, txtar.File{Name: filepath.ToSlash(rel), Data: b})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return txtar.Format(&a)
}
