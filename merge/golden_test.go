package merge

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// dump renders a Result as text: every file, then notes (golden format).
func dump(r Result) string {
	var b strings.Builder
	paths := make([]string, 0, len(r.Files))
	for p := range r.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		c := string(r.Files[p])
		fmt.Fprintf(&b, "=== %s\n%s", p, c)
		if !strings.HasSuffix(c, "\n") {
			b.WriteString("\n=== (no final newline)\n")
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "=== note %s %s: %s\n", n.Path, n.Kind, n.Message)
	}
	return b.String()
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/merge")

const goldenDir = "../testdata/merge"

// readTree reads a directory into Files (slash-separated paths).
func readTree(t testing.TB, dir string) Files {
	t.Helper()
	f := Files{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return f
}

// TestGolden merges each testdata/merge/<case>/{base,ours,theirs} tree and
// compares the result with <case>/want.txt (go test ./merge -update
// rewrites them). The cases use real ADRs and SKILL.md files from the
// corpus (see testdata/merge/README.md).
func TestGolden(t *testing.T) {
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(goldenDir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			base := readTree(t, filepath.Join(dir, "base"))
			ours := readTree(t, filepath.Join(dir, "ours"))
			theirs := readTree(t, filepath.Join(dir, "theirs"))
			r := treeBoth(t, base, ours, theirs)
			got := dump(r)
			want := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if string(w) != got {
				t.Errorf("merge of %s differs from want.txt (run go test ./merge -update and review the diff):\n%s", e.Name(), got)
			}
			checkInvariants(t, base, ours, theirs, r)
		})
	}
	if n == 0 {
		t.Fatal("no golden cases")
	}
}
