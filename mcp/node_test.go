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
)

// TestNodeClient drives a server binary (mcp/internal/testserver: the store of its working directory on
// stdio, as `ctx mcp serve` does) with the official MCP TypeScript SDK (mcp/node/client.mjs), which
// lists and reads the resources, lists the tools and calls get_project_context; the SDK also checks
// structuredContent against the tool's outputSchema. Skipped when npm (or node) is not installed, or
// when the npm registry cannot be reached.
func TestNodeClient(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	if testing.Short() {
		t.Skip("-short: the Node client test installs the MCP SDK with npm")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// newRepo points HOME at a temporary directory: keep the real Go caches and npm cache.
	goEnv, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	caches := strings.Fields(string(goEnv))
	npmCache := filepath.Join(os.Getenv("HOME"), ".npm")
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	work := t.TempDir()
	bin := filepath.Join(work, "testserver")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./internal/testserver")
	build.Env = append(os.Environ(), "GOMODCACHE="+caches[0], "GOCACHE="+caches[1])
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testserver: %v\n%s", err, out)
	}
	client := filepath.Join(work, "node")
	if err := os.MkdirAll(client, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"package.json", "client.mjs"} {
		b, err := os.ReadFile(filepath.Join("node", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(client, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = client
	install.Env = append(os.Environ(), "npm_config_cache="+npmCache)
	if out, err := install.CombinedOutput(); err != nil {
		for _, net := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET"} {
			if strings.Contains(string(out), net) {
				t.Skipf("npm registry unreachable: %s", out)
			}
		}
		t.Fatalf("npm install: %v\n%s", err, out)
	}

	run := exec.CommandContext(ctx, node, filepath.Join(client, "client.mjs"), bin, dir, "engine-notes")
	var stderr strings.Builder
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
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
