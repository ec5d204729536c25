package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// `ctx integrations install mcp` writes `ctx mcp serve --agent <client>`, and the server that command
// line starts records the client's writes under that name (Ctx-Agent), not as "cli" (a person).
func TestIntegrationsInstallRecordsClient(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := func(stdin string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	if _, e, code := run("", "init", "--no-hooks"); code != ExitOK {
		t.Fatalf("init: %d %s", code, e)
	}
	if _, e, code := run("", "integrations", "install", "mcp", "--client", "cursor"); code != ExitOK {
		t.Fatalf("install: %d %s", code, e)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".cursor", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	args := cfg.MCPServers["ctx"].Args
	if !reflect.DeepEqual(args, []string{"mcp", "serve", "--agent", "cursor"}) {
		t.Fatalf("installed args %q", args)
	}
	// Run the installed command line with a client that names itself otherwise: --agent wins.
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cursor-vscode","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"k","content":"x\n"}}}
`
	out, e, code := run(in, args...)
	if code != ExitOK || !strings.Contains(out, `"id":2,"result"`) {
		t.Fatalf("mcp serve: %d\n%s\n%s", code, out, e)
	}
	if msg := testenv.Git(t, dir, "log", "-1", "--format=%B", "ctx"); !strings.Contains(msg, "Ctx-Agent: cursor\n") {
		t.Errorf("trailers:\n%s", msg)
	}
}
