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
	"github.com/ctx-dev/ctx/store/redact/redacttest"
)

// claudeLine is one record of a Claude Code transcript (docs/history.md "Providers").
func claudeLine(t *testing.T, uuid, at, cwd string, msg map[string]any, typ string) string {
	t.Helper()
	rec := map[string]any{"type": typ, "timestamp": at, "sessionId": "x", "cwd": cwd, "gitBranch": "main", "uuid": uuid, "message": msg}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// shareTranscript is a Claude session working in cwd that writes hello.py, commits it (the receipt
// printing short), and holds every planted secret in a message, a tool call and a tool output; extra
// lines follow.
func shareTranscript(t *testing.T, cwd, short string, extra ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"summary","summary":"Add the hello function (shared session test)","leafUuid":"leaf"}` + "\n")
	b.WriteString(claudeLine(t, "u-001", "2026-11-30T10:00:00.000Z", cwd, map[string]any{"role": "user",
		"content": "Create a hello function zebrafinch in " + cwd + "/hello.py; my home is /home/ada/notes"}, "user"))
	b.WriteString(claudeLine(t, "u-002", "2026-11-30T10:00:05.000Z", cwd, map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "tool_use", "id": "toolu_w", "name": "Write", "input": map[string]any{"file_path": cwd + "/hello.py", "content": "def hello():\n    return 'Hello, World!'\n"}},
	}}, "assistant"))
	b.WriteString(claudeLine(t, "u-003", "2026-11-30T10:00:06.000Z", cwd, map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_w", "content": "File written successfully"}}}, "user"))
	b.WriteString(claudeLine(t, "u-004", "2026-11-30T10:00:10.000Z", cwd, map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "tool_use", "id": "toolu_c", "name": "Bash", "input": map[string]any{"command": "git add hello.py && git commit -m 'Add hello function'"}},
	}}, "assistant"))
	b.WriteString(claudeLine(t, "u-005", "2026-11-30T10:00:12.000Z", cwd, map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_c", "content": "[main " + short + "] Add hello function\n 1 file changed"}}}, "user"))
	var secrets []string
	for _, p := range redacttest.Plants() {
		secrets = append(secrets, p.Line)
	}
	all := strings.Join(secrets, "\n")
	b.WriteString(claudeLine(t, "u-006", "2026-11-30T10:01:00.000Z", cwd, map[string]any{"role": "user", "content": "here are my credentials:\n" + all}, "user"))
	b.WriteString(claudeLine(t, "u-007", "2026-11-30T10:01:05.000Z", cwd, map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "tool_use", "id": "toolu_e", "name": "Bash", "input": map[string]any{"command": "cat > .env <<EOF\n" + all + "\nEOF"}},
	}}, "assistant"))
	b.WriteString(claudeLine(t, "u-008", "2026-11-30T10:01:06.000Z", cwd, map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_e", "content": all}}}, "user"))
	for _, x := range extra {
		b.WriteString(x)
	}
	return b.String()
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryShareAcrossTheTeam: a session holding 22 kinds of planted secrets is shared (after a dry run
// that commits nothing) and pushed to a bare remote; none of the secrets is in any object of the remote
// (git cat-file --batch-all-objects --batch). A second clone that never had the transcript pulls, finds
// the session with ctx history search and proves the agent's commit with ctx blame (the shared receipt).
// A third machine with the same session and a different new event shares too: the merge keeps both
// machines' events.
func TestHistoryShareAcrossTheTeam(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	writeFile(t, filepath.Join(a, "hello.py"), "def hello():\n    return 'Hello, World!'\n")
	testenv.Git(t, a, "add", "hello.py")
	testenv.Git(t, a, "commit", "-qm", "Add hello function")
	commit := testenv.Git(t, a, "rev-parse", "HEAD")
	testenv.Git(t, a, "push", "-q", "origin", "main")

	const native = "5f1b7c2e-share-test-session"
	sid := history.SessionID(history.ClaudeCode, native)
	claudeA := t.TempDir()
	envA := []string{"CLAUDE_CONFIG_DIR=" + claudeA}
	transcriptA := filepath.Join(claudeA, "projects", "-a", native+".jsonl")
	writeFile(t, transcriptA, shareTranscript(t, a, commit[:7]))

	tip := func(dir string) string { return testenv.Git(t, dir, "rev-parse", "refs/heads/ctx") }
	before := tip(a)
	dry := mustCtx(t, a, envA, 0, "history", "share", sid[:8], "--dry-run")
	if tip(a) != before {
		t.Fatalf("--dry-run committed")
	}
	if os.Getenv("CTX_SHOW_DRY_RUN") != "" {
		t.Log(dry.stdout)
	}
	for _, p := range redacttest.Plants() {
		if strings.Contains(dry.stdout, p.Secret) {
			t.Errorf("--dry-run shows the %s secret", p.Kind)
		}
	}
	for _, want := range []string{"[REDACTED:github-pat]", "[REDACTED:private-key]", "[REDACTED:url-credentials]", "dry run: would add", "1 commit receipts resolved"} {
		if !strings.Contains(dry.stdout, want) {
			t.Errorf("--dry-run output lacks %q:\n%s", want, dry.stdout)
		}
	}
	if strings.Contains(dry.stdout, "/home/ada") {
		t.Errorf("a home directory survived: %s", dry.stdout)
	}

	out := mustCtx(t, a, envA, 0, "history", "share", sid[:8]).stdout
	if !strings.Contains(out, "shared session "+sid) {
		t.Fatalf("share: %s", out)
	}
	if out := mustCtx(t, a, envA, 0, "history", "share", sid).stdout; !strings.Contains(out, "shared already") {
		t.Errorf("sharing again without new events: %s", out)
	}
	mustCtx(t, a, nil, 0, "push")

	objects := testenv.Git(t, remote, "cat-file", "--batch-all-objects", "--batch")
	if !strings.Contains(objects, `"ctx_session_id":"`+sid+`"`) || !strings.Contains(objects, "zebrafinch") {
		t.Fatalf("the shared record is not on the remote")
	}
	for _, p := range redacttest.Plants() {
		if strings.Contains(objects, p.Secret) {
			t.Errorf("the %s secret is in the remote's objects", p.Kind)
		}
	}

	// A teammate's clone: no transcript, the pull brings the record.
	b := cloneURL(t, remote, "b")
	mustCtx(t, b, nil, 0, "pull")
	hits := mustCtx(t, b, nil, 0, "history", "search", "zebrafinch").stdout
	if !strings.Contains(hits, native) {
		t.Errorf("search on the second clone: %s", hits)
	}
	var res blame.FileResult
	if err := json.Unmarshal([]byte(mustCtx(t, b, nil, 0, "blame", "hello.py", "--json").stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != blame.Proven || len(res.Commits) != 1 || res.Commits[0].Sessions[0] != sid ||
		res.Commits[0].Evidence[0].Kind != blame.KindReceipt {
		t.Errorf("blame on the second clone: %+v", res)
	}

	// Two machines share new events of the same session: the merge keeps both.
	c := cloneURL(t, remote, "c")
	mustCtx(t, c, nil, 0, "pull")
	claudeC := t.TempDir()
	envC := []string{"CLAUDE_CONFIG_DIR=" + claudeC}
	fromA := claudeLine(t, "u-100", "2026-11-30T10:05:00.000Z", a, map[string]any{"role": "user", "content": "machine a says aardvark"}, "user")
	fromC := claudeLine(t, "u-200", "2026-11-30T10:06:00.000Z", c, map[string]any{"role": "user", "content": "machine c says capybara"}, "user")
	writeFile(t, transcriptA, shareTranscript(t, a, commit[:7], fromA))
	writeFile(t, filepath.Join(claudeC, "projects", "-c", native+".jsonl"), shareTranscript(t, c, commit[:7], fromC))
	if out := mustCtx(t, a, envA, 0, "history", "share", sid).stdout; !strings.Contains(out, "1 new lines") {
		t.Errorf("re-share on a: %s", out)
	}
	if out := mustCtx(t, c, envC, 0, "history", "share", sid).stdout; !strings.Contains(out, "1 new lines") {
		t.Errorf("share on c: %s", out)
	}
	mustCtx(t, a, nil, 0, "push")
	mustCtx(t, c, nil, 0, "sync") // the remote moved: c merges and pushes
	rec := testenv.Git(t, remote, "show", "ctx:transcripts/2026/11/"+sid+".ndjson")
	for _, want := range []string{"aardvark", "capybara", "zebrafinch"} {
		if strings.Count(rec, want) != 1 {
			t.Errorf("merged record holds %q %d times:\n%s", want, strings.Count(rec, want), rec)
		}
	}
	if n := strings.Count(rec, `"kind":"session"`); n != 1 {
		t.Errorf("%d headers", n)
	}
	if out := mustCtx(t, c, nil, 0, "conflicts").stdout; strings.Contains(out, "transcripts/") {
		t.Errorf("the merge left conflicts: %s", out)
	}
	mustCtx(t, b, nil, 0, "pull")
	if hits := mustCtx(t, b, nil, 0, "history", "search", "capybara").stdout; !strings.Contains(hits, native) {
		t.Errorf("b does not find c's new event: %s", hits)
	}
}

// TestHistoryShareHostile: records a teammate pushed by hand are hostile input. One whose header names
// another session than its file, or forges event ids, is not indexed (a warning; the pull stands); one
// with terminal escapes in its text is indexed with them neutralised. A session whose native id (a
// transcript's file name) holds control characters is refused by ctx history share.
func TestHistoryShareHostile(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "push")

	victim := history.SessionID(history.ClaudeCode, "victim")
	ok := history.SessionID(history.ClaudeCode, "hostile-ok")
	rec := func(native string, evs ...history.SharedEvent) string {
		var b strings.Builder
		h := history.NewSharedHeader(history.Session{ID: history.SessionID(history.ClaudeCode, native), Provider: history.ClaudeCode, NativeID: native})
		j, _ := json.Marshal(h)
		b.Write(j)
		b.WriteByte('\n')
		for _, e := range evs {
			j, _ := json.Marshal(e)
			b.Write(j)
			b.WriteByte('\n')
		}
		return b.String()
	}
	ev := func(sid, key, text string) history.SharedEvent {
		return history.NewSharedEvent(history.Event{ID: history.EventID(sid, key), NativeKey: key, Type: history.Message, Role: "user", Text: text, Seq: 1})
	}
	// Forged: the file is named after the victim's session, the header is the attacker's.
	forged := rec("attacker", ev(history.SessionID(history.ClaudeCode, "attacker"), "k1", "walrus forged words"))
	escaped := rec("hostile-ok", ev(ok, "k1", "okapi \x1b]0;pwned\x07\x1b[2J escape"))
	idx := filepath.Join(t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	testenv.GitEnv(t, a, env, "read-tree", "refs/heads/ctx")
	for p, data := range map[string]string{"transcripts/2026/11/" + victim + ".ndjson": forged, "transcripts/2026/11/" + ok + ".ndjson": escaped} {
		blob := testenv.GitIn(t, a, data, "hash-object", "-w", "--stdin")
		testenv.GitEnv(t, a, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	tree := testenv.GitEnv(t, a, env, "write-tree")
	commit := testenv.Git(t, a, "commit-tree", tree, "-p", "refs/heads/ctx", "-m", "by hand")
	testenv.Git(t, a, "push", "-q", "origin", commit+":refs/heads/ctx")

	b := cloneURL(t, remote, "b")
	r := mustCtx(t, b, nil, 0, "pull")
	if !strings.Contains(r.stderr, "not a valid shared session record") {
		t.Errorf("the forged record gave no warning: %s", r.stderr)
	}
	if hits := mustCtx(t, b, nil, 0, "history", "search", "walrus").stdout; !strings.Contains(hits, "no hits") {
		t.Errorf("the forged record was indexed: %s", hits)
	}
	if _, err := os.Stat(filepath.Join(b, ".context", "transcripts", "2026", "11", ok+".ndjson")); err != nil {
		t.Errorf("the record is not checked out: %v", err)
	}
	show := mustCtx(t, b, nil, 0, "history", "show", "session", ok, "--json").stdout
	if !strings.Contains(show, "okapi") || strings.Contains(show, "\x1b") || strings.Contains(show, `\u001b`) {
		t.Errorf("escapes in the shared text: %q", show)
	}

	// A transcript whose file name (the Claude session id) holds control characters is not shared.
	claude := t.TempDir()
	writeFile(t, filepath.Join(claude, "projects", "-a", "evil\x1bname.jsonl"),
		claudeLine(t, "u-1", "2026-11-30T10:00:00.000Z", a, map[string]any{"role": "user", "content": "hello"}, "user"))
	bad := history.SessionID(history.ClaudeCode, "evil\x1bname")
	r = mustCtx(t, a, []string{"CLAUDE_CONFIG_DIR=" + claude}, 2, "history", "share", bad)
	if !strings.Contains(r.stderr, "control characters") {
		t.Errorf("share of a session with control characters in its id: %s", r.stderr)
	}
}
