package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestCodexDiscoveryOnlySessions: the Codex app's worktrees under ~/.codex/worktrees are
// not walked, so a root holding more files than the discovery bound there still imports a new session;
// and when a root's walk does fail (the bound hit under sessions/), the import exits 1 after importing
// the rest, names the root, and sources --json carries the error on the root's row and as an issue until
// an import walks it again.
func TestCodexDiscoveryOnlySessions(t *testing.T) {
	corpus := historyCorpus(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	defer history.SetDiscoveryBound(20)()
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	codex := filepath.Join(home, ".codex")
	day := filepath.Join(codex, "sessions", "2026", "05", "11")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(corpus, "codex", "codemie", "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, filepath.Base(src)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(codex, "worktrees", "a1b2", "proj", "node_modules", "pkg")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(wt, fmt.Sprintf("f%03d.js", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, e, code := run("history", "import", "--provider", "codex")
	if code != ExitOK || !strings.Contains(out, "1 imported") || e != "" {
		t.Fatalf("import with a big worktree: exit %d, %q, %q", code, out, e)
	}

	// The bound hit where sessions are: exit 1, the error named, recorded for sources.
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(day, fmt.Sprintf("note%03d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, e, code = run("history", "import", "--json")
	if code != ExitFailure || !strings.Contains(e, "could not be walked") || !strings.Contains(e, "more than 20 files") {
		t.Fatalf("import over the bound: exit %d, %q", code, e)
	}
	var st history.ImportStats
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.DiscoveryErrors) != 1 || st.DiscoveryErrors[0].Provider != history.Codex {
		t.Fatalf("import --json: %v %+v", err, st.DiscoveryErrors)
	}
	type sources struct {
		Sources []struct {
			Provider, Root, Error string
		}
		Issues []struct{ Code, Provider, Message string }
	}
	read := func() (string, bool) {
		out, e, code := run("history", "sources", "--json")
		if code != ExitOK {
			t.Fatalf("sources --json: %d %s", code, e)
		}
		var s sources
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		rowErr := ""
		for _, r := range s.Sources {
			if r.Provider == "codex" {
				rowErr = r.Error
			}
		}
		issue := false
		for _, i := range s.Issues {
			issue = issue || (i.Code == "discovery_failed" && i.Provider == "codex")
		}
		return rowErr, issue
	}
	if rowErr, issue := read(); !strings.Contains(rowErr, "more than 20 files") || !issue {
		t.Fatalf("sources --json after the failed walk: row error %q, issue %v", rowErr, issue)
	}
	for i := range 30 {
		os.Remove(filepath.Join(day, fmt.Sprintf("note%03d.txt", i)))
	}
	if _, e, code := run("history", "import"); code != ExitOK {
		t.Fatalf("import after the cleanup: %d %s", code, e)
	}
	if rowErr, issue := read(); rowErr != "" || issue {
		t.Fatalf("sources --json after a good walk: row error %q, issue %v", rowErr, issue)
	}
}

// TestDiscoveryErrorForgottenWithItsRoot: the discovery error of a configured root that
// could not be walked stays while the root does (an import of one provider keeps it), and leaves
// `sources` when the root is removed and an import walks every root: it stayed for ever.
func TestDiscoveryErrorForgottenWithItsRoot(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	defer history.SetDiscoveryBound(20)()
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	many := filepath.Join(t.TempDir(), "many")
	if err := os.MkdirAll(filepath.Join(many, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(many, "proj", fmt.Sprintf("s%03d.jsonl", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, e, code := run("history", "sources", "add", "--provider", "claude-code", "--path", many, "--root", "m"); code != ExitOK {
		t.Fatalf("add: %d %s", code, e)
	}
	if _, e, code := run("history", "import"); code != ExitFailure || !strings.Contains(e, "more than 20 files") {
		t.Fatalf("import over the bound: exit %d %q", code, e)
	}
	failed := func() bool {
		out, e, code := run("history", "sources", "--json")
		if code != ExitOK {
			t.Fatalf("sources --json: %d %s", code, e)
		}
		var s struct {
			Issues []struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		for _, i := range s.Issues {
			if i.Code == "discovery_failed" && strings.Contains(i.Message, many) {
				return true
			}
		}
		return false
	}
	if !failed() {
		t.Fatal("no discovery_failed issue after the failed walk")
	}
	if _, e, code := run("history", "import", "--provider", "codex"); code != ExitOK || !failed() {
		t.Fatalf("an import of another provider: exit %d %q, issue kept %v", code, e, failed())
	}
	if _, e, code := run("history", "sources", "remove", "m"); code != ExitOK {
		t.Fatalf("remove: %d %s", code, e)
	}
	if _, e, code := run("history", "import"); code != ExitOK {
		t.Fatalf("import after the removal: %d %s", code, e)
	}
	if failed() {
		t.Fatal("the removed root's discovery_failed issue stayed")
	}
}
