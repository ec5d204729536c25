package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

func historyCorpus(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	t.Skip("agent-history corpus not found (set CTX_HISTORY_CORPUS)")
	return ""
}

// TestHistoryCLI: import a provider's copied root with --path, search it, show the session and an event;
// the index is under the git common dir and nothing reaches the repository's refs or working tree.
func TestHistoryCLI(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	refsBefore, _ := exec.Command("git", "-C", dir, "for-each-ref").Output()

	// A --path that does not exist is a usage error, not an empty history (found by a new user: "0
	// sources", exit 0).
	if _, e, code := run("history", "import", "--provider", "claude-code", "--path", filepath.Join(dir, "nowhere")); code != ExitUsage || !strings.Contains(e, "nowhere") {
		t.Errorf("import of a missing --path: exit %d, %q", code, e)
	}
	out, e, code := run("history", "import", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code"), "--json")
	if code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	var st history.ImportStats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Sources != 9 || st.Imported != 9 || st.Failed != 0 || st.BadLines != 0 || st.Events == 0 {
		t.Fatalf("import stats %+v", st)
	}
	// Its keys are snake_case at every level, as in every other --json of ctx.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"sources", "unchanged", "appended", "imported", "failed", "events", "bad_lines", "unknown", "results"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("history import --json has no %q: %s", k, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, ".git", "ctx", "history", "index.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index: %v %v", fi, err)
	}
	if out, _, _ := run("history", "import", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code")); !strings.Contains(out, "9 unchanged") {
		t.Errorf("second import: %q", out)
	}

	out, e, code = run("history", "search", "hello", "function", "--json")
	if code != ExitOK {
		t.Fatalf("search: %d %s", code, e)
	}
	// The MCP search tool's structuredContent (docs/history.md "Search"): results with ctx ids.
	var res struct {
		Results []struct {
			Provider        string `json:"provider"`
			CtxSessionID    string `json:"ctx_session_id"`
			NativeSessionID string `json:"native_session_id"`
			CtxEventID      string `json:"ctx_event_id"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || res.Results[0].NativeSessionID != "test-session-id" && res.Results[0].NativeSessionID != "sample_session" {
		t.Fatalf("search hits %+v", res.Results)
	}
	var hit struct {
		Session struct{ ID, NativeID string }
		Event   struct{ ID string }
	}
	hit.Session.ID, hit.Session.NativeID, hit.Event.ID = res.Results[0].CtxSessionID, res.Results[0].NativeSessionID, res.Results[0].CtxEventID
	if out, _, code := run("history", "search", "hello", "function"); code != ExitOK || !strings.Contains(out, hit.Event.ID) {
		t.Errorf("text search: %d %q", code, out)
	}

	out, e, code = run("history", "show", "session", hit.Session.ID[:8])
	if code != ExitOK || !strings.Contains(out, "Create a hello world function") || !strings.Contains(out, "9 events") {
		t.Fatalf("show session: %d %s %q", code, e, out)
	}
	// JSON lines: the session, the events, then the completion record (docs/history.md "The end of a JSON Lines stream": "CLI JSONL ends with
	// completion metadata rather than a cursor"): truncated by --max-events, complete without it.
	completion := func(out string, events int) map[string]any {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var c map[string]any
		if len(lines) != events+2 || json.Unmarshal([]byte(lines[len(lines)-1]), &c) != nil || c["kind"] != "completion" {
			t.Fatalf("show session --json: %d lines, want %d, the last a completion record: %q", len(lines), events+2, out)
		}
		for _, l := range lines[1 : len(lines)-1] {
			if strings.Contains(l, `"kind":"completion"`) {
				t.Fatalf("a completion record inside the stream: %q", l)
			}
		}
		return c
	}
	out, _, code = run("history", "show", "session", hit.Session.ID, "--json", "--max-events", "2")
	if c := completion(out, 2); code != ExitOK || c["complete"] != false || c["truncated"] != true || c["returned"] != float64(2) ||
		c["max_events"] != float64(2) || c["stream"] != "session_events" || c["ctx_session_id"] != hit.Session.ID ||
		c["generation"] != float64(history.Inspect(context.Background(), filepath.Join(dir, ".git", "ctx", "history")).Generation) {
		t.Fatalf("show session --json --max-events 2: %d %v", code, c)
	}
	out, _, code = run("history", "show", "session", hit.Session.ID, "--json")
	if c := completion(out, 9); code != ExitOK || c["complete"] != true || c["truncated"] != false || c["returned"] != float64(9) || c["max_events"] != nil {
		t.Fatalf("show session --json: %d %v", code, c)
	}
	out, _, code = run("history", "show", "session", hit.Session.ID, "--json", "--max-events", "9")
	if c := completion(out, 9); code != ExitOK || c["complete"] != true || c["truncated"] != false {
		t.Fatalf("show session --json --max-events 9 (exactly all): %d %v", code, c)
	}
	out, _, code = run("history", "show", "event", hit.Event.ID, "--window", "1")
	if code != ExitOK || !strings.Contains(out, "> #") {
		t.Fatalf("show event: %d %q", code, out)
	}
	// The provider's own session id opens the session too; an event id given as a session says what it is.
	out, e, code = run("history", "show", "session", hit.Session.NativeID)
	if code != ExitOK || !strings.Contains(out, hit.Session.ID) {
		t.Fatalf("show session by native id %s: %d %s %q", hit.Session.NativeID, code, e, out)
	}
	_, e, code = run("history", "show", "session", hit.Event.ID)
	if code != ExitUsage || !strings.Contains(e, "ctx history show event "+hit.Event.ID) {
		t.Fatalf("show session of an event id: %d %q", code, e)
	}

	for _, bad := range [][]string{
		{"history", "import", "--provider", "nope"},
		{"history", "import", "--path", corpus},
		{"history", "search", "x", "--scope", "everything"},
	} {
		if _, _, code := run(bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitUsage)
		}
	}
	// No hits: "results" is an empty list in --json, never null.
	if out, _, code := run("history", "search", "zzqxjnomatchword", "--json"); code != ExitOK || !strings.Contains(out, `"results": []`) {
		t.Errorf("search with no hits --json: exit %d\n%s", code, out)
	}
	// --events --json has the shape docs/history.md gives (the CLI table's `--events` row).
	if out, e, code := run("history", "search", "the", "--events", "--limit", "2", "--json"); code != ExitOK {
		t.Errorf("search --events --json: exit %d %s", code, e)
	} else {
		var got struct {
			Hits []map[string]json.RawMessage `json:"hits"`
		}
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(out), &top) != nil || json.Unmarshal([]byte(out), &got) != nil || len(got.Hits) == 0 {
			t.Fatalf("search --events --json: %s", out)
		}
		for _, k := range []string{"hits", "content_scope", "more_available"} {
			if top[k] == nil {
				t.Errorf("search --events --json: no %q in %s", k, out)
			}
		}
		for _, k := range []string{"event", "session", "score", "snippet", "more_in_group"} {
			if got.Hits[0][k] == nil {
				t.Errorf("search --events --json: a hit without %q", k)
			}
		}
	}
	for _, missing := range [][]string{{"history", "show", "session", "zz"}, {"history", "show", "event", "00000000-0000-8000-8000-000000000000"},
		{"history", "show", "session", "--", "--------"}} {
		if _, e, code := run(missing...); code != ExitNotFound || !strings.Contains(e, "not found") {
			t.Errorf("%v: exit %d (%q), want %d (not found)", missing, code, e, ExitNotFound)
		}
	}
	// An event id of no ctx id's form names nothing: a usage error, not "not found".
	for _, id := range []string{"nope", "--------", "0000000-00", "00000000-0000-8000-8000-0000000000000"} {
		if _, e, code := run("history", "show", "event", "--", id); code != ExitUsage || !strings.Contains(e, "malformed id") {
			t.Errorf("show event %q: exit %d (%q), want %d (malformed id)", id, code, e, ExitUsage)
		}
	}

	refsAfter, _ := exec.Command("git", "-C", dir, "for-each-ref").Output()
	status, _ := exec.Command("git", "-C", dir, "status", "--porcelain", "--ignored").Output()
	if string(refsBefore) != string(refsAfter) || len(bytes.TrimSpace(status)) != 0 {
		t.Errorf("the import touched the repository: refs %q → %q, status %q", refsBefore, refsAfter, status)
	}
	// The context store is a source of the same search (provider ctx), as in the MCP search tool.
	if _, e, code := run("init"); code != ExitOK {
		t.Fatalf("init: %d %s", code, e)
	}
	if _, e, code := run("knowledge", "set", "deploy", "Deploy with make release zebraword"); code != ExitOK {
		t.Fatalf("knowledge set: %d %s", code, e)
	}
	for _, args := range [][]string{{"zebraword", "--json"}, {"zebraword", "--provider", "ctx", "--json"}} {
		out, e, code := run(append([]string{"history", "search"}, args...)...)
		if code != ExitOK || !strings.Contains(out, `"uri": "context://knowledge/deploy"`) || !strings.Contains(out, `"provider": "ctx"`) {
			t.Errorf("search %v: %d %s\n%s", args, code, e, out)
		}
	}
	if out, _, code := run("history", "search", "zebraword"); code != ExitOK || !strings.Contains(out, "ctx knowledge deploy  context://knowledge/deploy") {
		t.Errorf("text search of the store: %d %q", code, out)
	}
	if out, _, code := run("history", "search", "zebraword", "--provider", "codex", "--json"); code != ExitOK || !strings.Contains(out, `"results": []`) {
		t.Errorf("search --provider codex found the store: %d %q", code, out)
	}
	// --cursor continues from an earlier --json answer's next_cursor (the same query and flags): the next
	// hits, none of the first page's; a cursor of another query or a forged one is refused.
	type page struct {
		Results []struct {
			ID string `json:"ctx_event_id"`
		} `json:"results"`
		Pagination struct {
			NextCursor string `json:"next_cursor"`
		} `json:"pagination"`
	}
	pageOf := func(args ...string) (page, string, int) {
		out, e, code := run(append([]string{"search", "the", "--limit", "3", "--json"}, args...)...)
		var p page
		if code == ExitOK {
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("search %v: %v\n%s", args, err, out)
			}
		}
		return p, e, code
	}
	p1, _, code := pageOf()
	if code != ExitOK || len(p1.Results) != 3 || p1.Pagination.NextCursor == "" {
		t.Fatalf("first page: %d %+v", code, p1)
	}
	p2, e2, code := pageOf("--cursor", p1.Pagination.NextCursor)
	if code != ExitOK || len(p2.Results) == 0 {
		t.Fatalf("second page: %d %s %+v", code, e2, p2)
	}
	for _, a := range p1.Results {
		for _, b := range p2.Results {
			if a.ID == b.ID {
				t.Errorf("the second page repeats %s", a.ID)
			}
		}
	}
	if _, e, code := run("search", "function", "--limit", "3", "--json", "--cursor", p1.Pagination.NextCursor); code != ExitUsage || !strings.Contains(e, "cursor") {
		t.Errorf("a cursor of another query: %d %q, want exit %d (a malformed request)", code, e, ExitUsage)
	}
	if _, e, code := run("search", "the", "--limit", "3", "--json", "--cursor", "forged"); code != ExitUsage || !strings.Contains(e, "cursor") {
		t.Errorf("a forged cursor: %d %q, want exit %d (a malformed request)", code, e, ExitUsage)
	}
	if _, e, code := run("search", "the", "--events", "--cursor", p1.Pagination.NextCursor); code != ExitUsage || !strings.Contains(e, "--events") {
		t.Errorf("--cursor with --events: %d %q", code, e)
	}
	// The store's search copy (docs/history.md "The store's search copy") is kept beside the index, across
	// processes, and follows the branch: an entry set by another process is found, one removed is not,
	// and `ctx search` (the top-level name) is the same command.
	if fi, err := os.Stat(filepath.Join(dir, ".git", "ctx", "history", "store-search.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the store's search copy: %v %v", fi, err)
	}
	if _, e, code := run("knowledge", "set", "walrus", "The walrus keeps the zebraword runbook"); code != ExitOK {
		t.Fatalf("knowledge set: %d %s", code, e)
	}
	if _, e, code := run("knowledge", "rm", "deploy"); code != ExitOK {
		t.Fatalf("knowledge rm: %d %s", code, e)
	}
	for _, cmd := range [][]string{{"history", "search"}, {"search"}} {
		out, e, code := run(append(cmd, "zebraword", "--provider", "ctx", "--json")...)
		if code != ExitOK || !strings.Contains(out, `"uri": "context://knowledge/walrus"`) || strings.Contains(out, "knowledge/deploy") {
			t.Errorf("%v after set walrus, rm deploy: %d %s\n%s", cmd, code, e, out)
		}
	}
}

// TestHistoryImportHookInput: the import ctx's SessionEnd hook runs takes the session named by the
// hook's JSON on standard input (its transcript and its subagents' files) and nothing else, prints
// nothing with --quiet, and refuses a transcript_path that discovery does not find under the provider's
// root (outside it, relative, not a session file) or input that is not the hook's JSON, importing nothing.
func TestHistoryImportHookInput(t *testing.T) {
	corpus := historyCorpus(t)
	config := t.TempDir()
	projects := filepath.Join(config, "projects")
	if err := os.CopyFS(projects, os.DirFS(filepath.Join(corpus, "claude-code"))); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	dir := testenv.NewRepo(t)
	run := func(stdin string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	session := filepath.Join(projects, "agent-sessions", "subagent-layout", "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl")
	hookJSON := func(path string) string {
		b, _ := json.Marshal(map[string]string{"session_id": "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f", "transcript_path": path,
			"cwd": dir, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
		return string(b)
	}
	hook := []string{"history", "import", "--provider", "claude-code", "--hook-input", "--quiet"}
	for name, stdin := range map[string]string{
		"outside the root": hookJSON("/etc/passwd"),
		"relative":         hookJSON("agent-sessions/subagent-layout/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"),
		"dot-dot":          hookJSON(filepath.Join(projects, "..", "..", "x.jsonl")),
		"not a session":    hookJSON(strings.TrimSuffix(session, ".jsonl") + "/subagents/agent-a0ad4f44468bdf20d.meta.json"),
		"no path":          `{"session_id": "x"}`,
		"not JSON":         "SessionEnd\n",
		"empty":            "",
	} {
		if out, e, code := run(stdin, hook...); code != ExitFailure || out != "" || !strings.Contains(e, "--hook-input") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, e)
		}
	}
	if _, e, code := run(hookJSON(session), "history", "import", "--hook-input"); code != ExitUsage {
		t.Errorf("--hook-input without --provider: %d %s", code, e)
	}

	// The agent names the transcript through a symbolic link to the root's folder.
	link := filepath.Join(t.TempDir(), "projects")
	if err := os.Symlink(projects, link); err != nil {
		t.Fatal(err)
	}
	linked, err := filepath.Rel(projects, session)
	if err != nil {
		t.Fatal(err)
	}
	out, e, code := run(hookJSON(filepath.Join(link, linked)), hook...)
	if code != ExitOK || out != "" || e != "" {
		t.Fatalf("hook import: exit %d, stdout %q, stderr %q", code, out, e)
	}
	out, e, code = run("", "history", "import", "--provider", "claude-code", "--json")
	if code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	var st history.ImportStats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	// The hook imported the session and its subagent (2 sources), and nothing of the refused input.
	if st.Sources != 9 || st.Unchanged != 2 || st.Imported != 7 || st.Failed != 0 {
		t.Fatalf("the hook import took other sources than the session's: %+v", st)
	}
}

// TestAbsFile: --file takes a relative PATH from the directory ctx runs in (-C), as the index holds the
// absolute paths the agents' tools recorded; a folder prefix keeps its "/".
func TestAbsFile(t *testing.T) {
	e := &env{dir: "/work/repo/sub"}
	for in, want := range map[string]string{
		"": "", "hello.py": "/work/repo/sub/hello.py", "../x/y.go": "/work/repo/x/y.go", "src/": "/work/repo/sub/src/",
		"/abs/path.go": "/abs/path.go",
	} {
		if got, err := e.absFile(in); err != nil || got != want {
			t.Errorf("absFile(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestHistoryDamagedIndex: a damaged index (truncated, or not a database at all) makes a search fail with
// the remedy, and the next import rebuilds it from the transcripts with a warning; the search then works.
// A search of the context store alone (--provider ctx) does not need the index and works throughout.
func TestHistoryDamagedIndex(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	imp := []string{"history", "import", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code")}
	if _, e, code := run(imp...); code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	// A search of the context store alone does not need the index: it works whatever state the index is in.
	for _, args := range [][]string{{"init", "--no-hooks"}, {"knowledge", "set", "storeword", "zebrafinch lives in the store"}} {
		if _, e, code := run(args...); code != ExitOK {
			t.Fatalf("%v: %d %s", args, code, e)
		}
	}
	db := filepath.Join(dir, ".git", "ctx", "history", "index.db")
	for _, damage := range []func() error{
		func() error { return os.Truncate(db, 8192) },
		func() error { return os.WriteFile(db, bytes.Repeat([]byte("not sqlite "), 2000), 0o600) },
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		_, e, code := run("search", "files", "--provider", "claude-code")
		if code == ExitOK || !strings.Contains(e, "the agent history index is damaged") || !strings.Contains(e, "ctx history import rebuilds it") {
			t.Errorf("search of a damaged index: exit %d, %s", code, e)
		}
		if _, e, code := run("history", "list", "events"); code == ExitOK || !strings.Contains(e, "ctx history import rebuilds it") {
			t.Errorf("list events of a damaged index: exit %d, %s", code, e)
		}
		// status and sources answer, the index's problem and its remedy in their output.
		if out, e, code := run("status", "--format", "json"); code != ExitOK || !strings.Contains(out, `"error":`) || !strings.Contains(out, "ctx history import rebuilds it") {
			t.Errorf("status --format json over a damaged index: exit %d, %q %s", code, out, e)
		}
		if out, e, code := run("history", "sources", "--format", "json"); code != ExitOK || !strings.Contains(out, `"error":`) || !strings.Contains(out, "ctx history import rebuilds it") {
			t.Errorf("history sources --format json over a damaged index: exit %d, %q %s", code, out, e)
		}
		if out, e, code := run("search", "zebrafinch", "--provider", "ctx"); code != ExitOK || !strings.Contains(out, "storeword") {
			t.Errorf("search of the context store alone beside a damaged index: exit %d, %q %s", code, out, e)
		}
		_, e, code = run(imp...)
		if code != ExitOK || !strings.Contains(e, "is damaged") || !strings.Contains(e, "rebuilding it from the transcripts") {
			t.Errorf("import of a damaged index: exit %d, %s", code, e)
		}
		if out, e, code := run("search", "files", "--provider", "claude-code"); code != ExitOK || out == "" {
			t.Errorf("search after the rebuild: exit %d, %q %s", code, out, e)
		}
	}
}

// TestHistorySearchBadQuery: a query with no words (punctuation only, or blank) is a usage error (exit 2)
// in ctx's words, not a JSON Schema message or exit 1.
func TestHistorySearchBadQuery(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	if _, e, code := run("history", "import", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code")); code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	for _, q := range []string{`"`, "*", "(", "", "  "} {
		_, e, code := run("search", q)
		if code != ExitUsage || strings.Contains(e, "minLength") || !(strings.Contains(e, "no words") || strings.Contains(e, "the query is empty")) {
			t.Errorf("search %q: exit %d, %s", q, code, e)
		}
	}
	// a NUL inside a word separates words (it was SQLite's "unterminated string", exit 1)
	if _, e, code := run("search", "hello\x00function"); code != ExitOK {
		t.Errorf("search hello NUL function: exit %d, %s", code, e)
	}
	// show event's --window has the MCP tool's bounds (-1 was taken as 0)
	for _, w := range []string{"-1", "51"} {
		if _, e, code := run("history", "show", "event", "x", "--window", w); code != ExitUsage || !strings.Contains(e, "--window must be between 0 and 50") {
			t.Errorf("--window %s: exit %d, %s", w, code, e)
		}
	}
}

// TestHistorySearchLimitsAndPages: --limit is 1 to 500; above 100 hits (the MCP tool's page) --json
// prints one object whose pagination describes the whole answer (the request's limit, every result) and
// gives no cursor bound to an inner page; --type with --scope is refused as the MCP tool refuses
// event_type with content_scope.
func TestHistorySearchLimitsAndPages(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	for _, p := range []string{"claude-code", "codex"} {
		if _, e, code := run("history", "import", "--provider", p, "--path", filepath.Join(corpus, p)); code != ExitOK {
			t.Fatalf("import: %d %s", code, e)
		}
	}
	for _, args := range [][]string{
		{"--limit", "501"}, {"--limit", "5000"}, {"--limit", "0"},
		{"--scope", "calls", "--type", "message"}, {"--scope", "all", "--type", "tool_call"},
	} {
		if _, e, code := run(append([]string{"history", "search", "the", "--json"}, args...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s", args, code, e)
		}
	}
	for _, limit := range []int{150, 300} {
		out, e, code := run("history", "search", "the", "--json", "--limit", strconv.Itoa(limit))
		if code != ExitOK {
			t.Fatalf("--limit %d: exit %d, %s", limit, code, e)
		}
		var res struct {
			Results    []any          `json:"results"`
			Pagination map[string]any `json:"pagination"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Results) <= 100 {
			t.Fatalf("--limit %d: %d results, the corpus should give more than 100", limit, len(res.Results))
		}
		pg := res.Pagination
		if pg["limit"] != float64(limit) || pg["returned"] != float64(len(res.Results)) || pg["next_cursor"] != nil {
			t.Errorf("--limit %d: %d results, pagination %v", limit, len(res.Results), pg)
		}
	}
	if out, e, code := run("history", "search", "the", "--json", "--type", "message"); code != ExitOK || !strings.Contains(out, `"event_type": "message"`) {
		t.Errorf("--type alone: exit %d, %s", code, e)
	}
}

// runIn returns a runner of ctx in process with -C dir and empty stdin: its stdout, stderr and exit code.
func runIn(dir string) func(args ...string) (string, string, int) {
	return func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
}
