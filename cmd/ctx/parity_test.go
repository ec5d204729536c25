package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// TestCLIMCPParity checks the promise of docs/architecture.md "Promises" that every write a tool can do, the
// CLI can do, with the same commit results: each write kind is done once with the CLI in repository A and
// once with the MCP tool (the same binary's `ctx mcp serve`, driven by mcp-go's stdio client) in repository
// B, with the same inputs, agent and session. After every step the two context refs (public, private,
// ephemeral) must hold the same paths and the same file contents once timestamps, dates and random ids are
// normalised, and the same commits (Ctx-Op, Ctx-Key and subject, in order).
func TestCLIMCPParity(t *testing.T) {
	const agent, session = "claude-code", "sess-p"
	a := testenv.NewRepo(t)
	b := testenv.NewRepo(t) // both are named "repo": the same project name in manifest.json
	for _, dir := range []string{a, b} {
		run(t, dir, 0, "init", "--no-hooks")
	}
	cli := func(args ...string) string {
		t.Helper()
		return run(t, a, 0, append([]string{"--agent", agent, "--session", session}, args...)...)
	}
	c, err := client.NewStdioMCPClient(ctxBin, nil, "-C", b, "--agent", agent, "--session", session, "mcp", "serve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	initReq := mcpgo.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	initReq.Params.ClientInfo = mcpgo.Implementation{Name: "parity", Version: "1"}
	if _, err := c.Initialize(ctx, initReq); err != nil {
		t.Fatal(err)
	}
	tool := func(name string, args map[string]any) map[string]any {
		t.Helper()
		req := mcpgo.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s %v: tool error %v", name, args, res.Content)
		}
		bs, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		if err := json.Unmarshal(bs, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	proposed := "---\nname: deploy-staging\ndescription: Deploy to staging\n---\n\n## Steps\n\n1. Build\n2. Roll back on failure\n"
	proposal := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(proposal, []byte(proposed), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		cli  func()
		mcp  func()
		skip string
	}{
		{name: "knowledge set",
			cli: func() {
				cli("knowledge", "set", "architecture", "Hexagonal, one binary.", "--provenance", "owner_approved")
			},
			mcp: func() {
				tool("context_add_knowledge", map[string]any{"key": "architecture", "content": "Hexagonal, one binary.", "provenance": "owner_approved"})
			}},
		{name: "knowledge set private",
			cli: func() { cli("knowledge", "set", "secret", "ask ops", "--scope", "private") },
			mcp: func() {
				tool("context_add_knowledge", map[string]any{"key": "secret", "content": "ask ops", "scope": "private"})
			}},
		{name: "convention set",
			cli: func() { cli("convention", "set", "git", "Feature branches.") },
			mcp: func() { tool("context_add_convention", map[string]any{"key": "git", "content": "Feature branches."}) }},
		{name: "decision add",
			cli: func() {
				cli("decision", "add", "Use PostgreSQL", "--context", "ACID", "--decision", "PG 16", "--consequences", "ops", "--status", "accepted")
			},
			mcp: func() {
				tool("context_record_decision", map[string]any{"title": "Use PostgreSQL", "context": "ACID", "decision": "PG 16",
					"consequences": "ops", "status": "accepted"})
			}},
		{name: "decision add 2",
			cli: func() {
				cli("decision", "add", "Use MySQL", "--context", "c", "--decision", "d", "--consequences", "e")
			},
			mcp: func() {
				tool("context_record_decision", map[string]any{"title": "Use MySQL", "context": "c", "decision": "d", "consequences": "e"})
			}},
		{name: "decision status",
			cli: func() { cli("decision", "set-status", "2", "superseded", "--superseded-by", "1") },
			mcp: func() {
				tool("context_update_decision_status", map[string]any{"id": 2, "status": "superseded", "superseded_by": 1})
			}},
		{name: "state current_task",
			cli: func() { cli("state", "set", "current_task", "auth middleware") },
			mcp: func() { tool("context_update_state", map[string]any{"current_task": "auth middleware"}) }},
		{name: "state blockers",
			cli: func() { cli("state", "set", "blockers", "API spec", "review") },
			mcp: func() { tool("context_update_state", map[string]any{"blockers": []any{"API spec", "review"}}) }},
		{name: "state progress",
			cli: func() { cli("state", "set", "progress", "auth=50%", "tests=done") },
			mcp: func() {
				tool("context_update_state", map[string]any{"progress": map[string]any{"auth": "50%", "tests": "done"}})
			}},
		{name: "state blockers cleared",
			cli: func() { cli("state", "set", "blockers") },
			mcp: func() { tool("context_update_state", map[string]any{"blockers": []any{}}) }},
		{name: "session append",
			// context_append_session starts a session it does not know; the CLI's update refuses an unknown
			// id (a typo) unless --start is given.
			cli: func() {
				cli("session", "update", "--start", session, "--summary", "schema work", "--knowledge", "architecture", "--decision", "1")
			},
			mcp: func() {
				tool("context_append_session", map[string]any{"agent": agent, "summary": "schema work", "session_id": session,
					"knowledge_added": []any{"architecture"}, "decisions_added": []any{"1"}})
			}},
		{name: "session append default id",
			cli: func() {
				cli("session", "update", session, "--summary", "schema and skills", "--skill", "deploy-staging")
			},
			mcp: func() {
				tool("context_append_session", map[string]any{"agent": agent, "summary": "schema and skills", "skills_used": []any{"deploy-staging"}})
			}},
		{name: "session end",
			cli: func() { cli("session", "end", session, "--summary", "done") },
			mcp: func() { tool("context_end_session", map[string]any{"session_id": session, "summary": "done"}) }},
		{name: "skill add",
			cli: func() {
				cli("skill", "add", "deploy-staging", "--description", "Deploy to staging", "## Steps\n\n1. Build\n")
			},
			mcp: func() {
				tool("context_add_skill", map[string]any{"name": "deploy-staging", "description": "Deploy to staging", "instructions": "## Steps\n\n1. Build\n"})
			}},
		{name: "skill usage",
			cli: func() { cli("skill", "usage", "deploy-staging") },
			mcp: func() { tool("context_report_skill_usage", map[string]any{"skill_name": "deploy-staging"}) }},
		{name: "skill rate",
			cli: func() { cli("skill", "rate", "deploy-staging", "2", "no", "rollback") },
			mcp: func() {
				tool("context_rate_skill", map[string]any{"skill_name": "deploy-staging", "rating": 2, "comment": "no rollback"})
			}},
		{name: "skill propose",
			cli: func() { cli("skill", "propose", "deploy-staging", "-f", proposal, "--rationale", "add rollback") },
			mcp: func() {
				tool("context_propose_skill_improvement", map[string]any{"skill_name": "deploy-staging", "proposed_content": proposed, "rationale": "add rollback"})
			}},
		{name: "skill accept",
			cli: func() {
				var ps []store.SkillProposal
				if err := json.Unmarshal([]byte(cli("skill", "proposals", "deploy-staging", "--json")), &ps); err != nil || len(ps) != 1 {
					t.Fatalf("proposals: %v %v", ps, err)
				}
				cli("skill", "accept", "deploy-staging", ps[0].ID)
			},
			mcp: func() {
				ps := tool("context_list_skill_proposals", map[string]any{"skill_name": "deploy-staging"})["proposals"].([]any)
				tool("context_resolve_skill_proposal", map[string]any{"skill_name": "deploy-staging",
					"id": ps[0].(map[string]any)["id"], "decision": "accept"})
			}},
		{name: "skill add 2",
			cli: func() { cli("skill", "add", "tmp-skill", "--description", "temporary", "x") },
			mcp: func() {
				tool("context_add_skill", map[string]any{"name": "tmp-skill", "description": "temporary", "instructions": "x"})
			}},
		{name: "skill rm",
			cli: func() { cli("skill", "rm", "tmp-skill") },
			mcp: func() { tool("context_remove_skill", map[string]any{"name": "tmp-skill"}) }},
		{name: "activity check-in",
			cli: func() {
				cli("activity", "check-in", "auth", "--issue", "#42", "--doing", "middleware", "--file", "auth.go")
			},
			mcp: func() {
				tool("context_check_in", map[string]any{"task": "auth", "issue_ref": "#42", "doing": "middleware", "files": []any{"auth.go"}})
			}},
		{name: "activity intent",
			cli: func() {
				cli("activity", "intent", "change", "--path", "auth.go", "--area", "auth", "--expires", "2099-01-01T00:00:00Z")
			},
			mcp: func() {
				tool("context_set_intent", map[string]any{"kind": "change", "paths": []any{"auth.go"}, "areas": []any{"auth"},
					"expires_at": "2099-01-01T00:00:00Z"})
			}},
		{name: "activity check-out",
			cli: func() { cli("activity", "check-out") },
			mcp: func() { tool("context_check_out", nil) }},
		{name: "knowledge scope",
			cli: func() { cli("knowledge", "scope", "architecture", "private") },
			mcp: func() {
				tool("context_set_scope", map[string]any{"kind": "knowledge", "key": "architecture", "scope": "private"})
			}},
		{name: "decision scope",
			cli: func() { cli("decision", "scope", "2", "ephemeral") },
			mcp: func() { tool("context_set_scope", map[string]any{"kind": "decision", "key": 2, "scope": "ephemeral"}) }},
		{name: "skill scope",
			cli: func() { cli("skill", "scope", "deploy-staging", "private") },
			mcp: func() {
				tool("context_set_scope", map[string]any{"kind": "skill", "key": "deploy-staging", "scope": "private"})
			}},
		{name: "knowledge rm",
			cli: func() { cli("knowledge", "rm", "secret") },
			mcp: func() { tool("context_remove_knowledge", map[string]any{"key": "secret"}) }},
		{name: "convention rm",
			cli: func() { cli("convention", "rm", "git") },
			mcp: func() { tool("context_remove_convention", map[string]any{"key": "git"}) }},
	}
	for _, st := range steps {
		if st.skip != "" {
			t.Logf("step %q not compared: %s", st.name, st.skip)
			continue
		}
		st.cli()
		st.mcp()
		for _, ref := range []string{"ctx", store.RefPrivate, store.RefEphemeral} {
			ta, tb := refTree(t, a, ref), refTree(t, b, ref)
			if !equalTrees(ta, tb) {
				t.Fatalf("after %q, %s differs between the CLI (A) and MCP (B):\n%s", st.name, ref, treeDiff(ta, tb))
			}
			la, lb := refLog(t, a, ref), refLog(t, b, ref)
			if strings.Join(la, "\n") != strings.Join(lb, "\n") {
				t.Fatalf("after %q, the commits of %s differ:\nCLI:\n%s\nMCP:\n%s", st.name, ref, strings.Join(la, "\n"), strings.Join(lb, "\n"))
			}
		}
	}
	// the MCP commits carry the server's agent and session, like the CLI's
	for _, dir := range []string{a, b} {
		msg := testenv.Git(t, dir, "log", "-1", "--format=%B", "ctx")
		if !strings.Contains(msg, "Ctx-Agent: "+agent) || !strings.Contains(msg, "Ctx-Session: "+session) {
			t.Errorf("%s: last commit lacks the agent or session trailers:\n%s", dir, msg)
		}
	}
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	dateRE = regexp.MustCompile(`\d{4}-\d\d-\d\d`)
)

// normalise replaces what legitimately differs between two runs of the same write: random ids (UUIDs),
// timestamps and dates. An .ndjson log's lines are sorted after that, since lines written in the same
// second are ordered by their random ids (docs/format.md "Logs").
func normalise(path, s string) string {
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	s = timeRE.ReplaceAllString(s, "<time>")
	s = dateRE.ReplaceAllString(s, "<date>")
	if strings.HasSuffix(path, ".ndjson") {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		sort.Strings(lines)
		s = strings.Join(lines, "\n") + "\n"
	}
	return s
}

// refTree reads every file of a ref: normalised path -> normalised content ({} when the ref is absent).
func refTree(t *testing.T, dir, ref string) map[string]string {
	t.Helper()
	out := map[string]string{}
	at := storetest.RefArgs(t, dir, ref)
	if _, err := testenv.GitErr(dir, append(at, "rev-parse", "--verify", "-q", ref)...); err != nil {
		return out
	}
	ls := testenv.Git(t, dir, append(at, "ls-tree", "-r", "--format=%(objectname) %(path)", ref)...)
	if ls == "" {
		return out
	}
	var ids, paths []string
	for _, line := range strings.Split(ls, "\n") {
		id, p, _ := strings.Cut(line, " ")
		ids, paths = append(ids, id), append(paths, p)
	}
	cmd := exec.Command("git", append(at, "cat-file", "--batch")...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("cat-file: %v", err)
	}
	r := bufio.NewReader(strings.NewReader(string(raw)))
	for _, p := range paths {
		var id, typ string
		var size int
		if _, err := fmt.Fscanf(r, "%s %s %d\n", &id, &typ, &size); err != nil {
			t.Fatalf("cat-file header: %v", err)
		}
		buf := make([]byte, size+1)
		if _, err := ioReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		out[normalise(p, p)] = normalise(p, string(buf[:size]))
	}
	return out
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// refLog lists a ref's commits, oldest first, as "subject | Ctx-Op | Ctx-Key", normalised.
func refLog(t *testing.T, dir, ref string) []string {
	t.Helper()
	at := storetest.RefArgs(t, dir, ref)
	if _, err := testenv.GitErr(dir, append(at, "rev-parse", "--verify", "-q", ref)...); err != nil {
		return nil
	}
	var out []string
	for _, msg := range strings.Split(testenv.Git(t, dir, append(at, "log", "--reverse", "--format=%B%x00", ref)...), "\x00") {
		msg = strings.TrimSpace(msg)
		if msg == "" {
			continue
		}
		tr := store.Trailers(msg)
		subject, _, _ := strings.Cut(msg, "\n")
		out = append(out, normalise("", fmt.Sprintf("%s | %s | %s", subject, tr["Ctx-Op"], tr["Ctx-Key"])))
	}
	return out
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func treeDiff(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			out = append(out, "only in CLI: "+k)
		case v != w:
			out = append(out, fmt.Sprintf("%s:\n--- CLI\n%s\n--- MCP\n%s", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only in MCP: "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
