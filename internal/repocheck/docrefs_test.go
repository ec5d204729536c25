package repocheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the root of this repository (two folders up from this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// runScript runs a script of scripts/ in dir and returns its combined output and whether it succeeded.
func runScript(t *testing.T, dir, script string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(dir, "scripts", script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run %s: %v", script, err)
	}
	return string(out), err == nil
}

func TestDocRefsCleanHere(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if out, ok := runScript(t, repoRoot(t), "check-doc-refs.sh"); !ok {
		t.Fatalf("check-doc-refs.sh fails on this repository:\n%s", out)
	}
}

// TestDocRefsFindsCitations runs the script on a repository of its own whose Go files cite documents
// outside it: each citation is reported with its file and line, and a clean file is not.
func TestDocRefsFindsCitations(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "check-doc-refs.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// The citations are split so that this file does not cite anything itself.
	files := map[string]string{
		"scripts/check-doc-refs.sh": string(script),
		"a/design.go":               "package a\n\n// Write is one commit (design " + "§3).\nfunc Write() {}\n",
		"b/seed.go":                 "package b\n\n// Shape of seed " + "002's output.\ntype T struct{}\n",
		"c/issue.go":                "package c\n\n// Fixed in issue " + "#4.\nvar X = 1\n",
		"d/issue_test.go":           "package d\n\n// As issue " + "3 asks.\nvar Y = 2\n",
		"e/clean.go":                "package e\n\n// See docs/merge.md; issue_ref is a field; a seed of math/rand.\nvar Z = 3\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, ok := runScript(t, dir, "check-doc-refs.sh")
	if ok {
		t.Fatalf("check-doc-refs.sh passed a repository citing outside documents:\n%s", out)
	}
	for _, want := range []string{"a/design.go:3:", "b/seed.go:3:", "c/issue.go:3:", "d/issue_test.go:3:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not name %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "e/clean.go") {
		t.Errorf("a clean file was reported:\n%s", out)
	}
}
