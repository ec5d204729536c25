package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestHistorySourcesJSONIsTheMCPTool: `ctx history sources --json` prints the object the MCP sources tool
// returns as structured content (docs/mcp.md "History read tools"), with a configured root, a provider
// root that exists and the context store's row; outside a repository, the same shape with the providers'
// roots only. Before, the CLI printed a list of rows of another shape.
func TestHistorySourcesJSONIsTheMCPTool(t *testing.T) {
	repo := testenv.NewRepo(t)
	mustCtx(t, repo, nil, 0, "init", "--no-hooks")
	claude := filepath.Join(t.TempDir(), "claude")
	backup := filepath.Join(t.TempDir(), "backup")
	for _, d := range []string{filepath.Join(claude, "projects", "p"), filepath.Join(backup, "p")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		line := `{"type":"user","uuid":"u1","timestamp":"2026-02-01T10:00:00Z","cwd":"/w/app","message":{"role":"user","content":"hi"}}` + "\n"
		if err := os.WriteFile(filepath.Join(d, "s1.jsonl"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"CLAUDE_CONFIG_DIR=" + claude}
	mustCtx(t, repo, env, 0, "history", "sources", "add", "--provider", "claude-code", "--path", backup, "--root", "laptop", "--group", "old")
	mustCtx(t, repo, env, 0, "history", "import")

	var cli map[string]any
	out := mustCtx(t, repo, env, 0, "history", "sources", "--json").stdout
	if err := json.Unmarshal([]byte(out), &cli); err != nil {
		t.Fatalf("ctx history sources --json is not one JSON object: %v\n%s", err, out)
	}

	session := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sources","arguments":{}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(ctxBin, "mcp", "serve")
	cmd.Dir = repo
	cmd.Env = testenv.Environ(env)
	cmd.Stdin = strings.NewReader(session)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("ctx mcp serve: %v", err)
	}
	var tool map[string]any
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				StructuredContent map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.ID == 2 {
			tool = msg.Result.StructuredContent
		}
	}
	if tool == nil {
		t.Fatalf("no structured content from the sources tool:\n%s", stdout.String())
	}
	if !reflect.DeepEqual(cli, tool) {
		a, _ := json.MarshalIndent(cli, "", " ")
		b, _ := json.MarshalIndent(tool, "", " ")
		t.Fatalf("ctx history sources --json differs from the MCP sources tool:\nCLI:\n%s\nMCP:\n%s", a, b)
	}
	rows, _ := cli["sources"].([]any)
	var configured, ctxRow bool
	for _, r := range rows {
		m := r.(map[string]any)
		sel, _ := m["selection"].(map[string]any)
		if sel["kind"] == "configured" && sel["root"] == "laptop" && sel["group"] == "old" && m["indexed_sessions"] == 1.0 {
			configured = true
		}
		if m["provider"] == "ctx" && m["refs"] != nil {
			ctxRow = true
		}
	}
	if !configured || !ctxRow {
		t.Errorf("rows lack the configured root with its session, or the ctx row: %s", out)
	}

	// Outside a repository: the same object, the providers' roots only, and the issue saying why.
	none := t.TempDir()
	out = mustCtx(t, none, env, 0, "history", "sources", "--json").stdout
	var outside map[string]any
	if err := json.Unmarshal([]byte(out), &outside); err != nil {
		t.Fatalf("outside a repository: %v\n%s", err, out)
	}
	for _, k := range []string{"automatic_discovery", "sources", "index", "issues", "truncated"} {
		if _, ok := outside[k]; !ok {
			t.Errorf("outside a repository: no %q in %s", k, out)
		}
	}
	if !strings.Contains(out, `"not_a_repository"`) {
		t.Errorf("outside a repository, no issue not_a_repository: %s", out)
	}
	outRows, _ := outside["sources"].([]any)
	for _, r := range outRows {
		if r.(map[string]any)["provider"] == "ctx" {
			t.Errorf("outside a repository, a row of provider ctx: %s", out)
		}
	}
}
