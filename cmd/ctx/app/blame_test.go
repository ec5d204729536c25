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
	run := runIn(dir)
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

// TestBlameCLICodexAndPossible: through `ctx blame` and the providers' own history folders, the Codex
// commit-receipt fixture proves the commit it names (with the Codex session and event), and the Claude
// sample session without its receipt (a person committed its edit) makes those lines possible, never
// proven.
func TestBlameCLICodexAndPossible(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	claude, codex := t.TempDir(), t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	t.Setenv("CODEX_HOME", codex)
	run := runIn(dir)
	writeFile := func(p, text string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(dir, "hello.py"), "def hello():\n    return 'Hello, World!'\n")
	testenv.Git(t, dir, "add", "hello.py")
	testenv.Git(t, dir, "commit", "-q", "-m", "a person commits the agent's edit")
	writeFile(filepath.Join(dir, "engine.go"), "package engine\n\nfunc Run() {}\n")
	testenv.Git(t, dir, "add", "engine.go")
	testenv.Git(t, dir, "commit", "-q", "-m", "committed by codex")
	oid := testenv.Git(t, dir, "rev-parse", "HEAD")

	raw, err := os.ReadFile(filepath.Join(corpus, "codex/ctxrs/current_exec_repository_evidence.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(raw), "__WORKDIR__", dir), "__OID_PREFIX__", oid[:7])
	const thread = "019fb000-0000-7000-8000-00000000c001"
	writeFile(filepath.Join(codex, "sessions", "2026", "08", "15", "rollout-2026-08-15T19-45-00-"+thread+".jsonl"), text)
	raw, err = os.ReadFile(filepath.Join(corpus, "claude-code/claude-code-transcripts/sample_session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.Contains(l, "toolu_002") { // the sample's `git commit` and its receipt
			keep = append(keep, l)
		}
	}
	writeFile(filepath.Join(claude, "projects", "-proj", "test-session-id.jsonl"), strings.ReplaceAll(strings.Join(keep, "\n"), "/project", dir))

	out, e, code := run("blame", "engine.go", "--json")
	var res blame.FileResult
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("blame engine.go: %d %s %s", code, out, e)
	}
	ev := res.Commits[0].Evidence[0]
	if res.Outcome != blame.Proven || res.Coverage != (blame.Coverage{Lines: 3, Proven: 3}) || ev.Kind != blame.KindReceipt ||
		ev.Provider != history.Codex || ev.NativeSessionID != thread || res.Commits[0].Sessions[0] != history.SessionID(history.Codex, thread) {
		t.Fatalf("codex receipt: %+v", res)
	}
	if out, _, code := run("history", "show", "event", ev.EventID, "--window", "1"); code != ExitOK || !strings.Contains(out, oid[:7]) {
		t.Errorf("show event %s: %d %q", ev.EventID, code, out)
	}
	out, e, code = run("blame", "hello.py", "--json", "--no-import")
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("blame hello.py: %d %s %s", code, out, e)
	}
	if res.Outcome != blame.Possible || res.Coverage != (blame.Coverage{Lines: 2, Possible: 2}) ||
		res.Commits[0].Evidence[0].Kind != blame.KindEdit || res.Commits[0].Evidence[0].Tool != "Write" {
		t.Errorf("possible: %+v", res)
	}
}
