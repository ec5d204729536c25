package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/blame"
	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
)

// TestNodeClient drives a server binary (mcp/internal/testserver: the store of its working directory on
// stdio, as `ctx mcp serve` does) with the official MCP TypeScript SDK (mcp/node/client.mjs), which
// lists and reads the resources, lists the tools and calls get_project_context; the SDK also checks
// structuredContent against the tool's outputSchema, for the tool errors of malformed arguments too (it
// calls get_project_context, context_add_knowledge and context_update_state with bad arguments). The
// same client then runs over the SDK's Streamable HTTP transport against the HTTP server, with a
// bearer token.
//
// The SDK is provisioned beforehand by `make node-client` (npm ci into mcp/node/node_modules, which
// .ci/run runs before `make test`): the test never installs anything. Without node or the provisioned
// SDK it is skipped with a message saying so, unless CTX_REQUIRE_NODE=1 (set by .ci/run), which makes
// that a failure. Each step has its own bound: the build (buildTestServer) and the node run.
func TestNodeClient(t *testing.T) {
	node, clientDir := nodeSetup(t)
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	t.Run("stdio", func(t *testing.T) {
		nodeClient(t, node, clientDir, buildTestServer(t), dir)
	})
	t.Run("http", func(t *testing.T) {
		h := startHTTP(t, st, Options{}, HTTPOptions{})
		nodeClient(t, node, clientDir, h.url+HTTPPath, h.token(t, tokens.Spec{Member: "Ada Lovelace"}))
	})
}

// nodeClient runs client.mjs against target (a server binary, or an HTTP endpoint) with arg (the
// repository, or the bearer token) and checks what it listed and read.
func nodeClient(t *testing.T, node, clientDir, target, arg string) {
	const nodeLimit = 60 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), nodeLimit)
	defer cancel()
	run := exec.CommandContext(ctx, node, filepath.Join(clientDir, "client.mjs"), target, arg, "engine-notes")
	var stderr strings.Builder
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("node client (bound %v): %v\nstdout: %s\nstderr: %s", nodeLimit, err, out, stderr.String())
	}
	var got struct {
		Server              map[string]any            `json:"server"`
		Resources           []string                  `json:"resources"`
		Templates           []string                  `json:"templates"`
		Reads               map[string]map[string]any `json:"reads"`
		Tools               []string                  `json:"tools"`
		ProjectContext      map[string]any            `json:"projectContext"`
		ProjectContextError bool                      `json:"projectContextError"`
		Prompts             []string                  `json:"prompts"`
		Onboarding          string                    `json:"onboarding"`
		ArgErrors           map[string]struct {
			IsError bool           `json:"isError"`
			Value   map[string]any `json:"value"`
			Text    string         `json:"text"`
			Thrown  string         `json:"thrown"`
		} `json:"argErrors"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node client output %q: %v\nstderr: %s", out, err, stderr.String())
	}
	if got.Server["name"] != ServerName {
		t.Errorf("server = %v", got.Server)
	}
	if !reflect.DeepEqual(got.Resources, wantResources) {
		t.Errorf("resources = %v", got.Resources)
	}
	if !reflect.DeepEqual(got.Templates, wantTemplates) {
		t.Errorf("templates = %v", got.Templates)
	}
	for uri, r := range got.Reads {
		if r["mimeType"] != "application/json" {
			t.Errorf("%s: mimeType %v", uri, r["mimeType"])
		}
	}
	jsonEq(t, "node knowledge/architecture", got.Reads["context://knowledge/architecture"]["value"],
		`{"key":"architecture","content":"## Architecture\n\nMicroservices with gRPC.\n"}`)
	jsonEq(t, "node knowledge/missing", got.Reads["context://knowledge/missing"]["value"],
		`{"error":"Knowledge entry 'missing' not found"}`)
	if v, _ := got.Reads["context://decisions/1"]["value"].(map[string]any); v["title"] != "Use PostgreSQL for persistence" {
		t.Errorf("decisions/1 = %v", v)
	}
	if !reflect.DeepEqual(got.Tools, wantTools) {
		t.Errorf("tools = %v\nwant %v", got.Tools, wantTools)
	}
	if !reflect.DeepEqual(got.Prompts, wantPrompts) {
		t.Errorf("prompts = %v, want %v", got.Prompts, wantPrompts)
	}
	if !strings.Contains(got.Onboarding, "## Conventions") || strings.Contains(got.Onboarding, "credentials-setup") {
		t.Errorf("node context_onboarding:\n%s", got.Onboarding)
	}
	if got.ProjectContextError || got.ProjectContext["project"].(map[string]any)["slug"] != "engine-notes" {
		t.Errorf("get_project_context = %v (isError %v)", got.ProjectContext, got.ProjectContextError)
	}
	// Malformed arguments: coded invalid_request errors, the diagnostic as text; get_project_context's
	// are text alone, which the SDK's outputSchema check accepts (it throws on an error object there).
	for label, want := range map[string]string{"projectNotString": "argument 'project'", "projectUnknown": "unknown project",
		"projectNotObject": "expected an object", "addKnowledgeMissing": "content", "updateStateEmpty": "give at least one of"} {
		r, ok := got.ArgErrors[label]
		if strings.HasPrefix(label, "project") {
			// get_project_context's output schema is the contract's: its errors are text alone.
			if !ok || r.Thrown != "" || !r.IsError || r.Value != nil || !strings.Contains(r.Text, want) {
				t.Errorf("%s: %+v, want a tool error with %q as text and no structuredContent", label, r, want)
			}
			continue
		}
		msg, _ := r.Value["message"].(string)
		if !ok || r.Thrown != "" || !r.IsError || r.Value["error_code"] != "invalid_request" || !strings.Contains(msg, want) || r.Text != msg {
			t.Errorf("%s: %+v, want an invalid_request error with %q", label, r, want)
		}
	}
}

// nodeSetup finds node and the provisioned SDK (skipping, or failing under CTX_REQUIRE_NODE=1, as
// TestNodeClient does) and returns node and the client directory.
func nodeSetup(t *testing.T) (string, string) {
	t.Helper()
	require := os.Getenv("CTX_REQUIRE_NODE") == "1"
	missing := func(format string, a ...any) {
		t.Helper()
		if require {
			t.Fatalf(format+" (CTX_REQUIRE_NODE=1)", a...)
		}
		t.Skipf(format, a...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found: install node and npm, then run `make node-client`")
	}
	clientDir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("the MCP TypeScript SDK is not provisioned in mcp/node/node_modules: run `make node-client`")
	}
	return node, clientDir
}

// TestNodeClientHistory: the official TypeScript SDK (mcp/node/history.mjs) calls every agent-history
// read tool of a server over the imported corpus (the SDK checks each structuredContent against the
// tool's outputSchema); search, show_session and query_events page to exhaustion, blame attributes a
// noted commit, and malformed cursors and arguments fail with their error_code.
func TestNodeClientHistory(t *testing.T) {
	node, clientDir := nodeSetup(t)
	t.Setenv("HOME", t.TempDir())
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	seed(t, st)
	hist := filepath.Join(t.TempDir(), "history")
	importCorpus(t, hist, t.TempDir())
	// A file of three commits; the second is noted as made by the corpus's Codex root session.
	var commits []string
	for i := 1; i <= 3; i++ {
		body := strings.Repeat("x\n", i-1) + fmt.Sprintf("line %d\n", i)
		if err := os.WriteFile(filepath.Join(dir, "engine.go"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", "engine.go")
		git(t, dir, "commit", "-q", "-m", fmt.Sprintf("line %d", i))
		commits = append(commits, git(t, dir, "rev-parse", "HEAD"))
	}
	rootID := history.SessionID(history.Codex, "codex-session-root")
	git(t, dir, "notes", "--ref=refs/notes/ctx", "add", "-m",
		blame.NoteText(blame.NoteRecord{Agent: "codex", Session: "codex-session-root", Env: "CODEX_THREAD_ID"}), commits[1])

	// What the index holds, read directly.
	ix, err := history.Open(context.Background(), hist)
	if err != nil {
		t.Fatal(err)
	}
	codexID := history.SessionID(history.Codex, codexNative)
	sess, err := ix.Session(context.Background(), codexID)
	if err != nil {
		t.Fatal(err)
	}
	codexEvents, err := ix.ListEvents(context.Background(), history.EventQuery{Providers: []history.Provider{history.Codex}, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := ix.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, node, filepath.Join(clientDir, "history.mjs"), buildTestServer(t), dir, hist, codexID)
	var stderr strings.Builder
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("node history client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	type result struct {
		IsError bool           `json:"isError"`
		Value   map[string]any `json:"value"`
	}
	var got struct {
		Tools       []string `json:"tools"`
		Status      result   `json:"status"`
		Sources     result   `json:"sources"`
		SearchPaged struct {
			IDs   []string       `json:"ids"`
			Pages int            `json:"pages"`
			Error map[string]any `json:"error"`
		} `json:"searchPaged"`
		SearchWhole []string `json:"searchWhole"`
		ShowSession struct {
			Seqs    []float64      `json:"seqs"`
			Pages   int            `json:"pages"`
			Session map[string]any `json:"session"`
			Error   map[string]any `json:"error"`
		} `json:"showSession"`
		ShowEvent   result `json:"showEvent"`
		QueryEvents struct {
			IDs       []string       `json:"ids"`
			Pages     int            `json:"pages"`
			Terminal  bool           `json:"terminal"`
			Error     map[string]any `json:"error"`
			Freshness map[string]any `json:"freshness"`
			Frontier  map[string]any `json:"frontier"`
		} `json:"queryEvents"`
		Blame  result            `json:"blame"`
		Errors map[string]result `json:"errors"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node history client output %q: %v\nstderr: %s", out, err, stderr.String())
	}
	for _, name := range []string{"status", "sources", "search", "show_session", "show_event", "query_events", "blame"} {
		if !slices.Contains(got.Tools, name) {
			t.Errorf("tools %v lack %s", got.Tools, name)
		}
	}
	// status: read-only, and the index as imported.
	h := obj(got.Status.Value["history"])
	if got.Status.IsError || got.Status.Value["read_only"] != true || h["events"] != float64(stats.Events) || stats.Events < 900 || h["exists"] != true {
		t.Errorf("status = %v", got.Status)
	}
	// ... with the upgrade section and the compact local_usage (no counters).
	up, lu := obj(got.Status.Value["upgrade"]), obj(got.Status.Value["local_usage"])
	if obj(up["history_index"])["state"] != "current" || up["state"] != "current" || lu["state"] == nil ||
		lu["definition_version"] == nil || lu["retention_version"] == nil || lu["tool_calls"] != nil {
		t.Errorf("status upgrade = %v, local_usage = %v", up, lu)
	}
	// sources: the six providers, automatic, and the context store.
	provs := map[string]string{}
	for _, r := range list(got.Sources.Value, "sources") {
		provs[obj(r)["provider"].(string)] = fmt.Sprint(obj(obj(r)["selection"])["kind"])
	}
	if got.Sources.IsError || got.Sources.Value["automatic_discovery"] != true || len(provs) != len(history.Providers)+1 ||
		provs["codex"] != "automatic" || provs["ctx"] != "automatic" {
		t.Errorf("sources = %v", got.Sources)
	}
	// search: pages of 7 to exhaustion give the hits of one page of 100, in order, without repeats.
	if got.SearchPaged.Error != nil || len(got.SearchWhole) < 20 || got.SearchPaged.Pages < 3 {
		t.Fatalf("search paged %+v, whole %d", got.SearchPaged, len(got.SearchWhole))
	}
	paged := got.SearchPaged.IDs
	if len(got.SearchWhole) == 100 && len(paged) > 100 {
		paged = paged[:100]
	}
	if !slices.Equal(paged, got.SearchWhole) {
		t.Errorf("paged search:\n got %v\nwant %v", paged, got.SearchWhole)
	}
	// show_session: pages of 3 give every event of the session in order.
	if got.ShowSession.Error != nil || len(got.ShowSession.Seqs) != sess.EventCount || got.ShowSession.Session["ctx_session_id"] != codexID ||
		got.ShowSession.Pages != (sess.EventCount+2)/3 {
		t.Errorf("show_session: %d events in %d pages, want %d (%v)", len(got.ShowSession.Seqs), got.ShowSession.Pages, sess.EventCount, got.ShowSession.Error)
	}
	for i, q := range got.ShowSession.Seqs {
		if q != float64(i+1) {
			t.Fatalf("show_session event %d has seq %v", i, q)
		}
	}
	// show_event: the second event with one neighbour each side.
	ev := obj(got.ShowEvent.Value["event"])
	if got.ShowEvent.IsError || ev["seq"] != float64(2) || ev["ctx_session_id"] != codexID {
		t.Errorf("show_event = %v", got.ShowEvent)
	}
	// query_events: every Codex event of the index, once.
	var want []string
	for _, e := range codexEvents {
		want = append(want, e.Event.ID)
	}
	if fr, fe := got.QueryEvents.Frontier, got.QueryEvents.Freshness; fr["reached_end"] != true || len(want) == 0 ||
		fr["last_event_id"] != want[len(want)-1] || fe["state"] != "indexed" || fe["generation"] == nil {
		t.Errorf("query_events' last page: frontier %v, freshness %v", fr, fe)
	}
	if got.QueryEvents.Error != nil || !got.QueryEvents.Terminal || !slices.Equal(got.QueryEvents.IDs, want) || got.QueryEvents.Pages < 2 {
		t.Errorf("query_events: %d ids in %d pages (terminal %v, %v), want %d", len(got.QueryEvents.IDs), got.QueryEvents.Pages,
			got.QueryEvents.Terminal, got.QueryEvents.Error, len(want))
	}
	// blame: three lines, the noted commit proven by the Codex root session.
	cov := obj(got.Blame.Value["coverage"])
	proven := 0
	for _, c := range list(got.Blame.Value, "commits") {
		if obj(c)["outcome"] == "proven" {
			proven++
			if obj(c)["commit"] != commits[1] || !strings.Contains(fmt.Sprint(c), rootID) {
				t.Errorf("proven commit = %v", c)
			}
		}
	}
	if got.Blame.IsError || cov["lines"] != float64(3) || proven != 1 {
		t.Errorf("blame = %v", got.Blame)
	}
	for name, code := range map[string]string{"mismatch": "cursor_mismatch", "forged": "invalid_cursor", "badLimit": "invalid_request", "badGroup": "invalid_request"} {
		r := got.Errors[name]
		if !r.IsError || r.Value["error_code"] != code {
			t.Errorf("%s: %v, want error_code %s", name, r, code)
		}
	}
}
