package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
)

// TestNodeClient drives a server binary (mcp/internal/testserver: the store of its working directory on
// stdio, as `ctx mcp serve` does) with the official MCP TypeScript SDK (mcp/node/client.mjs), which
// lists and reads the resources, lists the tools and calls get_project_context; the SDK also checks
// structuredContent against the tool's outputSchema. The same client then runs over the SDK's
// Streamable HTTP transport against the HTTP server, with a bearer token.
//
// The SDK is provisioned beforehand by `make node-client` (npm ci into mcp/node/node_modules, which
// .ci/run runs before `make test`): the test never installs anything. Without node or the provisioned
// SDK it is skipped with a message saying so, unless CTX_REQUIRE_NODE=1 (set by .ci/run), which makes
// that a failure. Each step has its own bound: the build (buildTestServer) and the node run.
func TestNodeClient(t *testing.T) {
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
}
