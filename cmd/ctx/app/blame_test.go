package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/blame"
	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestBlameCLI: the Claude sample session (from the corpus) committed hello.py in a real repository; the
// transcript sits where Claude Code keeps it, so ctx blame imports it and proves the lines, cites the receipt
// event (which ctx history show event opens), and says none for a person's line.
func TestBlameCLI(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	claude := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	t.Setenv("CODEX_HOME", filepath.Join(t.TempDir(), "none"))
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte("def hello():\n    return 'Hello, World!'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "hello.py")
	testenv.Git(t, dir, "commit", "-q", "-m", "Add hello function")
	oid := testenv.Git(t, dir, "rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte("def hello():\n    return 'Hello, World!'\n# a person's line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "commit", "-q", "-am", "by hand")

	raw, err := os.ReadFile(filepath.Join(corpus, "claude-code/claude-code-transcripts/sample_session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(raw), "abc1234", oid[:7]), "/project", dir)
	if err := os.MkdirAll(filepath.Join(claude, "projects", "-proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(claude, "projects", "-proj", "test-session-id.jsonl"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}

	out, e, code := run("blame", "hello.py:1-3", "--json")
	if code != ExitOK {
		t.Fatalf("blame: %d %s", code, e)
	}
	var res blame.FileResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	sid := history.SessionID(history.ClaudeCode, "test-session-id")
	if res.Coverage != (blame.Coverage{Lines: 3, Proven: 2, None: 1}) || res.Commits[0].Sessions[0] != sid {
		t.Fatalf("blame: %+v", res)
	}
	ev := res.Commits[0].Evidence[0].EventID
	out, _, code = run("blame", "hello.py")
	if code != ExitOK || !strings.Contains(out, "ctx history show event "+ev) || !strings.Contains(out, "none") || !strings.Contains(out, "proven") {
		t.Errorf("text: %d %q", code, out)
	}
	out, _, code = run("history", "show", "event", ev, "--window", "1")
	if code != ExitOK || !strings.Contains(out, "[main "+oid[:7]+"] Add hello function") {
		t.Errorf("show event: %d %q", code, out)
	}
	out, _, code = run("blame", oid[:9], "--no-import", "--json")
	var cr blame.CommitResult
	if code != ExitOK || json.Unmarshal([]byte(out), &cr) != nil || cr.Outcome != blame.Proven || cr.Commit != oid {
		t.Errorf("commit: %d %q", code, out)
	}
	for _, args := range [][]string{{"blame", "nothing-here"}, {"blame", "hello.py:7-9"}, {"blame", "../x.py:1"}, {"blame", "--commit", "--upload-pack=x"}} {
		if _, e, code := run(args...); code != ExitUsage {
			t.Errorf("%v: exit %d %s", args, code, e)
		}
	}
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"ctx", "-C", t.TempDir(), "blame", "x.go"}, IO{In: strings.NewReader(""), Out: &errb, Err: &errb}); code != ExitNoStore {
		t.Errorf("outside a repository: exit %d %s", code, errb.String())
	}
}
