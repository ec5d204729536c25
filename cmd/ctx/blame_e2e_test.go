package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/blame"
	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestBlameHookNotesTravel: with ctx hooks install --blame, a commit made from a shell that carries an
// agent's session variable gets a note on refs/notes/ctx (the commit message unchanged), a person's commit
// none; ctx push carries the notes, and a second clone that never had the transcript proves the agent's
// lines after ctx pull, and says none for the person's.
func TestBlameHookNotesTravel(t *testing.T) {
	hooksOnALoadedMachine(t)
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init")
	out := mustCtx(t, a, nil, 0, "hooks", "install", "--blame").stdout
	if !strings.Contains(out, "post-commit") || !strings.Contains(hookFile(t, a, "post-commit"), "\"$ctx_bin\" hooks run post-commit") {
		t.Fatalf("hooks install --blame: %s", out)
	}
	const thread = "019d1afb-b2c7-72d3-b240-f3ee9d31b2c9"
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(a, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.GitEnv(t, a, nil, "add", name)
	}
	write("agent.go", "package main\n\nfunc agent() string { return \"written by codex\" }\n")
	testenv.GitEnv(t, a, []string{"CODEX_THREAD_ID=" + thread, "CLAUDE_CODE_SESSION_ID="}, "commit", "-qm", "agent's change")
	agentCommit := testenv.GitEnv(t, a, nil, "rev-parse", "HEAD")
	write("human.go", "package main\n\nfunc human() {}\n")
	testenv.GitEnv(t, a, []string{"CODEX_THREAD_ID=", "CLAUDE_CODE_SESSION_ID=", "CTX_SESSION="}, "commit", "-qm", "by hand")

	if msg := testenv.GitEnv(t, a, nil, "log", "-1", "--format=%B", agentCommit); msg != "agent's change" {
		t.Errorf("the commit message changed: %q", msg)
	}
	note := testenv.GitEnv(t, a, nil, "notes", "--ref=refs/notes/ctx", "show", agentCommit)
	if !strings.Contains(note, "session: "+thread) || !strings.Contains(note, "env: CODEX_THREAD_ID") {
		t.Fatalf("note: %q", note)
	}
	if _, err := testenv.GitErr(a, "notes", "--ref=refs/notes/ctx", "show", "HEAD"); err == nil {
		t.Errorf("the person's commit got a note")
	}

	testenv.GitEnv(t, a, nil, "push", "-q", "origin", "main")
	if out := mustCtx(t, a, nil, 0, "push").stdout; !strings.Contains(out, "refs/notes/ctx") {
		t.Errorf("ctx push did not push the notes: %s", out)
	}
	if got := testenv.GitEnv(t, remote, nil, "notes", "--ref=refs/notes/ctx", "show", agentCommit); got != note {
		t.Errorf("remote's note: %q", got)
	}

	b := cloneURL(t, remote, "b")
	mustCtx(t, b, nil, 0, "pull")
	var res blame.FileResult
	if err := json.Unmarshal([]byte(mustCtx(t, b, nil, 0, "blame", "agent.go", "--json").stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != blame.Proven || res.Coverage != (blame.Coverage{Lines: 3, Proven: 3}) ||
		res.Commits[0].Evidence[0].Kind != blame.KindNote || res.Commits[0].Sessions[0] != history.SessionID(history.Codex, thread) {
		t.Errorf("blame on the second clone: %+v", res)
	}
	if err := json.Unmarshal([]byte(mustCtx(t, b, nil, 0, "blame", "human.go:1-3", "--json").stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != blame.None {
		t.Errorf("the person's lines: %+v", res)
	}

	// A note written on b (another agent amending nothing: a second record on the same commit) merges with
	// a's notes through the remote.
	testenv.GitEnv(t, b, nil, "notes", "--ref=refs/notes/ctx", "append", "-m", blame.NoteText(blame.NoteRecord{Agent: "claude-code", Session: "s-b", Env: "CLAUDE_CODE_SESSION_ID"}), agentCommit)
	testenv.GitEnv(t, a, nil, "notes", "--ref=refs/notes/ctx", "append", "-m", blame.NoteText(blame.NoteRecord{Agent: "codex", Session: "s-a", Env: "CODEX_THREAD_ID"}), "HEAD")
	mustCtx(t, a, nil, 0, "push")
	mustCtx(t, b, nil, 0, "push") // the remote's notes moved: b merges them and pushes
	mustCtx(t, a, nil, 0, "pull")
	for _, dir := range []string{a, b} {
		n := testenv.GitEnv(t, dir, nil, "notes", "--ref=refs/notes/ctx", "show", agentCommit)
		if !strings.Contains(n, "session: s-b") || !strings.Contains(n, "session: "+thread) {
			t.Errorf("%s: merged note %q", dir, n)
		}
		if n := testenv.GitEnv(t, dir, nil, "notes", "--ref=refs/notes/ctx", "show", "HEAD"); !strings.Contains(n, "session: s-a") {
			t.Errorf("%s: note on HEAD %q", dir, n)
		}
	}
	mustCtx(t, a, nil, 0, "hooks", "uninstall")
	if hookFile(t, a, "post-commit") != "" {
		t.Errorf("post-commit left after uninstall")
	}
}

// TestBlameHookFollowsRewrites: ctx hooks install --blame makes git copy refs/notes/ctx on rewrite
// (notes.rewriteRef), so an agent's commit stays proven after a person's `git commit --amend` and
// `git rebase`; ctx's post-rewrite hook records the origin of each rewritten commit (also one without a
// note, for receipts); ctx hooks uninstall gives the config file back its bytes.
func TestBlameHookFollowsRewrites(t *testing.T) {
	hooksOnALoadedMachine(t)
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init")
	cfg := filepath.Join(a, ".git", "config")
	before, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustCtx(t, a, nil, 0, "hooks", "install", "--blame")
	if got := testenv.GitEnv(t, a, nil, "config", "--get-all", "notes.rewriteRef"); got != "refs/notes/ctx" {
		t.Fatalf("notes.rewriteRef = %q", got)
	}
	mustCtx(t, a, nil, 0, "hooks", "install", "--blame") // twice: one value
	if got := testenv.GitEnv(t, a, nil, "config", "--get-all", "notes.rewriteRef"); got != "refs/notes/ctx" {
		t.Fatalf("notes.rewriteRef after a second install = %q", got)
	}
	person := []string{"CODEX_THREAD_ID=", "CLAUDE_CODE_SESSION_ID=", "CTX_SESSION="}
	const thread = "019d1afb-b2c7-72d3-b240-f3ee9d31b2c9"
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(a, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.GitEnv(t, a, nil, "add", name)
	}
	blameOf := func(target string) blame.FileResult {
		var res blame.FileResult
		if err := json.Unmarshal([]byte(mustCtx(t, a, nil, 0, "blame", target, "--json", "--no-import").stdout), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	testenv.GitEnv(t, a, nil, "checkout", "-q", "-b", "feature")
	write("agent.go", "package main\n\nfunc agent() string { return \"by codex\" }\n")
	testenv.GitEnv(t, a, []string{"CODEX_THREAD_ID=" + thread, "CLAUDE_CODE_SESSION_ID="}, "commit", "-qm", "agent's change")
	orig := testenv.GitEnv(t, a, nil, "rev-parse", "HEAD")

	testenv.GitEnv(t, a, person, "commit", "-q", "--amend", "-m", "agent's change, reworded by a person")
	amended := testenv.GitEnv(t, a, nil, "rev-parse", "HEAD")
	if res := blameOf("agent.go"); res.Outcome != blame.Proven || res.Commits[0].Commit != amended {
		t.Errorf("after amend: %+v", res)
	}
	note := testenv.GitEnv(t, a, nil, "notes", "--ref=refs/notes/ctx", "show", amended)
	if rs := blame.ParseRewrites(note); len(rs) != 1 || rs[0].From != orig || rs[0].By != "amend" {
		t.Errorf("no amend record from the post-rewrite hook: %q", note)
	}

	// main moves on; a person rebases feature onto it.
	testenv.GitEnv(t, a, nil, "checkout", "-q", "main")
	write("other.go", "package main\n")
	testenv.GitEnv(t, a, person, "commit", "-qm", "main moves")
	testenv.GitEnv(t, a, nil, "checkout", "-q", "feature")
	write("human.go", "package main\n\nfunc human() {}\n")
	testenv.GitEnv(t, a, person, "commit", "-qm", "by hand")
	human := testenv.GitEnv(t, a, nil, "rev-parse", "HEAD")
	testenv.GitEnv(t, a, person, "rebase", "-q", "main")
	rebased := testenv.GitEnv(t, a, nil, "rev-parse", "HEAD~1")
	if rebased == amended {
		t.Fatal("the rebase rewrote nothing")
	}
	if res := blameOf("agent.go"); res.Outcome != blame.Proven || res.Commits[0].Commit != rebased ||
		res.Commits[0].Sessions[0] != history.SessionID(history.Codex, thread) {
		t.Errorf("after rebase: %+v", res)
	}
	if res := blameOf("human.go"); res.Outcome != blame.None {
		t.Errorf("the person's rebased lines: %+v", res)
	}
	hn := testenv.GitEnv(t, a, nil, "notes", "--ref=refs/notes/ctx", "show", "HEAD")
	if rs := blame.ParseRewrites(hn); len(rs) != 1 || rs[0].From != human || rs[0].By != "rebase" || len(blame.ParseNote(hn)) != 0 {
		t.Errorf("rebase record of the person's commit: %q", hn)
	}

	mustCtx(t, a, nil, 0, "hooks", "uninstall")
	after, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("config after uninstall:\n%s\nwant:\n%s", after, before)
	}
}

// hooksOnALoadedMachine raises the time limit of the hooks git runs in this test to 120 s
// (CTX_HOOK_TIMEOUT_MIN, docs/hooks.md "The shim"): the tests check what a hook records, and on a loaded
// machine a post-commit or post-rewrite hook can take more than its default 2 s, which ended it before it
// wrote its note. The default stays what the tests of the limit itself check.
func hooksOnALoadedMachine(t *testing.T) {
	t.Setenv("CTX_HOOK_TIMEOUT_MIN", "120")
}
