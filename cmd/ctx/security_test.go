package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore/gitstoretest"
)

// TestSecretsCLI: a public write holding a secret exits 2 with a message naming --allow-secret and
// writes nothing; --allow-secret (given anywhere on the line) and the private scope write it.
func TestSecretsCLI(t *testing.T) {
	dir := gitstoretest.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	tip := gitstoretest.Git(t, dir, "rev-parse", "ctx")
	key := "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n" + strings.Repeat("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n", 4) +
		"-----END OPENSSH PRIVATE KEY-----\n"
	f := filepath.Join(t.TempDir(), "key.md")
	if err := os.WriteFile(f, []byte("the deploy key:\n"+key), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCode(dir, "", "knowledge", "set", "deploy", "-f", f)
	if code != 2 || !strings.Contains(stderr, "--allow-secret") || !strings.Contains(stderr, "private-key") || strings.Contains(stderr, "b3BlbnNz") {
		t.Fatalf("exit %d, stderr %q: want 2 and a message naming the rule and --allow-secret, without the key", code, stderr)
	}
	_, stderr, code = runCode(dir, "", "decision", "add", "Deploy", "--context", "key: "+key)
	if code != 2 || !strings.Contains(stderr, "--allow-secret") {
		t.Fatalf("decision add: exit %d, %q", code, stderr)
	}
	if got := gitstoretest.Git(t, dir, "rev-parse", "ctx"); got != tip {
		t.Fatalf("refused writes moved the context branch")
	}
	run(t, dir, 0, "knowledge", "set", "deploy", "-f", f, "--scope", "private")
	run(t, dir, 0, "knowledge", "set", "deploy-public", "-f", f, "--allow-secret")
	run(t, dir, 0, "--allow-secret", "convention", "set", "deploy", "-f", f)
	if got := gitstoretest.Git(t, dir, "show", "ctx:knowledge/deploy-public.md"); !strings.Contains(got, "END OPENSSH PRIVATE KEY") {
		t.Errorf("--allow-secret did not write the entry:\n%s", got)
	}
}

// TestCorpusImportsWithoutSecretRefusal: the real corpus (ADRs, skills, agent files, conventions) imports
// into the public scope with no secret refusal: the detector's false positives are measured on it.
func TestCorpusImportsWithoutSecretRefusal(t *testing.T) {
	roots := []string{corpus(t)}
	// The full corpus: the project's shared folder beside the repository, when there.
	for _, shared := range []string{"../../../shared/corpus", "/work/shared/corpus"} {
		if _, err := os.Stat(shared); err == nil {
			abs, _ := filepath.Abs(shared)
			roots = append(roots, abs)
			break
		}
	}
	for _, root := range roots {
		dir := gitstoretest.NewRepo(t)
		run(t, dir, 0, "init", "--no-hooks")
		var args []string
		for _, d := range []string{"adr", "skills", "agents", "conventions"} {
			if _, err := os.Stat(filepath.Join(root, d)); err == nil {
				args = append(args, filepath.Join(root, d))
			}
		}
		out, stderr, code := runCode(dir, "", append([]string{"import"}, args...)...)
		if code != 0 || strings.Contains(stderr, "secret") {
			t.Fatalf("import of %s: exit %d\n%s\n%s", root, code, out, stderr)
		}
		t.Logf("%s: %s", root, strings.TrimSpace(out))
	}
}
