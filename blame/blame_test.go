package blame

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// corpusFile reads a file of the shared corpus of real transcripts (../shared/corpus/agent-history from
// the project root); the test skips when the corpus is absent.
func corpusFile(t *testing.T, rel string) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if c == "" {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(c, rel)); err == nil {
			return string(b)
		}
	}
	t.Skip("the agent-history corpus is not available")
	return ""
}

const helloPy = "def hello():\n    return 'Hello, World!'\n"

// fixture is a repository with hello.py committed (by an agent, per the transcripts the test writes) and a
// line added by a person, and an empty history index.
type fixture struct {
	repo, hello, person string // the repository, the commits
	ix                  *history.Index
	roots               string // where the test writes transcripts
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{repo: testenv.NewRepo(t), roots: t.TempDir()}
	write(t, filepath.Join(f.repo, "hello.py"), helloPy)
	testenv.Git(t, f.repo, "add", "hello.py")
	testenv.Git(t, f.repo, "commit", "-q", "-m", "Add hello function")
	f.hello = testenv.Git(t, f.repo, "rev-parse", "HEAD")
	write(t, filepath.Join(f.repo, "hello.py"), helloPy+"# maintained by the docs team\n")
	testenv.Git(t, f.repo, "commit", "-q", "-am", "a person's comment")
	f.person = testenv.Git(t, f.repo, "rev-parse", "HEAD")
	ix, err := history.Open(context.Background(), filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	f.ix = ix
	return f
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// claudeSession writes the corpus's Claude sample session as session native (a file name), working in
// cwd, its `git commit` receipt printing short; without the receipt when short is "".
func (f *fixture) claudeSession(t *testing.T, native, cwd, short string) {
	t.Helper()
	text := corpusFile(t, "claude-code/claude-code-transcripts/sample_session.jsonl")
	if short == "" {
		var keep []string
		for _, l := range strings.Split(text, "\n") {
			if !strings.Contains(l, "toolu_002") {
				keep = append(keep, l)
			}
		}
		text = strings.Join(keep, "\n")
	}
	text = strings.ReplaceAll(text, "abc1234", short)
	text = strings.ReplaceAll(text, "/project", cwd)
	write(t, filepath.Join(f.roots, "claude", "proj", native+".jsonl"), text)
}

func (f *fixture) importAll(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var srcs []history.Source
	for _, p := range []history.Provider{history.ClaudeCode, history.Codex} {
		dir := filepath.Join(f.roots, map[history.Provider]string{history.ClaudeCode: "claude", history.Codex: "codex"}[p])
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		s, err := history.Discover(ctx, p, dir, true)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	st, err := f.ix.Import(ctx, srcs)
	if err != nil || st.Failed > 0 {
		t.Fatalf("import: %+v, %v", st, err)
	}
}

func (f *fixture) blamer(t *testing.T, ix *history.Index) *Blamer {
	t.Helper()
	b, err := New(context.Background(), f.repo, ix)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func short(oid string) string { return oid[:7] }

// receiptEvent returns the id of the event of session whose output prints the commit receipt.
func receiptEvent(t *testing.T, ix *history.Index, session string) string {
	t.Helper()
	evs, err := ix.Events(context.Background(), session, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		for _, fa := range e.Facts {
			if fa.Kind == "commit" {
				return e.ID
			}
		}
	}
	t.Fatalf("no receipt event in %s", session)
	return ""
}

// The Claude sample session committed hello.py (its receipt names the commit): those lines are proven with
// that session and the receipt event; the line a person added says none.
func TestFileProvenByReceipt(t *testing.T) {
	f := newFixture(t)
	f.claudeSession(t, "test-session-id", f.repo, short(f.hello))
	f.importAll(t)
	sid := history.SessionID(history.ClaudeCode, "test-session-id")
	ev := receiptEvent(t, f.ix, sid)

	b := f.blamer(t, f.ix)
	res, err := b.File(context.Background(), "hello.py", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.WorktreeDiffers || res.End != 3 || res.Head != f.person {
		t.Errorf("result header: %+v", res)
	}
	want := Coverage{Lines: 3, Proven: 2, None: 1}
	if res.Coverage != want || res.Outcome != Proven {
		t.Errorf("coverage %+v outcome %s, want %+v proven", res.Coverage, res.Outcome, want)
	}
	if len(res.Ranges) != 2 || res.Ranges[0] != (Range{Start: 1, End: 2, Commit: f.hello, Outcome: Proven}) ||
		res.Ranges[1] != (Range{Start: 3, End: 3, Commit: f.person, Outcome: None}) {
		t.Errorf("ranges %+v", res.Ranges)
	}
	a := res.Commits[0]
	if a.Commit != f.hello || len(a.Sessions) != 1 || a.Sessions[0] != sid || len(a.Evidence) != 2 {
		t.Fatalf("attribution %+v", a)
	}
	// The receipt proves; the session's own Write that added the lines is cited as context.
	if c := a.Evidence[1]; c.Kind != KindEdit || c.Tool != "Write" || !strings.Contains(c.Excerpt, "return 'Hello, World!'") {
		t.Errorf("context evidence %+v", c)
	}
	e := a.Evidence[0]
	if e.Kind != KindReceipt || e.EventID != ev || e.Tool != "Bash" || e.NativeSessionID != "test-session-id" ||
		!strings.HasPrefix(e.Excerpt, "[main "+short(f.hello)+"] Add hello function") {
		t.Errorf("evidence %+v", e)
	}
	if res.Commits[1].Outcome != None || len(res.Commits[1].Evidence) != 0 {
		t.Errorf("person's commit: %+v", res.Commits[1])
	}

	// Only the person's line.
	res, err = b.File(context.Background(), "hello.py", 3, 3)
	if err != nil || res.Outcome != None || res.Coverage != (Coverage{Lines: 1, None: 1}) {
		t.Errorf("line 3: %+v %v", res, err)
	}

	// The same answer for the commit.
	cr, err := b.Commit(context.Background(), short(f.hello))
	if err != nil || cr.Outcome != Proven || cr.Commit != f.hello || cr.Evidence[0].EventID != ev || cr.Files[0] != "hello.py" {
		t.Errorf("commit: %+v %v", cr, err)
	}
	// A dirty working copy is said; the committed lines are blamed.
	write(t, filepath.Join(f.repo, "hello.py"), "changed\n")
	res, err = b.File(context.Background(), "hello.py", 1, 2)
	if err != nil || !res.WorktreeDiffers || res.Coverage.Proven != 2 {
		t.Errorf("dirty: %+v %v", res, err)
	}
}

// An edit whose lines a person committed (no receipt in the transcript) is possible, never proven; an
// edit recorded after the commit is no evidence.
func TestFilePossibleFromEdit(t *testing.T) {
	f := newFixture(t)
	f.claudeSession(t, "test-session-id", f.repo, "")
	f.importAll(t)
	b := f.blamer(t, f.ix)
	// The sample's Write is dated 2025-12-24, before the commit: possible.
	res, err := b.File(context.Background(), "hello.py", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Coverage != (Coverage{Lines: 3, Possible: 2, None: 1}) || res.Outcome != Possible {
		t.Fatalf("coverage %+v outcome %s", res.Coverage, res.Outcome)
	}
	e := res.Commits[0].Evidence[0]
	if e.Kind != KindEdit || e.Tool != "Write" || e.Matched != 2 || !strings.Contains(e.Excerpt, "Hello, World!") {
		t.Errorf("evidence %+v", e)
	}

	// A commit dated before the edit: the edit cannot have produced it.
	g := newFixture(t)
	write(t, filepath.Join(g.repo, "old.py"), helloPy)
	testenv.Git(t, g.repo, "add", "old.py")
	cmd := []string{"-c", "user.name=P", "commit", "-q", "-m", "old"}
	t.Setenv("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
	testenv.Git(t, g.repo, cmd...)
	g.claudeSession(t, "test-session-id", g.repo, "")
	text, _ := os.ReadFile(filepath.Join(g.roots, "claude", "proj", "test-session-id.jsonl"))
	write(t, filepath.Join(g.roots, "claude", "proj", "test-session-id.jsonl"), strings.ReplaceAll(string(text), "/hello.py", "/old.py"))
	g.importAll(t)
	res, err = g.blamer(t, g.ix).File(context.Background(), "old.py", 1, 0)
	if err != nil || res.Outcome != None {
		t.Errorf("edit after the commit: %+v %v", res, err)
	}
}

// Two sessions with receipts for the same commit conflict; a receipt recorded in another repository (its
// cwd elsewhere) proves nothing here, even when its short id names a commit of this one.
func TestConflictingAndForeignReceipts(t *testing.T) {
	f := newFixture(t)
	other := testenv.NewRepo(t)
	f.claudeSession(t, "elsewhere", other, short(f.hello))
	f.importAll(t)
	b := f.blamer(t, f.ix)
	cr, err := b.Commit(context.Background(), f.hello)
	if err != nil || cr.Outcome != None {
		t.Fatalf("foreign receipt: %+v %v", cr, err)
	}

	f.claudeSession(t, "one", f.repo, short(f.hello))
	f.claudeSession(t, "two", f.repo, short(f.hello))
	f.importAll(t)
	cr, err = f.blamer(t, f.ix).Commit(context.Background(), f.hello)
	if err != nil || cr.Outcome != Conflicting || len(cr.Sessions) != 2 || len(cr.Evidence) != 3 ||
		cr.Evidence[0].Kind != KindReceipt || cr.Evidence[1].Kind != KindReceipt {
		t.Fatalf("two receipts: %+v %v", cr, err)
	}
}

// The Codex commit-receipt fixture: an exec cell whose JSON-stringified result prints the receipt.
func TestCodexReceipt(t *testing.T) {
	f := newFixture(t)
	text := corpusFile(t, "codex/ctxrs/current_exec_repository_evidence.jsonl")
	text = strings.ReplaceAll(text, "__WORKDIR__", f.repo)
	text = strings.ReplaceAll(text, "__OID_PREFIX__", short(f.person))
	write(t, filepath.Join(f.roots, "codex", "sessions", "2026", "08", "15", "rollout-2026-08-15T19-45-00-019fb000-0000-7000-8000-00000000c001.jsonl"), text)
	f.importAll(t)
	cr, err := f.blamer(t, f.ix).Commit(context.Background(), "HEAD")
	if err != nil || cr.Outcome != Proven || cr.Evidence[0].Provider != history.Codex ||
		cr.Evidence[0].NativeSessionID != "019fb000-0000-7000-8000-00000000c001" {
		t.Fatalf("codex: %+v %v", cr, err)
	}
	// Both receipts: the one a `wait` on the still-running exec cell printed, and the JSON-stringified one.
	tools := map[string]bool{}
	for _, e := range cr.Evidence {
		tools[e.Tool] = true
	}
	if len(cr.Evidence) != 2 || !tools["wait"] || !tools["exec"] {
		t.Errorf("codex evidence: %+v", cr.Evidence)
	}
}

// A note on refs/notes/ctx proves a commit without any transcript.
func TestNoteProves(t *testing.T) {
	f := newFixture(t)
	rec := NoteRecord{Agent: "codex", Session: "019d1afb-b2c7-72d3-b240-f3ee9d31b2c9", Env: "CODEX_THREAD_ID", At: time.Unix(1700000000, 0)}
	testenv.Git(t, f.repo, "notes", "--ref="+NotesRef, "add", "-m", NoteText(rec), f.hello)
	res, err := f.blamer(t, nil).File(context.Background(), "hello.py", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Coverage != (Coverage{Lines: 3, Proven: 2, None: 1}) {
		t.Fatalf("coverage %+v", res.Coverage)
	}
	e := res.Commits[0].Evidence[0]
	if e.Kind != KindNote || e.SessionID != history.SessionID(history.Codex, rec.Session) || e.Env != "CODEX_THREAD_ID" {
		t.Errorf("evidence %+v", e)
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t)
	b := f.blamer(t, nil)
	ctx := context.Background()
	for _, c := range []struct {
		path       string
		start, end int
	}{{"missing.py", 1, 0}, {"hello.py", 0, 0}, {"hello.py", 3, 2}, {"hello.py", 9, 10}} {
		if _, err := b.File(ctx, c.path, c.start, c.end); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	for _, rev := range []string{"--output=/tmp/x", "nope", "HEAD;rm", ""} {
		if _, err := b.Commit(ctx, rev); err == nil {
			t.Errorf("%q: no error", rev)
		}
	}
	if _, err := b.RelPath(f.repo, "../outside.py"); err == nil {
		t.Errorf("path outside the repository accepted")
	}
	// A line past the end: ctx's own words, not git's error with its command line.
	n := len(strings.Split(testenv.Git(t, f.repo, "show", "HEAD:hello.py"), "\n"))
	for _, r := range [][2]int{{n + 1, 0}, {n + 5, n + 9}} {
		_, err := b.File(ctx, "hello.py", r[0], r[1])
		want := fmt.Sprintf("line %d is past the end of hello.py, which has %d lines at HEAD", r[0], n)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "git blame") || strings.Contains(err.Error(), "fatal") {
			t.Errorf("lines %v of a %d-line file: %v", r, n, err)
		}
	}
}

func TestSessionFromEnv(t *testing.T) {
	env := map[string]string{"CODEX_THREAD_ID": "019d1afb-b2c7", "CTX_SESSION": "s1", "CTX_AGENT": "aider"}
	r, ok := SessionFromEnv(func(k string) string { return env[k] })
	if !ok || r.Agent != "codex" || r.Session != "019d1afb-b2c7" || r.Env != "CODEX_THREAD_ID" {
		t.Errorf("codex: %+v", r)
	}
	delete(env, "CODEX_THREAD_ID")
	r, ok = SessionFromEnv(func(k string) string { return env[k] })
	if !ok || r.Agent != "aider" || r.Session != "s1" {
		t.Errorf("ctx: %+v", r)
	}
	env["CTX_SESSION"] = "bad value; rm -rf"
	if _, ok := SessionFromEnv(func(k string) string { return env[k] }); ok {
		t.Errorf("a hostile value was taken")
	}
	r = NoteRecord{Agent: "claude-code", Session: "abc", Env: "CLAUDE_CODE_SESSION_ID", At: time.Unix(5, 0).UTC()}
	if got := ParseNote(NoteText(r) + NoteText(r)); len(got) != 2 || got[0] != r {
		t.Errorf("round trip: %+v", got)
	}
}

// A session that worked in a linked worktree of this repository proves the commit; blame runs no git in
// the transcript's directories (a cwd that does not exist is just not this repository).
func TestReceiptFromLinkedWorktree(t *testing.T) {
	f := newFixture(t)
	wt := filepath.Join(t.TempDir(), "linked")
	testenv.Git(t, f.repo, "worktree", "add", "-q", wt, "HEAD")
	f.claudeSession(t, "in-worktree", filepath.Join(wt, "sub"), short(f.hello))
	f.claudeSession(t, "gone", "/nonexistent/checkout", short(f.hello))
	f.importAll(t)
	cr, err := f.blamer(t, f.ix).Commit(context.Background(), f.hello)
	if err != nil || cr.Outcome != Proven || len(cr.Sessions) != 1 || cr.Sessions[0] != history.SessionID(history.ClaudeCode, "in-worktree") {
		t.Fatalf("linked worktree: %+v %v", cr, err)
	}
}

// A cherry-pick's receipt ("[main abc1234] subject" printed by `git cherry-pick`) proves the new commit.
func TestCherryPickReceipt(t *testing.T) {
	f := newFixture(t)
	f.claudeSession(t, "picker", f.repo, short(f.hello))
	p := filepath.Join(f.roots, "claude", "proj", "picker.jsonl")
	text, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, p, strings.ReplaceAll(string(text), "git add . && git commit -m 'Add hello function'", "git cherry-pick feature"))
	f.importAll(t)
	cr, err := f.blamer(t, f.ix).Commit(context.Background(), f.hello)
	if err != nil || cr.Outcome != Proven || cr.Evidence[0].Kind != KindReceipt {
		t.Fatalf("cherry-pick: %+v %v", cr, err)
	}
}

// Blame leaves the user's side as it was: HEAD, the index file's bytes (git status would refresh stale
// stat data in it without --no-optional-locks) and the status.
func TestUserSideUntouched(t *testing.T) {
	f := newFixture(t)
	future := time.Now().Add(time.Hour)
	for _, p := range []string{"README.md", "hello.py"} {
		if err := os.Chtimes(filepath.Join(f.repo, p), future, future); err != nil {
			t.Fatal(err)
		}
	}
	snap := testenv.Take(t, f.repo)
	b := f.blamer(t, f.ix)
	if _, err := b.File(context.Background(), "hello.py", 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commit(context.Background(), "HEAD"); err != nil {
		t.Fatal(err)
	}
	snap.Same(t, f.repo)
}

// A receipt names a commit that was later rewritten. The rewritten commit is proven through the rewrite
// only when git reported the rewrite: the record ctx's post-rewrite hook writes after a real
// `git commit --amend` (RecordRewrites reads HEAD's reflog), or the "(cherry picked from commit X)" line of
// `git cherry-pick -x`. Without such a record (notes.rewriteRef not set up, or a plain cherry-pick) the
// rewritten commit is at most possible (the session's matching edit): a similar patch proves nothing.
func TestReceiptFollowsRewrites(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.claudeSession(t, "rewritten", f.repo, short(f.hello))
	f.importAll(t)
	sid := history.SessionID(history.ClaudeCode, "rewritten")
	ev := receiptEvent(t, f.ix, sid)

	amend := func(branch, msg string) string {
		testenv.Git(t, f.repo, "checkout", "-q", "-b", branch, f.hello)
		testenv.Git(t, f.repo, "commit", "-q", "--amend", "-m", msg)
		return testenv.Git(t, f.repo, "rev-parse", "HEAD")
	}
	// Not set up: nothing recorded, nothing proven.
	plain := amend("plain", "Add hello function (reworded)")
	if n, err := RecordRewrites(ctx, f.repo, "amend", time.Now()); n != 0 || err != nil {
		t.Fatalf("RecordRewrites without notes.rewriteRef: %d %v", n, err)
	}
	// The session's edit still matches: possible, never proven.
	if cr, err := f.blamer(t, f.ix).Commit(ctx, plain); err != nil || cr.Outcome != Possible {
		t.Fatalf("amended, no record: %+v %v", cr, err)
	}

	testenv.Git(t, f.repo, "config", "--add", "notes.rewriteRef", "refs/notes/*")
	amended := amend("amended", "Add hello function, amended")
	if n, err := RecordRewrites(ctx, f.repo, "amend", time.Now()); n != 1 || err != nil {
		t.Fatalf("RecordRewrites: %d %v", n, err)
	}
	if n, _ := RecordRewrites(ctx, f.repo, "amend", time.Now()); n != 0 {
		t.Errorf("a second run recorded the rewrite again")
	}
	note := testenv.Git(t, f.repo, "notes", "--ref=refs/notes/ctx", "show", amended)
	if rs := ParseRewrites(note); len(rs) != 1 || rs[0].From != f.hello || rs[0].By != "amend" || len(ParseNote(note)) != 0 {
		t.Fatalf("rewrite note %q", note)
	}
	// An amend of the amend: the chain is followed back to the receipt.
	testenv.Git(t, f.repo, "commit", "-q", "--amend", "-m", "Add hello function, amended twice")
	twice := testenv.Git(t, f.repo, "rev-parse", "HEAD")
	if n, err := RecordRewrites(ctx, f.repo, "amend", time.Now()); n != 1 || err != nil {
		t.Fatalf("RecordRewrites twice: %d %v", n, err)
	}
	for _, c := range []string{amended, twice} {
		cr, err := f.blamer(t, f.ix).Commit(ctx, c)
		if err != nil || cr.Outcome != Proven || len(cr.Sessions) != 1 || cr.Sessions[0] != sid {
			t.Fatalf("amended %s: %+v %v", c, cr, err)
		}
		e := cr.Evidence[0]
		if e.Kind != KindReceipt || e.EventID != ev || e.RewrittenFrom != f.hello || e.Rewrite != "amend" {
			t.Errorf("evidence through the amend: %+v", e)
		}
	}
	res, err := f.blamer(t, f.ix).File(ctx, "hello.py", 1, 0)
	if err != nil || res.Outcome != Proven || res.Coverage != (Coverage{Lines: 2, Proven: 2}) {
		t.Errorf("file at the amended commit: %+v %v", res, err)
	}

	// cherry-pick -x names its source; a plain cherry-pick does not.
	testenv.Git(t, f.repo, "checkout", "-q", "-b", "picks", f.hello+"~1")
	testenv.Git(t, f.repo, "commit", "-q", "--allow-empty", "-m", "another base")
	testenv.Git(t, f.repo, "cherry-pick", "-x", f.hello)
	picked := testenv.Git(t, f.repo, "rev-parse", "HEAD")
	testenv.Git(t, f.repo, "reset", "-q", "--hard", "HEAD~1")
	testenv.Git(t, f.repo, "cherry-pick", f.hello)
	plainPick := testenv.Git(t, f.repo, "rev-parse", "HEAD")
	cr, err := f.blamer(t, f.ix).Commit(ctx, picked)
	if err != nil || cr.Outcome != Proven || cr.Evidence[0].RewrittenFrom != f.hello || cr.Evidence[0].Rewrite != "cherry-pick" {
		t.Errorf("cherry-pick -x: %+v %v", cr, err)
	}
	if cr, err := f.blamer(t, f.ix).Commit(ctx, plainPick); err != nil || cr.Outcome != Possible {
		t.Errorf("plain cherry-pick: %+v %v", cr, err)
	}
}

// A pull request's commits come from its head ref refs/pull/N/head, fetched from the remote as
// `git fetch origin pull/N/head:refs/pull/N/head` does: open (base HEAD) and merged (base: the first parent
// of its merge commit). Without the ref, or merged by a fast-forward, no commits are named.
func TestPullRequest(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, "", "init", "-q", "--bare", remote)
	testenv.Git(t, f.repo, "checkout", "-q", "-b", "feature")
	write(t, filepath.Join(f.repo, "pr.go"), "package pr\n\nfunc ByAgent() {}\n")
	testenv.Git(t, f.repo, "add", "pr.go")
	testenv.Git(t, f.repo, "commit", "-q", "-m", "agent's part")
	agent := testenv.Git(t, f.repo, "rev-parse", "HEAD")
	testenv.Git(t, f.repo, "notes", "--ref=refs/notes/ctx", "add", "-m", NoteText(NoteRecord{Agent: "codex", Session: "pr-thread", Env: "CODEX_THREAD_ID"}), agent)
	write(t, filepath.Join(f.repo, "pr.go"), "package pr\n\nfunc ByAgent() {}\n\nfunc ByPerson() {}\n")
	testenv.Git(t, f.repo, "commit", "-q", "-am", "person's part")
	person := testenv.Git(t, f.repo, "rev-parse", "HEAD")
	// The forge publishes the head as refs/pull/7/head; a clone fetches it.
	testenv.Git(t, f.repo, "push", "-q", remote, "feature:refs/pull/7/head")
	testenv.Git(t, f.repo, "checkout", "-q", "main")
	testenv.Git(t, f.repo, "branch", "-q", "-D", "feature")

	b := f.blamer(t, f.ix)
	if _, err := b.PullRequest(ctx, 7); !errors.Is(err, ErrNoPullRequestEvidence) {
		t.Fatalf("no ref: %v", err)
	}
	if _, err := b.PullRequest(ctx, 0); !errors.Is(err, ErrUsage) {
		t.Fatalf("pull request 0: %v", err)
	}
	testenv.Git(t, f.repo, "fetch", "-q", remote, "pull/7/head:refs/pull/7/head")
	check := func(what string, merged bool) {
		t.Helper()
		res, err := f.blamer(t, f.ix).PullRequest(ctx, 7)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.Head != person || res.Merged != merged || len(res.Commits) != 2 || res.Commits[0].Commit != agent ||
			res.Commits[1].Commit != person || res.Commits[0].Outcome != Proven || res.Commits[1].Outcome != None ||
			res.Coverage != (Coverage{Lines: 2, Proven: 1, None: 1}) || res.Outcome != Proven || res.Source != "ref" || res.Ref != "refs/pull/7/head" {
			t.Errorf("%s: %+v", what, res)
		}
	}
	check("open", false)
	testenv.Git(t, f.repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #7", "refs/pull/7/head")
	check("merged", true)

	// Fast-forwarded: nothing tells the pull request's commits from main's.
	testenv.Git(t, f.repo, "push", "-q", remote, f.hello+":refs/pull/8/head")
	testenv.Git(t, f.repo, "fetch", "-q", remote, "pull/8/head:refs/pull/8/head")
	if _, err := f.blamer(t, f.ix).PullRequest(ctx, 8); !errors.Is(err, ErrNoPullRequestEvidence) {
		t.Errorf("fast-forwarded: %v", err)
	}
}

// claudeCall is two lines of a Claude Code transcript: a Bash tool call running command in cwd and its
// result (an error when isErr).
func claudeCall(id, cwd, command, result string, isErr bool) string {
	in, _ := json.Marshal(map[string]any{"command": command})
	res, _ := json.Marshal(result)
	return fmt.Sprintf(`{"type":"assistant","timestamp":"2025-12-24T11:00:00.000Z","sessionId":"s","cwd":%q,"message":{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Bash","input":%s}]},"uuid":"u-%s"}`+"\n"+
		`{"type":"user","timestamp":"2025-12-24T11:00:05.000Z","sessionId":"s","cwd":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%s,"is_error":%t}]},"uuid":"r-%s"}`+"\n",
		cwd, id, in, id, cwd, id, res, isErr, id)
}

// Pull requests from transcripts: gh pr create printing the URL (on one of this repository's remotes) and
// naming the head branch, or gh pr view --json commits listing the commits, in a session working in this
// repository. A URL printed by a failed call, on another repository, by a session elsewhere, or without a
// head branch names no commits.
func TestPullRequestFromTranscript(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	testenv.Git(t, f.repo, "remote", "add", "origin", "git@github.com:acme/widgets.git")
	testenv.Git(t, f.repo, "checkout", "-q", "-b", "feature")
	write(t, filepath.Join(f.repo, "pr.go"), "package pr\n\nfunc Feature() {}\n")
	testenv.Git(t, f.repo, "add", "pr.go")
	testenv.Git(t, f.repo, "commit", "-q", "-m", "feature")
	feature := testenv.Git(t, f.repo, "rev-parse", "HEAD")
	testenv.Git(t, f.repo, "notes", "--ref=refs/notes/ctx", "add", "-m", NoteText(NoteRecord{Agent: "codex", Session: "t-1", Env: "CODEX_THREAD_ID"}), feature)
	testenv.Git(t, f.repo, "checkout", "-q", "main")

	created := "\nCreating pull request for feature into main in acme/widgets\n\nhttps://github.com/acme/widgets/pull/21\n"
	other := t.TempDir()
	text := claudeCall("c1", f.repo, "gh pr create --title 'Feature' --body 'x'", created, false) +
		// Not evidence: failed; another repository's URL; a session elsewhere; no head branch named.
		claudeCall("c2", f.repo, "gh pr create --title 'x' --body 'y' --head feature", "https://github.com/acme/widgets/pull/22\n", true) +
		claudeCall("c3", f.repo, "gh pr create --head feature", "https://github.com/evil/widgets/pull/23\n", false) +
		claudeCall("c5", f.repo, "gh pr create --title t", "https://github.com/acme/widgets/pull/25\n", false) +
		claudeCall("c6", f.repo, "gh pr view 26 --json commits,number", `{"commits":[{"oid":"`+f.hello+`"},{"oid":"`+f.person+`"}],"number":26}`, false) +
		claudeCall("c7", f.repo, "gh pr view 27 --json commits", `{"commits":[{"oid":"`+strings.Repeat("0", 40)+`"}]}`, false) +
		// Hostile: a head branch that would be a git option, or a pattern.
		claudeCall("c8", f.repo, "gh pr create --head '--upload-pack=touch /tmp/x'", "https://github.com/acme/widgets/pull/29\n", false) +
		claudeCall("c9", f.repo, "gh pr create --head 'feat*'", "https://github.com/acme/widgets/pull/30\n", false) +
		claudeCall("c10", f.repo, "gh pr view 31 --json commits", `{"commits":[{"oid":"--output=/tmp/x"}]}`, false)
	write(t, filepath.Join(f.roots, "claude", "proj", "gh.jsonl"), text)
	// The working directory is the session's: a session elsewhere is another file.
	write(t, filepath.Join(f.roots, "claude", "proj", "elsewhere.jsonl"),
		claudeCall("c4", other, "gh pr create --head feature", "https://github.com/acme/widgets/pull/24\n", false))
	f.importAll(t)
	b := f.blamer(t, f.ix)

	res, err := b.PullRequest(ctx, 21)
	if err != nil || res.Source != "gh pr create" || res.HeadBranch != "feature" || res.BaseBranch != "main" || res.Head != feature ||
		len(res.Commits) != 1 || res.Commits[0].Commit != feature || res.Outcome != Proven || res.Evidence == nil ||
		res.Evidence.Kind != KindPullRequest || !strings.Contains(res.Evidence.Excerpt, "pull/21") {
		t.Fatalf("gh pr create: %+v %v", res, err)
	}
	if _, _, err := f.ix.Event(ctx, res.Evidence.EventID, 1); err != nil {
		t.Errorf("the cited event does not open: %v", err)
	}
	for _, n := range []int{22, 23, 24, 25, 27, 28, 29, 30, 31} {
		if r, err := b.PullRequest(ctx, n); !errors.Is(err, ErrNoPullRequestEvidence) {
			t.Errorf("pull request %d: %+v %v", n, r, err)
		}
	}
	res, err = b.PullRequest(ctx, 26)
	if err != nil || res.Source != "gh pr view" || len(res.Commits) != 2 || res.Commits[0].Commit != f.hello ||
		res.Commits[1].Commit != f.person || res.Coverage.Lines != 2 {
		t.Errorf("gh pr view: %+v %v", res, err)
	}
}

// Rewrite records come from teammates' notes: a record without a full commit id or with another command
// is dropped, one naming a commit this repository lacks is not followed, and a rewrite record does not
// disturb the session records around it.
func TestRewriteRecordsHostile(t *testing.T) {
	ctx := context.Background()
	note := "ctx-blame: v1\nagent: codex\nsession: s-1\nenv: CODEX_THREAD_ID\n" +
		"ctx-rewrite: v1\nfrom: --output=/tmp/x\nby: amend\nat: 2026-01-01T00:00:00Z\n" +
		"ctx-rewrite: v1\nfrom: " + strings.Repeat("a", 40) + "\nby: filter-branch\n" +
		"ctx-rewrite: v1\nfrom: " + strings.Repeat("b", 40) + "\nby: rebase\n"
	if rs := ParseRewrites(note); len(rs) != 1 || rs[0].From != strings.Repeat("b", 40) {
		t.Fatalf("rewrites %+v", rs)
	}
	if ns := ParseNote(note); len(ns) != 1 || ns[0].Session != "s-1" || !ns[0].At.IsZero() {
		t.Fatalf("sessions %+v", ns)
	}
	f := newFixture(t)
	testenv.Git(t, f.repo, "notes", "--ref=refs/notes/ctx", "add", "-m", RewriteText(RewriteRecord{From: strings.Repeat("c", 40), By: "amend"}), f.person)
	cr, err := f.blamer(t, f.ix).Commit(ctx, f.person)
	if err != nil || cr.Outcome != None {
		t.Errorf("a rewrite from a commit not here: %+v %v", cr, err)
	}
}
