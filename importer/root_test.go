package importer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanWithRoot: inside a repository, keys and paths come from the path relative to its root however
// the path was given; .context/, ctx's export, files git ignores and links out of the tree are never
// read; secrets by name are flagged; a CLAUDE.md's @imports are followed inside the tree only.
func TestScanWithRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "clone-with-any-name")
	outside := filepath.Join(base, "elsewhere")
	writeTree(t, outside, map[string]string{"notes.md": "OUTSIDE\n"})
	writeTree(t, root, map[string]string{
		".context/decisions/0001-x.md": "# 1. X\n",
		".context/knowledge/agents.md": "x\n",
		".cursor/rules/go.mdc":         "---\ndescription: Go\n---\nUse gofmt.\n",
		".claude/commands/review.md":   "Review.\n",
		"AGENTS.md":                    ExportHeader + "exported\n",
		"CLAUDE.md":                    "Rules.\n@docs/arch.md\n`@docs/not-an-import.md`\n@../elsewhere/notes.md\nping @alice\n@.env\n",
		"docs/arch.md":                 "Hexagonal.\n@more.md\n",
		"docs/more.md":                 "Nested.\n",
		"docs/adr/0001-a.md":           "# 1. A\n\n## Status\n\nAccepted\n",
		"CONTRIBUTING.md":              "Use PRs.\n",
		"build/CLAUDE.md":              "ignored\n",
		"conventions/.env":             "KEY=1\n",
		"conventions/id_rsa.md":        "-----BEGIN\n",
		".env":                         "SECRET=1\n",
	})
	if err := os.Symlink(filepath.Join(outside, "notes.md"), filepath.Join(root, "docs/adr/0002-out.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../.context/decisions/0001-x.md", filepath.Join(root, "docs/adr/0003-ctx.md")); err != nil {
		t.Fatal(err)
	}
	// What git lists: everything except build/ (ignored) and .context/ (excluded).
	var gitFiles []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || strings.HasPrefix(rel, "build/") || strings.HasPrefix(rel, ".context/") {
			return nil
		}
		gitFiles = append(gitFiles, rel)
		return nil
	})
	opts := Options{Root: root, GitFiles: gitFiles}
	p, err := ScanWith(context.Background(), opts, root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Item{}
	for _, it := range p.Items {
		got[it.Path] = it
	}
	warnings := strings.Join(p.Warnings, "\n")
	for path, key := range map[string]string{".cursor/rules/go.mdc": "cursor-rules-go", ".claude/commands/review.md": "claude-commands-review",
		"CLAUDE.md": "claude", "CONTRIBUTING.md": "contributing", "conventions/id_rsa.md": "id_rsa"} {
		if got[path].Key != key {
			t.Errorf("%s: key %q, want %q", path, got[path].Key, key)
		}
	}
	for _, never := range []string{".context/decisions/0001-x.md", "AGENTS.md", "build/CLAUDE.md", "docs/adr/0002-out.md", "docs/adr/0003-ctx.md"} {
		if _, ok := got[never]; ok {
			t.Errorf("%s was imported", never)
		}
	}
	for _, w := range []string{"AGENTS.md: written by ctx export", "0002-out.md: a symbolic link", "outside the imported tree", "0003-ctx.md: a symbolic link into .git/ or .context/"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("no warning %q:\n%s", w, warnings)
		}
	}
	if s := got["conventions/id_rsa.md"].Secret; s == "" {
		t.Error("id_rsa.md not flagged as a secret")
	}
	claude := got["CLAUDE.md"]
	c := string(claude.Content)
	if !strings.HasPrefix(c, "Rules.\n@docs/arch.md\n") || !strings.Contains(c, "<!-- ctx: @docs/arch.md -->\nHexagonal.") ||
		!strings.Contains(c, "<!-- ctx: @more.md -->\nNested.") || strings.Contains(c, "OUTSIDE") || strings.Contains(c, "SECRET") ||
		strings.Contains(c, "not-an-import") && strings.Count(c, "not-an-import") > 1 {
		t.Errorf("CLAUDE.md content:\n%s", c)
	}
	cw := strings.Join(claude.Warnings, "\n")
	for _, w := range []string{"line 4: @../elsewhere/notes.md: outside the imported tree", "line 6: @.env: "} {
		if !strings.Contains(cw, w) {
			t.Errorf("CLAUDE.md warnings lack %q:\n%s", w, cw)
		}
	}
	if strings.Contains(cw, "alice") {
		t.Errorf("a mention was taken for an import:\n%s", cw)
	}

	// The same files named another way get the same keys and paths.
	p2, err := ScanWith(context.Background(), opts, filepath.Join(root, ".cursor", "rules"), filepath.Join(root, ".cursor", "rules", "go.mdc"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Items) != 1 || p2.Items[0].Key != "cursor-rules-go" || p2.Items[0].Path != ".cursor/rules/go.mdc" {
		t.Errorf("scan of .cursor/rules: %+v", p2.Items)
	}
	// An ignored folder or .context given by name: nothing, with a warning.
	p3, err := ScanWith(context.Background(), opts, filepath.Join(root, "build"), filepath.Join(root, ".context"))
	if err != nil || len(p3.Items) != 0 || len(p3.Warnings) != 2 {
		t.Errorf("ignored folders: %+v %v", p3, err)
	}
}

func TestSecretName(t *testing.T) {
	for name, secret := range map[string]bool{
		".env": true, ".env.local": true, ".env.example": false, "id_rsa": true, "id_rsa.pub": false, "server.pem": true,
		"tls.key": true, "credentials.json": true, "credentials": true, "secrets.yaml": true, ".netrc": true,
		"README.md": false, "keys.md": false, "CLAUDE.md": false, "0001-use-keys.md": false,
	} {
		if got := SecretName(name) != ""; got != secret {
			t.Errorf("SecretName(%q) = %q", name, SecretName(name))
		}
	}
}
