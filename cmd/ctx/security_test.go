package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestSecretsCLI: a public write holding a secret exits 2 with a message naming --allow-secret and
// writes nothing; --allow-secret (given anywhere on the line) and the private scope write it.
func TestSecretsCLI(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
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
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != tip {
		t.Fatalf("refused writes moved the context branch")
	}
	run(t, dir, 0, "knowledge", "set", "deploy", "-f", f, "--scope", "private")
	run(t, dir, 0, "knowledge", "set", "deploy-public", "-f", f, "--allow-secret")
	run(t, dir, 0, "--allow-secret", "convention", "set", "deploy", "-f", f)
	if got := testenv.Git(t, dir, "show", "ctx:knowledge/deploy-public.md"); !strings.Contains(got, "END OPENSSH PRIVATE KEY") {
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
		dir := testenv.NewRepo(t)
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

// TestTerminalEscapesSanitized: an entry or a decision's text holding terminal control sequences (OSC 52 writes
// the clipboard, CSI changes colours, a bidi override reorders text) prints them escaped in every human
// output; --json output stays valid JSON with the same text.
func TestTerminalEscapesSanitized(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	osc52 := "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
	nasty := "notes " + osc52 + " \x1b[31mred\x1b[0m \u009b2J \u202eevil\u202c\r tail\n"
	f := filepath.Join(t.TempDir(), "n.md")
	if err := os.WriteFile(f, []byte(nasty), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, 0, "knowledge", "set", "notes", "-f", f)
	run(t, dir, 2, "decision", "add", "Title "+osc52, "--context", "c") // a title is one line of text
	run(t, dir, 0, "decision", "add", "Title", "--context", "c "+osc52)
	raw := []string{"\x1b", "\x07", "\u009b", "\u202e", "\r"}
	for _, args := range [][]string{
		{"knowledge", "list"}, {"knowledge", "get", "notes"}, {"decision", "list"}, {"decision", "get", "1"},
		{"export"}, {"log", "-n", "5"}, {"status"},
	} {
		out, stderr, code := runCode(dir, "", args...)
		if code != 0 {
			t.Fatalf("ctx %v: exit %d %s", args, code, stderr)
		}
		for _, r := range raw {
			if strings.Contains(out, r) || strings.Contains(stderr, r) {
				t.Errorf("ctx %v prints %q raw:\n%q", args, r, out)
			}
		}
	}
	if out := run(t, dir, 0, "knowledge", "get", "notes"); !strings.Contains(out, `\u001b]52;c;`) {
		t.Errorf("the escaped sequence is not shown: %q", out)
	}
	var got struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal([]byte(run(t, dir, 0, "knowledge", "get", "notes", "--json")), &got); err != nil || got.Content != strings.TrimSuffix(nasty, "\n") { // -f: the file's final newline is no content
		t.Errorf("--json: %v, content %q, want %q", err, got.Content, strings.TrimSuffix(nasty, "\n"))
	}
}

// TestInvalidUTF8RefusedCLI: an argument or file that is not UTF-8 is refused (exit 2) with the offset of
// the bad byte, for a decision title as for an entry; nothing is written.
func TestInvalidUTF8RefusedCLI(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	for _, args := range [][]string{
		{"decision", "add", "Use caf\xe9"},
		{"decision", "add", "Use cafe", "--context", "\xff"},
		{"knowledge", "set", "k", "caf\xe9"},
		{"state", "set", "current_task", "caf\xe9"},
	} {
		_, stderr, code := runCode(dir, "", args...)
		if code != 2 || !strings.Contains(stderr, "not valid UTF-8") && !strings.Contains(stderr, "not UTF-8") {
			t.Errorf("ctx %q: exit %d, %q", args, code, stderr)
		}
	}
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != tip {
		t.Errorf("refused writes moved the context branch")
	}
}
