package app

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/adapters"
	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/hooks"
	"github.com/ctx-dev/ctx/integrations"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// parseArgs runs ctx with args up to the leaf command's options, which it returns instead of running
// the command (no store, no git), with the env the global flags filled and the exit code.
func parseArgs(t *testing.T, args ...string) (any, *env, int) {
	t.Helper()
	e := newEnv(IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	var got any
	e.capture = func(o any) { got = o }
	a := newApp(e)
	err := a.RunContext(context.Background(), normalizeArgs(a, append([]string{"ctx"}, args...)))
	if err == nil {
		err = e.unknown
	}
	return got, e, ExitCode(err)
}

func strp(s string) *string { return &s }

// TestOptions maps command lines to the options of their leaf command.
func TestOptions(t *testing.T) {
	t.Setenv("CTX_AGENT", "")
	t.Setenv("CTX_SESSION", "")
	for _, c := range []struct {
		args []string
		want any
	}{
		{[]string{"init"}, initOptions{}},
		{[]string{"init", "--branch", "team", "--remote", "up", "--no-hooks"}, initOptions{Branch: "team", Remote: "up", NoHooks: true}},
		{[]string{"knowledge", "set", "k", "some text"}, entrySetOptions{Kind: store.KnowledgeKind, Name: "knowledge", Key: "k", Content: content{Text: "some text", HasText: true}}},
		{[]string{"convention", "set", "git", "-f", "F", "--scope", "private", "--provenance", "owner_approved"},
			entrySetOptions{Kind: store.ConventionKind, Name: "convention", Key: "git", Content: content{File: "F"}, Scope: store.Private, Provenance: "owner_approved"}},
		{[]string{"knowledge", "set", "k"}, entrySetOptions{Kind: store.KnowledgeKind, Name: "knowledge", Key: "k"}},
		{[]string{"knowledge", "get", "k", "--json"}, entryGetOptions{Kind: store.KnowledgeKind, Key: "k", JSON: true}},
		{[]string{"convention", "list"}, entryListOptions{Kind: store.ConventionKind}},
		{[]string{"knowledge", "rm", "k"}, entryRmOptions{Kind: store.KnowledgeKind, Name: "knowledge", Key: "k"}},
		{[]string{"knowledge", "scope", "k", "ephemeral"}, scopeOptions{Kind: "knowledge", Key: "k", Scope: store.Ephemeral}},
		{[]string{"decision", "add", "T", "--context", "C", "--status", "accepted"},
			decisionAddOptions{Decision: store.NewDecision{Title: "T", Context: "C", Status: "accepted", Scope: store.Public}}},
		{[]string{"decision", "add", "T", "-f", "adr.md", "--json"}, decisionAddOptions{Decision: store.NewDecision{Title: "T", Status: "proposed", Scope: store.Public}, File: "adr.md", JSON: true}},
		{[]string{"decision", "list", "--json"}, decisionListOptions{JSON: true}},
		{[]string{"decision", "get", "Use X"}, decisionGetOptions{Ref: "Use X"}},
		{[]string{"decision", "set-status", "1", "superseded", "--superseded-by", "2"}, decisionSetStatusOptions{Ref: "1", Status: "superseded", SupersededBy: 2}},
		{[]string{"decision", "supersede", "1", "2"}, decisionSupersedeOptions{Old: "1", New: "2"}},
		{[]string{"status", "--json"}, statusOptions{JSON: true}},
		{[]string{"commit", "-m", "msg"}, commitOptions{Message: "msg"}},
		{[]string{"log", "-n", "3", "knowledge/a.md"}, logOptions{N: 3, Path: "knowledge/a.md"}},
		{[]string{"pull"}, syncOptions{Pull: true}},
		{[]string{"pull", "--remote", "up", "--timeout", "90s", "--strategy", "theirs"},
			syncOptions{Pull: true, Remote: "up", Timeout: 90 * time.Second, HasTimeout: true, Strategy: store.Strategy("theirs")}},
		{[]string{"push", "--remote", "up"}, syncOptions{Push: true, Remote: "up"}},
		{[]string{"sync", "--strategy", "ours"}, syncOptions{Pull: true, Push: true, Strategy: store.Strategy("ours")}},
		{[]string{"remote", "--json"}, remoteOptions{JSON: true}},
		{[]string{"config"}, configOptions{}},
		{[]string{"config", "sync.timeout"}, configOptions{Key: "sync.timeout", HasKey: true}},
		{[]string{"config", "sync.timeout", "5s"}, configOptions{Key: "sync.timeout", Value: "5s", HasKey: true, Set: true}},
		{[]string{"import", "a", "b", "-n", "--scope", "private", "--allow-secret"},
			importOptions{Paths: []string{"a", "b"}, DryRun: true, Scope: store.Private, ScopeName: "private", AllowSecret: true}},
		{[]string{"mcp", "serve", "--agent", "cursor"}, mcpServeOptions{}},
		{[]string{"state", "show"}, stateShowOptions{}},
		{[]string{"state", "set", "current_task", "a", "b"}, stateSetOptions{Field: "current_task", Patch: store.StatePatch{CurrentTask: strp("a b")}}},
		{[]string{"state", "set", "progress", "x=1"}, stateSetOptions{Field: "progress", Patch: store.StatePatch{Progress: &map[string]string{"x": "1"}}}},
		{[]string{"state", "clear"}, stateClearOptions{}},
		{[]string{"session", "start", "s1", "-m", "sum", "--knowledge", "k1", "--knowledge", "k2"},
			sessionOptions{Update: store.SessionUpdate{ID: "s1", Summary: "sum", KnowledgeAdded: []string{"k1", "k2"}}}},
		{[]string{"session", "update", "s1", "--start", "--skill", "review"}, sessionOptions{Start: true, Update: store.SessionUpdate{ID: "s1", SkillsUsed: []string{"review"}}}},
		{[]string{"--session", "s9", "session", "end"}, sessionEndOptions{ID: "s9"}},
		{[]string{"session", "end", "s1", "-m", "done"}, sessionEndOptions{ID: "s1", Summary: "done"}},
		{[]string{"session", "list"}, sessionListOptions{}},
		{[]string{"session", "show", "s1"}, sessionShowOptions{ID: "s1"}},
		{[]string{"skill", "add", "review", "-d", "D", "do it"}, skillAddOptions{Name: "review", Description: "D", Instructions: content{Text: "do it", HasText: true}, Scope: store.Public}},
		{[]string{"skill", "get", "review", "--json"}, skillNameOptions{Name: "review", JSON: true}},
		{[]string{"skill", "list"}, skillListOptions{}},
		{[]string{"skill", "rm", "review"}, skillNameOptions{Name: "review"}},
		{[]string{"--session", "s2", "skill", "usage", "review"}, skillUsageOptions{Name: "review", Session: "s2"}},
		{[]string{"skill", "rate", "review", "4", "clear", "steps"}, skillRateOptions{Name: "review", Rating: 4, Comment: "clear steps"}},
		{[]string{"skill", "stats"}, skillStatsOptions{}},
		{[]string{"skill", "feedback", "review"}, skillNameOptions{Name: "review"}},
		{[]string{"skill", "propose", "review", "-f", "S.md", "--rationale", "why"}, skillProposeOptions{Name: "review", Content: content{File: "S.md"}, Rationale: "why"}},
		{[]string{"skill", "proposals", "review", "--status", "pending"}, skillProposalsOptions{Name: "review", Status: "pending"}},
		{[]string{"skill", "upstream", "review", "p1"}, skillResolveOptions{Decision: "upstream", Name: "review", ID: "p1"}},
		{[]string{"activity", "check-in", "write", "tests", "--branch", "main", "--task-id", "t1", "--file", "a.go"},
			activityCheckInOptions{CheckIn: store.CheckIn{Task: "write tests", Branch: strp("main"), TaskID: strp("t1"), Files: []string{"a.go"}}, BranchSet: true}},
		{[]string{"activity", "intent", "change", "--path", "auth/", "--expires", "2026-12-01T18:00:00Z"},
			activityIntentOptions{Intent: store.Intent{Kind: "change", Paths: []string{"auth/"}, Areas: []string{}, ExpiresAt: "2026-12-01T18:00:00Z"}}},
		{[]string{"activity", "check-out"}, activityCheckOutOptions{}},
		{[]string{"activity", "list", "--json"}, activityListOptions{JSON: true}},
		{[]string{"team", "add", "ada", "laptop"}, teamAddOptions{Name: "ada", Machine: "laptop"}},
		{[]string{"team", "list"}, teamListOptions{}},
		{[]string{"team", "token", "list", "--json"}, teamTokenListOptions{JSON: true}},
		{[]string{"team", "token", "revoke", "ada"}, teamTokenRevokeOptions{Who: "ada"}},
		{[]string{"mcp", "serve", "--http", ":8765"}, mcpServeOptions{HTTP: ":8765"}},
		{[]string{"conflicts", "--full"}, conflictsOptions{Full: true}},
		{[]string{"resolve", "knowledge/a.md", "--theirs"}, resolveOptions{Target: "knowledge/a.md", Choice: "theirs"}},
		{[]string{"resolve", "c1", "-f", "-"}, resolveOptions{Target: "c1", Choice: "file", File: "-"}},
		{[]string{"hooks", "install", "--json"}, hooksOptions{Verb: "install", JSON: true}},
		{[]string{"hooks", "install", "--blame"}, hooksOptions{Verb: "install", Blame: true}},
		{[]string{"hooks", "uninstall"}, hooksOptions{Verb: "uninstall"}},
		{[]string{"hooks", "run", "post-checkout", "a", "b", "1"}, hooksRunOptions{Hook: hooks.Hook("post-checkout"), Args: []string{"a", "b", "1"}}},
		{[]string{"doctor", "--fix"}, doctorOptions{Fix: true}},
		{[]string{"export", "-o", "AGENTS.md", "--max-bytes", "100"}, exportOptions{Output: "AGENTS.md", MaxBytes: 100}},
		{[]string{"export", "-o", "NOTES.md", "--force"}, exportOptions{Output: "NOTES.md", Force: true}},
		{[]string{"integrations", "install", "mcp", "--client", "cursor"},
			integrationsOptions{Verb: "install", Clients: []string{"cursor"}, Scope: "project", Name: integrations.DefaultServerName, Command: "ctx"}},
		{[]string{"integrations", "status", "mcp", "--scope", "user"}, integrationsOptions{Verb: "status", Scope: integrations.Scope("user"), Name: integrations.DefaultServerName}},
		{[]string{"integrations", "install", "hooks", "--client", "gemini"}, agentHooksOptions{Verb: "install", Client: "gemini", Scope: "project"}},
		{[]string{"integrations", "remove", "hooks"}, agentHooksOptions{Verb: "remove", Client: "claude-code", Scope: "project"}},
		{[]string{"adapters", "list", "--json"}, adaptersListOptions{JSON: true}},
		{[]string{"adapters", "export", "--client", "claude-code", "--client", "cursor", "-n", "--max-bytes", "4096"},
			adaptersExportOptions{Clients: []string{"claude-code", "cursor"}, DryRun: true, MaxBytes: 4096}},
		{[]string{"adapters", "export"}, adaptersExportOptions{}},
		{[]string{"adapters", "remove", "--dry-run"}, adaptersRemoveOptions{DryRun: true}},
		{[]string{"--allow-secret", "adapters", "import", "--client", "codex", "--json"}, adaptersImportOptions{Clients: []string{"codex"}, JSON: true, AllowSecret: true}},
		{[]string{"adapters", "status", "--client", "gemini"}, adaptersStatusOptions{Clients: []string{"gemini"}}},
		{[]string{"adapters", "brief"}, adaptersBriefOptions{MaxBytes: adapters.DefaultMaxBlock, Format: "text"}},
		{[]string{"adapters", "brief", "--format", "gemini", "--max-bytes", "2048"}, adaptersBriefOptions{MaxBytes: 2048, Format: "gemini"}},
		{[]string{"adapters", "hooks", "install"}, agentHooksOptions{Verb: "install", Client: "claude-code"}},
		{[]string{"adapters", "hooks", "status", "--client", "gemini", "--scope", "project"}, agentHooksOptions{Verb: "status", Client: "gemini", Scope: "project"}},
		{[]string{"adapters", "enable", "claude-code", "cursor", "--tracked", "ok"}, adaptersEnableOptions{Enable: true, Clients: []string{"claude-code", "cursor"}, Tracked: "ok"}},
		{[]string{"adapters", "disable", "cursor"}, adaptersEnableOptions{Clients: []string{"cursor"}}},
		{[]string{"history", "sources", "--json"}, historySourcesOptions{JSON: true}},
		{[]string{"blame", "main.go"}, blameOptions{Target: "main.go", Path: "main.go", Start: 1}},
		{[]string{"blame", "src/a:b.go:10-20", "--json", "--no-import"},
			blameOptions{Target: "src/a:b.go:10-20", Path: "src/a:b.go", Start: 10, End: 20, HasLines: true, NoImport: true, JSON: true}},
		{[]string{"blame", "x.go:7", "--index", "IX"}, blameOptions{Target: "x.go:7", Path: "x.go", Start: 7, End: 7, HasLines: true, Index: "IX"}},
		{[]string{"blame", "--commit", "HEAD~2"}, blameOptions{Target: "HEAD~2", Commit: true}},
		{[]string{"history", "import"}, historyImportOptions{}},
		{[]string{"history", "import", "--provider", "claude-code", "--path", "/backup/projects", "--index", "IX", "--json"},
			historyImportOptions{Provider: history.ClaudeCode, Path: "/backup/projects", Index: "IX", JSON: true}},
		{[]string{"history", "import", "--provider", "gemini-cli", "--hook-input", "--quiet"},
			historyImportOptions{Provider: history.GeminiCLI, HookInput: true, Quiet: true}},
		{[]string{"history", "search", "flaky", "test"}, historySearchOptions{Query: history.Query{Text: "flaky test", Scope: history.ScopeAll, Limit: 20}}},
		{[]string{"history", "search", "go", "test", "--provider", "codex", "--provider", "opencode", "--scope", "calls", "--since", "2026-11-01",
			"--until", "2026-11-30", "--file", "store/", "--in-session", "3f2a9c1d", "--repo", "/src/ctx", "--primary-only", "--events", "--limit", "50",
			"--index", "IX", "--json"},
			historySearchOptions{Query: history.Query{Text: "go test", Providers: []history.Provider{history.Codex, history.OpenCode}, Scope: history.ScopeCalls,
				Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), File: "store/",
				SessionID: "3f2a9c1d", Repo: "/src/ctx", PrimaryOnly: true, Dense: true, Limit: 50}, Index: "IX", JSON: true,
				Names: []string{"codex", "opencode"}}},
		{[]string{"history", "search", "deploy", "--provider", "ctx"}, historySearchOptions{Query: history.Query{Text: "deploy", Scope: history.ScopeAll, Limit: 20},
			WithCtx: true, Names: []string{"ctx"}}},
		{[]string{"history", "search", "x", "--type", "tool_call"}, historySearchOptions{Query: history.Query{Text: "x", Scope: history.ScopeAll, EventType: history.EventType("tool_call"), Limit: 20}}},
		{[]string{"history", "show", "session", "3f2a9c1d", "--max-events", "2", "--json"}, historyShowSessionOptions{ID: "3f2a9c1d", MaxEvents: 2, JSON: true}},
		{[]string{"history", "show", "event", "e1", "--window", "3", "--index", "IX"}, historyShowEventOptions{ID: "e1", Window: 3, Index: "IX"}},
	} {
		got, _, code := parseArgs(t, c.args...)
		if code != ExitOK || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ctx %s: exit %d, options\n%#v\nwant\n%#v", strings.Join(c.args, " "), code, got, c.want)
		}
	}
}

// TestGlobalFlags: -C, --agent, --session and --allow-secret fill env, before or after the command.
func TestGlobalFlags(t *testing.T) {
	t.Setenv("CTX_AGENT", "")
	t.Setenv("CTX_SESSION", "")
	_, e, code := parseArgs(t, "-C", "dir", "--allow-secret", "knowledge", "list", "--agent", "claude-code", "--session", "s1")
	if code != ExitOK || e.dir != "dir" || e.actor != (store.Actor{Agent: "claude-code", Session: "s1"}) || !e.allowSecret {
		t.Errorf("exit %d, env dir %q actor %+v allowSecret %v", code, e.dir, e.actor, e.allowSecret)
	}
	t.Setenv("CTX_AGENT", "cursor")
	if _, e, _ := parseArgs(t, "status"); e.actor.Agent != "cursor" {
		t.Errorf("CTX_AGENT: actor %+v", e.actor)
	}
}

// TestUsageErrors: command lines that are usage errors (exit 2) before any store is opened.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bogus"}, {"decision", "bogus"}, {"--bogus"}, {"status", "--bogus"}, {"log", "-n", "abc"},
		{"init", "extra"}, {"push", "upstream"}, {"pull", "origin"}, {"sync", "x"}, {"team", "token", "add"}, {"team", "token", "add", "ada", "--expires", "soon"}, {"team", "token", "add", "ada", "--email", "a@x", "--expires", "213504d"}, {"team", "token", "add", "ada"}, {"team", "token", "revoke"}, {"mcp", "serve", "--tls-cert", "c.pem"},
		{"blame"}, {"blame", "a.go", "b.go"}, {"blame", "a.go:0-3"}, {"blame", "a.go:9-3"},
		{"knowledge", "set"}, {"knowledge", "set", "k", "t", "-f", "F"}, {"knowledge", "set", "k", "--scope", "bogus"},
		{"knowledge", "get"}, {"knowledge", "scope", "k"}, {"knowledge", "scope", "k", "nowhere"},
		{"decision", "add"}, {"decision", "add", "T", "-f", "F", "--context", "C"}, {"decision", "add", "T", "--status", "maybe"},
		{"decision", "set-status", "1", ""}, {"decision", "set-status", "1", "bogus"}, {"decision", "supersede", "1"},
		{"pull", "--strategy", "mine"}, {"config", "a", "b", "c"},
		{"import"}, {"import", "x", "--scope", "bogus"},
		{"state", "set"}, {"state", "set", "mood", "good"}, {"state", "set", "progress", "novalue"},
		{"session", "update"}, {"session", "end"}, {"session", "show"},
		{"skill", "add", "x"}, {"skill", "add", "-d", "D"}, {"skill", "rate", "x"}, {"skill", "rate", "x", "five"},
		{"skill", "propose"}, {"skill", "proposals", "--status", "bogus"}, {"skill", "accept", "x"},
		{"activity", "intent", "change"}, {"activity", "intent", "--expires", "2026-12-01T18:00:00Z"},
		{"team", "add"}, {"conflicts", "x"}, {"resolve", "x"}, {"resolve", "x", "--ours", "--theirs"},
		{"hooks", "run"}, {"hooks", "run", "pre-commit"}, {"export", "x"}, {"export", "--max-bytes", "-1"},
		{"integrations", "install"}, {"integrations", "install", "lsp"},
		{"integrations", "install", "hooks", "--client", "claude-code", "--client", "gemini"},
		{"adapters", "list", "x"}, {"adapters", "export", "x"}, {"adapters", "remove", "x"}, {"adapters", "import", "x"},
		{"adapters", "status", "x"}, {"adapters", "brief", "--max-bytes", "100"}, {"adapters", "brief", "--format", "yaml"},
		{"adapters", "hooks", "install", "x"}, {"adapters", "enable"}, {"adapters", "disable"},
		{"adapters", "enable", "cursor", "--tracked", "maybe"}, {"adapters", "disable", "cursor", "--tracked", "ok"},
		{"history", "import", "--provider", "nope"}, {"history", "import", "--path", "dir"},
		{"history", "import", "--hook-input"}, {"history", "import", "--provider", "codex", "--hook-input", "--path", "dir"},
		{"history", "import", "--quiet", "--json"},
		{"history", "search"}, {"history", "search", "x", "--limit", "0"}, {"history", "search", "x", "--provider", "nope"}, {"history", "search", "x", "--provider", "ctx", "--events"},
		{"history", "search", "x", "--since", "yesterday"}, {"history", "search", "x", "--until", "2026-13-01"},
		{"history", "show", "session"}, {"history", "show", "session", "a", "b"}, {"history", "show", "event"},
		{"history", "show", "session", "a", "--max-events", "-5"},
	} {
		got, _, code := parseArgs(t, args...)
		if code != ExitUsage || got != nil {
			t.Errorf("ctx %s: exit %d (want %d), options %#v", strings.Join(args, " "), code, ExitUsage, got)
		}
	}
}

// TestHelpSections: every command's help has a description, examples and an EXIT STATUS section that
// lists 0, 1 and 130 and only codes ctx has.
func TestHelpSections(t *testing.T) {
	a := newApp(newEnv(IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}))
	var walk func(path []string, cmds []*cli.Command)
	n := 0
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			n++
			var out, errb bytes.Buffer
			code := Run(context.Background(), append(append([]string{"ctx"}, p...), "--help"), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
			help := out.String()
			if code != ExitOK {
				t.Errorf("ctx %s --help: exit %d %s", strings.Join(p, " "), code, errb.String())
			}
			for _, section := range []string{"DESCRIPTION:\n   ", "EXAMPLES:\n   ctx ", "EXIT STATUS:\n   0    ", "\n   1    ", "\n   130  "} {
				if !strings.Contains(help, section) {
					t.Errorf("ctx %s --help lacks %q:\n%s", strings.Join(p, " "), section, help)
				}
			}
			_, exitPart, _ := strings.Cut(help, "EXIT STATUS:\n")
			for _, line := range strings.Split(strings.TrimSpace(exitPart), "\n") {
				var code int
				if _, err := fmt.Sscan(line, &code); err != nil || exitMeaning[code] == "" {
					t.Errorf("ctx %s --help: exit status line %q", strings.Join(p, " "), line)
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, a.Commands)
	if n < 70 {
		t.Errorf("walked %d commands", n)
	}
	var out bytes.Buffer
	Run(context.Background(), []string{"ctx", "--help"}, IO{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}})
	if !strings.Contains(out.String(), "EXIT STATUS:\n   0    success\n   1    ") || !strings.Contains(out.String(), "   5    ") {
		t.Errorf("ctx --help:\n%s", out.String())
	}
}

// TestExitCodeByType: ExitCode reads the type of an error, never its message.
func TestExitCodeByType(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("flag provided but not defined: -x"), ExitFailure},
		{fmt.Errorf("Required flag %q not set", "d"), ExitFailure},
		{fmt.Errorf("No help topic for 'x'"), ExitFailure},
		{usagef("anything"), ExitUsage},
		{fmt.Errorf("wrapped: %w", usagef("x")), ExitUsage},
		{fmt.Errorf("x: %w", store.ErrNotInitialized), ExitNoStore},
		{&store.NotFoundError{Msg: "gone"}, ExitNotFound},
		{context.Canceled, exitInterrupted},
		{fmt.Errorf("unknown client %q", "nope"), ExitFailure},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	// The adapters' bad arguments (an unknown client, a bound too small, a client without session hooks)
	// are usage errors by their type.
	_, err := adapters.Lookup("nope")
	if got := ExitCode(err); got != ExitUsage {
		t.Errorf("ExitCode(%v) = %d, want %d", err, got, ExitUsage)
	}
}
