package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestHistoryConfiguredSources: ctx history sources add keeps a configured root (name, group) in the
// local ctx config, sources lists it as configured, import imports it; hostile names and paths are usage
// errors that change nothing; remove takes it out; nothing reaches the repository's refs.
func TestHistoryConfiguredSources(t *testing.T) {
	corpus := historyCorpus(t)
	t.Setenv("HOME", t.TempDir()) // no provider root of the machine running the test
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	refsBefore, _ := exec.Command("git", "-C", dir, "for-each-ref").Output()
	cfgPath := filepath.Join(dir, ".git", "ctx", "config.json")

	if out, e, code := run("history", "sources", "add", "--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--group", "team"); code != ExitOK || !strings.Contains(out, "root codex-codex") {
		t.Fatalf("add codex: %d %q %s", code, out, e)
	}
	if _, e, code := run("history", "sources", "add", "--provider", "cursor", "--path", filepath.Join(corpus, "cursor"), "--root", "cur"); code != ExitOK {
		t.Fatalf("add cursor: %d %s", code, e)
	}
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}

	// Hostile or wrong input: a usage error, the config unchanged.
	file := filepath.Join(t.TempDir(), "f")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(corpus, "codex"), link); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{
		{"--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--root", "../etc"},
		{"--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--root", strings.Repeat("r", 65)},
		{"--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--root", "x", "--group", "a b"},
		{"--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--root", "x", "--group", ""},
		{"--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--root", "x"}, // the same directory again
		{"--provider", "cursor", "--path", filepath.Join(corpus, "gemini-cli"), "--root", "cur"},
		{"--provider", "nope", "--path", corpus},
		{"--provider", "codex"},
		{"--provider", "codex", "--path", filepath.Join(dir, "nowhere")},
		{"--provider", "codex", "--path", file},
		{"--provider", "codex", "--path", link},
		{"--provider", "codex", "--path", "/"},
		{"--provider", "codex", "--path", "/tmp/a\nb", "--root", "nl"},
	} {
		if _, e, code := run(append([]string{"history", "sources", "add"}, bad...)...); code != ExitUsage {
			t.Errorf("add %q: exit %d (%s), want %d", bad, code, e, ExitUsage)
		}
	}
	if after, _ := os.ReadFile(cfgPath); !bytes.Equal(before, after) {
		t.Errorf("a refused add changed the config:\n%s\n→\n%s", before, after)
	}

	out, e, code := run("history", "sources", "--json")
	if out2, e2, code2 := run("sources", "--format", "json"); code2 != ExitOK || out2 != out {
		t.Errorf("sources --format json: exit %d, %s; differs from --json: %v", code2, e2, out2 != out)
	}
	if _, _, code2 := run("sources", "--format", "yaml"); code2 != ExitUsage {
		t.Errorf("sources --format yaml: exit %d", code2)
	}
	if code != ExitOK {
		t.Fatalf("sources: %d %s", code, e)
	}
	// --json is the MCP sources tool's object (docs/mcp.md): rows with the sessions the index holds.
	type row struct {
		Provider        string `json:"provider"`
		Root            string `json:"root"`
		Exists          bool   `json:"exists"`
		IndexedSessions int    `json:"indexed_sessions"`
		Selection       struct {
			Kind  string  `json:"kind"`
			Root  *string `json:"root"`
			Group *string `json:"group"`
		} `json:"selection"`
	}
	checkRows := func(out string, codexN, curN int) {
		t.Helper()
		var obj struct {
			AutomaticDiscovery bool  `json:"automatic_discovery"`
			Sources            []row `json:"sources"`
		}
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatal(err)
		}
		configured := 0
		for _, r := range obj.Sources {
			switch {
			case r.Provider == "ctx":
			case r.Selection.Kind == "automatic": // indexed_sessions: every session of the provider
				if r.Selection.Root != nil || r.Selection.Group != nil || codexN == 0 && r.IndexedSessions != 0 {
					t.Errorf("automatic row %+v", r)
				}
			case r.Selection.Kind == "configured":
				configured++
				switch *r.Selection.Root {
				case "codex-codex":
					if r.Provider != "codex" || r.Selection.Group == nil || *r.Selection.Group != "team" || r.IndexedSessions != codexN || !r.Exists {
						t.Errorf("codex row %+v", r)
					}
				case "cur":
					if r.Provider != "cursor" || r.Selection.Group != nil || r.IndexedSessions != curN {
						t.Errorf("cursor row %+v", r)
					}
				default:
					t.Errorf("row %+v", r)
				}
			}
		}
		if !obj.AutomaticDiscovery || configured != 2 || len(obj.Sources) != len(history.Providers)+3 {
			t.Errorf("sources: %s", out)
		}
	}
	checkRows(out, 0, 0)
	// The table counts what discovery finds under each root.
	if out, _, _ := run("history", "sources"); !strings.Contains(out, "configured codex-codex (group team)") ||
		!regexp.MustCompile(`(?m)^codex +7 +configured codex-codex`).MatchString(out) || !regexp.MustCompile(`(?m)^cursor +3 +configured cur`).MatchString(out) {
		t.Errorf("sources text: %q", out)
	}

	// import takes the configured roots (the automatic ones are empty here); --provider narrows them.
	out, e, code = run("history", "import", "--provider", "cursor", "--json")
	var st history.ImportStats
	if code != ExitOK || json.Unmarshal([]byte(out), &st) != nil || st.Sources != 3 || st.Imported != 3 {
		t.Fatalf("import --provider cursor: %d %s %q", code, e, out)
	}
	out, e, code = run("history", "import", "--json")
	if code != ExitOK || json.Unmarshal([]byte(out), &st) != nil || st.Sources != 10 || st.Imported != 7 || st.Unchanged != 3 {
		t.Fatalf("import: %d %s %+v", code, e, st)
	}
	out, _, _ = run("history", "sources", "--json")
	checkRows(out, 6, 3) // the sessions the index now holds under each configured root (its 7 codex sources are 6 sessions)

	if _, _, code := run("history", "sources", "remove", "nope"); code != ExitUsage {
		t.Errorf("remove of an unknown root: exit %d", code)
	}
	if out, _, code := run("history", "sources", "remove", "cur"); code != ExitOK || !strings.Contains(out, "removed root cur") {
		t.Errorf("remove: %d %q", code, out)
	}
	if cfg, _ := os.ReadFile(cfgPath); strings.Contains(string(cfg), `"cur"`) || !strings.Contains(string(cfg), `"codex-codex"`) {
		t.Errorf("config after remove: %s", cfg)
	}
	refsAfter, _ := exec.Command("git", "-C", dir, "for-each-ref").Output()
	if string(refsBefore) != string(refsAfter) {
		t.Errorf("configuring sources touched the refs: %q → %q", refsBefore, refsAfter)
	}
}

// TestHistoryListEventsAndAliases: ctx history list events streams every selected event (JSON Lines with
// --json) in time order; the top-level names of the agent-history CLI (sources, search, show, list) run
// the same commands; ctx status --format json adds the index and local usage.
func TestHistoryListEventsAndAliases(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	out, e, code := run("history", "import", "--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--json")
	var st history.ImportStats
	if code != ExitOK || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("import: %d %s", code, e)
	}
	completions := map[string]map[string]any{}
	events := func(args ...string) []map[string]any {
		t.Helper()
		evs := jsonLines(t, run, args...)
		// The stream ends with its completion record, and holds no other.
		last := evs[len(evs)-1]
		if last["kind"] != "completion" || last["stream"] != "events" || last["returned"] != float64(len(evs)-1) {
			t.Fatalf("%v: the last line is not the completion record: %v", args, last)
		}
		completions[strings.Join(args, " ")] = last
		return evs[:len(evs)-1]
	}
	// The index holds 283 events of the 6 Codex sessions (turn-2 replaces turn-1's session); pages of
	// 1,000 are not needed to see them all, --limit is.
	all := events("history", "list", "events", "--json")
	ids := map[string]bool{}
	var last time.Time
	for _, ev := range all {
		ids[ev["ctx_event_id"].(string)] = true
		s, _ := ev["at"].(string)
		at, _ := time.Parse(time.RFC3339Nano, s)
		if s != "" && at.Before(last) || ev["provider"] != "codex" {
			t.Fatalf("event out of order or provider: %v after %s", ev, last)
		}
		if s != "" {
			last = at
		}
	}
	if len(ids) != len(all) || len(all) < 200 {
		t.Fatalf("list events: %d events, %d distinct", len(all), len(ids))
	}
	if desc := events("history", "list", "events", "--json", "--order", "desc", "--limit", "3"); len(desc) != 3 || desc[0]["ctx_event_id"] != all[len(all)-1]["ctx_event_id"] {
		t.Errorf("--order desc --limit 3: %v", desc)
	}
	if c := completions["history list events --json --order desc --limit 3"]; c["truncated"] != true || c["complete"] != false || c["limit"] != float64(3) {
		t.Errorf("--limit 3 completion: %v", c)
	}
	if c := completions["history list events --json"]; c["truncated"] != false || c["complete"] != true || c["limit"] != nil || c["generation"] == float64(0) {
		t.Errorf("list events completion: %v", c)
	}
	events("history", "list", "events", "--json", "--limit", fmt.Sprint(len(all)))
	if c := completions["history list events --json --limit "+fmt.Sprint(len(all))]; c["truncated"] != false || c["complete"] != true {
		t.Errorf("--limit of exactly every event: %v", c)
	}
	root := history.SessionID(history.Codex, "codex-session-root")
	sess := events("list", "events", "--json", "--session", root[:13])
	if len(sess) != 7 {
		t.Errorf("--session: %d events, want 7", len(sess))
	}
	for _, ev := range sess {
		if ev["ctx_session_id"] != root {
			t.Errorf("--session returned %v", ev)
		}
	}
	calls := events("list", "events", "--json", "--type", "tool_call", "--role", "assistant")
	for _, ev := range calls {
		if ev["type"] != "tool_call" {
			t.Errorf("--type tool_call returned %v", ev["type"])
		}
	}
	if len(calls) == 0 {
		t.Error("no tool calls")
	}
	if out, _, code := run("list", "events", "--type", "tool_call", "--limit", "4"); code != ExitOK || strings.Count(out, "\n") != 4 || !strings.Contains(out, " codex tool_call") {
		t.Errorf("text list: %d %q", code, out)
	}
	for _, bad := range [][]string{{"list", "events", "--type", "nope"}, {"list", "events", "--order", "up"}, {"list", "events", "--limit", "-1"},
		{"list", "events", "extra"}, {"status", "--format", "yaml"}} {
		if _, _, code := run(bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitUsage)
		}
	}
	if _, _, code := run("list", "events", "--session", "zz"); code != ExitNotFound {
		t.Errorf("list events --session of no session: exit %d, want %d (not found)", code, ExitNotFound)
	}

	// The top-level names are the history commands.
	a, _, _ := run("history", "search", "apply_patch", "--json")
	b, _, code := run("search", "apply_patch", "--json")
	if code != ExitOK || a != b || !strings.Contains(a, "apply_patch") {
		t.Errorf("ctx search differs from ctx history search")
	}
	if out, _, code := run("show", "session", root[:8]); code != ExitOK || !strings.Contains(out, "7 events") {
		t.Errorf("ctx show session: %d %q", code, out)
	}
	if out, _, code := run("show", "event", sess[1]["ctx_event_id"].(string), "--window", "1"); code != ExitOK || !strings.Contains(out, sess[1]["ctx_event_id"].(string)) {
		t.Errorf("ctx show event: %d %q", code, out)
	}
	if out, _, code := run("sources", "--json"); code != ExitOK || !strings.Contains(out, `"kind": "automatic"`) {
		t.Errorf("ctx sources: %d %q", code, out)
	}

	// status --format json: the store's status, the index and local usage.
	if _, e, code := run("init"); code != ExitOK {
		t.Fatalf("init: %d %s", code, e)
	}
	out, e, code = run("status", "--format", "json")
	var status struct {
		Branch  string `json:"branch"`
		History struct {
			Exists bool `json:"exists"`
			Events int  `json:"events"`
		} `json:"history"`
		Upgrade struct {
			State        string         `json:"state"`
			HistoryIndex map[string]any `json:"history_index"`
			ContextStore map[string]any `json:"context_store"`
		} `json:"upgrade"`
		LocalUsage map[string]any `json:"local_usage"`
		ReadOnly   *bool          `json:"read_only"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &status) != nil {
		t.Fatalf("status --format json: %d %s %q", code, e, out)
	}
	if status.Branch == "" || !status.History.Exists || status.History.Events != len(all) || status.LocalUsage["state"] == nil || status.ReadOnly != nil ||
		status.LocalUsage["tool_calls"] != nil || status.LocalUsage["definition_version"] == nil ||
		status.Upgrade.State != "current" || status.Upgrade.HistoryIndex["state"] != "current" || status.Upgrade.ContextStore["state"] != "current" {
		t.Errorf("status --format json = %s", out)
	}
	// The counters are ctx mcp usage's (none yet: no MCP server ran here).
	out, e, code = run("mcp", "usage", "--json")
	var usage map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &usage) != nil || usage["tool_calls"] != float64(0) || usage["state"] != "recording" ||
		usage["mcp_response_bytes"] != float64(0) || usage["definition_version"] == nil {
		t.Errorf("mcp usage --json: %d %s %q", code, e, out)
	}
	if out, _, code = run("mcp", "usage"); code != ExitOK || !strings.Contains(out, "0 tool calls, 0 response bytes") {
		t.Errorf("mcp usage: %d %q", code, out)
	}
}

// TestHistoryIndexNeverPushed: after importing transcripts and configuring a root, ctx push and git push
// --mirror give the remote no object holding the index, the configured root or a transcript's text.
func TestHistoryIndexNeverPushed(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	remote := testenv.BareRemote(t)
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	run := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	run("init")
	run("history", "sources", "add", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code"), "--root", "zanzibar-root")
	run("history", "import")
	run("knowledge", "set", "notes", "Nothing of the history.")
	run("push")
	testenv.Git(t, dir, "push", "-q", "--mirror", "origin") // even everything git itself would push
	if !strings.Contains(testenv.Git(t, remote, "for-each-ref"), "refs/heads/ctx") {
		t.Fatal("the context branch did not reach the remote")
	}
	objects := testenv.Git(t, remote, "rev-list", "--objects", "--all")
	for _, bad := range []string{"index.db", "config.json", "mcp-usage.json"} {
		if strings.Contains(objects, bad) {
			t.Errorf("the remote holds %s:\n%s", bad, objects)
		}
	}
	// No blob of any pushed ref holds a transcript's text or the configured root (the grep does find
	// what was pushed).
	if out, _ := testenv.GitErr(remote, "grep", "-F", "-l", "-e", "Nothing of the history", "refs/heads/ctx"); !strings.Contains(out, "knowledge/notes.md") {
		t.Fatalf("git grep of the remote's context branch: %q", out)
	}
	for _, needle := range []string{"Create a hello world function", "zanzibar-root", corpus} {
		for _, ref := range strings.Fields(testenv.Git(t, remote, "for-each-ref", "--format=%(refname)")) {
			if out, _ := testenv.GitErr(remote, "grep", "-F", "-l", "-e", needle, ref); strings.TrimSpace(out) != "" {
				t.Errorf("%s holds %q: %s", ref, needle, out)
			}
		}
	}
}

// TestHistoryImportPathSymlink: ctx history import --path refuses a symbolic link, and a path through
// one, as ctx history sources add does (discovery follows no link): a usage error naming the real path,
// nothing imported.
func TestHistoryImportPathSymlink(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	links := t.TempDir()
	if err := os.Symlink(filepath.Join(corpus, "claude-code"), filepath.Join(links, "cc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(corpus, filepath.Join(links, "corpus")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(links, "cc"), filepath.Join(links, "corpus", "claude-code")} {
		for _, cmd := range [][]string{{"history", "import", "--provider", "claude-code", "--path", p},
			{"history", "sources", "add", "--provider", "claude-code", "--path", p, "--root", "x"}} {
			out, e, code := run(cmd...)
			if code != ExitUsage || !strings.Contains(e, "symbolic link") || !strings.Contains(e, filepath.Join(corpus, "claude-code")) {
				t.Errorf("%v: exit %d, %q %s", cmd, code, out, e)
			}
		}
	}
	if out, _, _ := run("history", "sources", "--format", "json"); !strings.Contains(out, `"sessions": 0`) {
		t.Errorf("something was imported: %s", out)
	}
}

// TestHistoryInvalidConfiguredSources: a hand-edited history.sources that holds an invalid
// root (a name with a slash, more than 256 roots) is the error that names it for every command that reads
// the config: `ctx history import` and `ctx history sources` exited 0 with every configured root skipped,
// where `sources --json`, `status` and `mcp serve` exited 2.
func TestHistoryInvalidConfiguredSources(t *testing.T) {
	corpus := historyCorpus(t)
	t.Setenv("HOME", t.TempDir()) // no provider root of the machine running the test
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	if _, e, code := run("history", "sources", "add", "--provider", "codex", "--path", filepath.Join(corpus, "codex"), "--root", "ok1"); code != ExitOK {
		t.Fatalf("add: %d %s", code, e)
	}
	cfgPath := filepath.Join(dir, ".git", "ctx", "config.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	good := cfg["history.sources"].([]any)[0]
	many := []any{good}
	for i := range 256 {
		many = append(many, map[string]any{"root": fmt.Sprintf("r%d", i), "provider": "codex", "path": fmt.Sprintf("/nonexistent/r%d", i)})
	}
	for _, c := range []struct {
		name    string
		sources any
		want    string
	}{
		{"a root named bad/name", []any{good, map[string]any{"root": "bad/name", "provider": "codex", "path": "/tmp"}}, "history source 2: the root name"},
		{"257 roots", many, "more than 256 configured history sources"},
		// An unknown provider was a configured root that found nothing (exit 0), and
		// history.sources of the wrong JSON type exited 1.
		{"provider nosuch", []any{good, map[string]any{"root": "lap", "provider": "nosuch", "path": "/tmp/x"}}, "history source lap: the provider is not one of claude-code, codex"},
		{"history.sources an object", map[string]any{"root": "lap"}, "history.sources is not a list"},
		{"a root of a number", []any{map[string]any{"root": 5, "provider": "codex", "path": "/tmp/x"}}, "history.sources is not a list"},
	} {
		cfg["history.sources"] = c.sources
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"history", "import", "--index", t.TempDir()}, {"history", "sources"}, {"sources"}, {"history", "sources", "--json"},
			{"status"}, {"mcp", "serve"},
		} {
			if out, e, code := run(args...); code != ExitUsage || !strings.Contains(e, c.want) || !strings.Contains(e, cfgPath) {
				t.Errorf("%s: ctx %s: exit %d, stdout %.200q, stderr %.300q", c.name, strings.Join(args, " "), code, out, e)
			}
		}
	}
}
