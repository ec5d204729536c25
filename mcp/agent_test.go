package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Without --agent, the server records each write as the agent its client named in initialize
// (clientInfo.name, slugified), never as "cli" (a person); --agent wins over the client's name.
func TestAgentFromClientInfo(t *testing.T) {
	for _, c := range []struct {
		name, pv, client, optAgent, want string
	}{
		{"legacy", mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, "claude-code", "", "claude-code"},
		{"modern", "", "claude-code", "", "claude-code"},
		{"display name", mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, "Visual Studio Code", "", "visual-studio-code"},
		{"flag wins", mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, "cursor-vscode", "codex", "codex"},
		{"no name", mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, "", "", FallbackAgent},
		{"named cli", mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, "cli", "", "mcp-cli"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// As `ctx mcp serve` opens the store without --agent: store.Open's default agent "cli".
			dir, st := newRepo(t, store.Actor{})
			s := serveAs(t, st, Options{Agent: c.optAgent}, c.pv, c.client)
			structured(t, "add", s.call(t, "context_add_knowledge", map[string]any{"key": "k", "content": "x\n"}))
			if msg := git(t, dir, "log", "-1", "--format=%B", "ctx"); !strings.Contains(msg, "Ctx-Agent: "+c.want+"\n") {
				t.Errorf("commit trailers:\n%s\nwant Ctx-Agent: %s", msg, c.want)
			}
			if f := git(t, dir, "show", "ctx:knowledge/k.md"); !strings.Contains(f, "agent: "+c.want+"\n") ||
				!strings.Contains(f, "provenance: agent_generated") {
				t.Errorf("front matter:\n%s", f)
			}
			structured(t, "check in", s.call(t, "context_check_in", map[string]any{"task": "t"}))
			if got := git(t, dir, "ls-tree", "-r", "--name-only", "ctx", "activity/"); !strings.Contains(got, "/"+c.want+"--testbox.json") {
				t.Errorf("activity files: %s", got)
			}
		})
	}
}

// The same through a real stdio subprocess (`ctx mcp serve` without --agent) and its client's name.
func TestAgentFromClientInfoStdio(t *testing.T) {
	dir, _ := newRepo(t, store.Actor{})
	p := spawn(t, buildTestServer(t), dir, "Claude Code")
	res, err := p.c.CallTool(context.Background(), callReq("context_add_knowledge", map[string]any{"key": "k", "content": "x\n"}))
	if err != nil || res.IsError {
		t.Fatalf("add: %v %v", err, res)
	}
	if msg := git(t, dir, "log", "-1", "--format=%B", "ctx"); !strings.Contains(msg, "Ctx-Agent: claude-code\n") {
		t.Errorf("commit trailers:\n%s", msg)
	}
}
