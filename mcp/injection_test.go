package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestSyncToolsRefuseInjection: context_pull and context_push never hand an agent's remote argument to git
// as an option or a command transport, nor as a URL: the argument must name a configured remote. Each
// injection is a tool error that says so, nothing runs (no marker file) and no ref moves.
func TestSyncToolsRefuseInjection(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	s := serve(t, st, Options{Agent: "claude-code", Version: "test"}, "")
	r := refCounter{t: t, dir: dir, agent: "claude-code"}
	marker := filepath.Join(t.TempDir(), "pwned")
	bare := filepath.Join(t.TempDir(), "other.git")
	git(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
	git(t, dir, "config", "protocol.ext.allow", "always") // the user allows ext:: for themselves, not for agents
	for _, bad := range []string{
		"--upload-pack=id > " + marker + ";",
		"--receive-pack=touch " + marker + ";",
		"--exec=touch " + marker,
		"-utouch " + marker,
		"ext::sh -c touch% " + marker,
		"fd::17",
		"ssh://-oProxyCommand=touch%20" + marker + "/x",
		bare, // a URL or path: an agent may not pick where the team's context goes
		"https://attacker.example/x.git",
	} {
		for _, tool := range []string{"context_pull", "context_push"} {
			r.fail(s, tool, map[string]any{"remote": bad}, "refused")
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("%s {remote: %q} ran the injected command", tool, bad)
			}
		}
	}
	if out := git(t, bare, "for-each-ref"); strings.TrimSpace(out) != "" {
		t.Errorf("an agent pushed to a URL of its choice:\n%s", out)
	}
	// The configured remote still works by name.
	r.read(s, "context_push", map[string]any{"remote": "origin"})
}
