package mcp

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// wantTools is every tool of the server, sorted (tools/list; the golden file has their schemas).
var wantTools = []string{"blame", "context_add_convention", "context_add_knowledge", "context_add_skill", "context_append_session",
	"context_check_in", "context_check_out", "context_conflict_detail", "context_end_session", "context_list_skill_proposals",
	"context_merge_status", "context_propose_skill_improvement", "context_pull", "context_push", "context_rate_skill",
	"context_record_decision", "context_remove_convention", "context_remove_knowledge", "context_remove_skill",
	"context_report_skill_usage", "context_resolve_conflict", "context_resolve_skill_proposal", "context_set_intent",
	"context_set_scope", "context_update_decision_status", "context_update_state", "get_project_context",
	"query_events", "search", "share_session", "show_event", "show_session", "sources", "status"}

var wantPrompts = []string{"context_handoff", "context_onboarding", "context_resolve_conflicts"}

// refCounter checks commit counts and trailers of the context refs around tool calls.
type refCounter struct {
	t     *testing.T
	dir   string
	agent string
}

func (r refCounter) count(ref string) int {
	r.t.Helper()
	out, err := gitOut(r.dir, "rev-list", "--count", ref)
	if err != nil {
		return 0 // the ref does not exist yet
	}
	return atoi(out)
}

func (r refCounter) counts() map[string]int {
	return map[string]int{"ctx": r.count("ctx"), store.RefPrivate: r.count(store.RefPrivate), store.RefEphemeral: r.count(store.RefEphemeral)}
}

// write calls a tool that must succeed with one commit on ref (ctx, or a private/ephemeral ref) and
// none on the other refs unless moved lists them, the commit carrying Ctx-Op: op and Ctx-Agent = the
// server's agent; it returns the structured result.
func (r refCounter) write(s *session, tool string, args map[string]any, ref, op string, moved ...string) map[string]any {
	r.t.Helper()
	before := r.counts()
	res := structured(r.t, tool, s.call(r.t, tool, args))
	after := r.counts()
	want := map[string]bool{ref: true}
	for _, m := range moved {
		want[m] = true
	}
	for name := range before {
		d := after[name] - before[name]
		if want[name] && d != 1 || !want[name] && d != 0 {
			r.t.Errorf("%s: %s moved by %d commits", tool, name, d)
		}
	}
	msg := git(r.t, r.dir, "log", "-1", "--format=%B", ref)
	for _, tr := range []string{"Ctx-Op: " + op, "Ctx-Agent: " + r.agent} {
		if !strings.Contains(msg, tr) {
			r.t.Errorf("%s: commit on %s lacks %q:\n%s", tool, ref, tr, msg)
		}
	}
	if c, _ := res["commit"].(string); c != git(r.t, r.dir, "rev-parse", ref) {
		r.t.Errorf("%s: result commit %q, want the tip of %s", tool, c, ref)
	}
	return res
}

// read calls a tool that must not write.
func (r refCounter) read(s *session, tool string, args map[string]any) map[string]any {
	r.t.Helper()
	before := r.counts()
	res := structured(r.t, tool, s.call(r.t, tool, args))
	if after := r.counts(); !mapsEqual(before, after) {
		r.t.Errorf("%s (read-only) moved refs: %v -> %v", tool, before, after)
	}
	return res
}

// fail calls a tool that must be a tool error whose text contains want, and writes nothing.
func (r refCounter) fail(s *session, tool string, args map[string]any, want string) {
	r.t.Helper()
	before := r.counts()
	res := s.call(r.t, tool, args)
	if !res.IsError || !strings.Contains(resultText(res), want) {
		r.t.Errorf("%s %v: isError %v, %q; want an error naming %q", tool, args, res.IsError, resultText(res), want)
	}
	if after := r.counts(); !mapsEqual(before, after) {
		r.t.Errorf("%s %v: failed call moved refs: %v -> %v", tool, args, before, after)
	}
}

// gitOut runs git in dir (in the local-only store for the private and ephemeral refs); an error when
// it fails.
func gitOut(dir string, args ...string) (string, error) {
	return testenv.GitErr(dir, localRefArgs(dir, args)...)
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWriteToolsEndToEnd writes every kind of the model through the tools of a real stdio server (a real
// mcp-go client over pipes, a real store in a temporary repository), checks one commit per successful
// call (none per failed one) with the server's agent in Ctx-Agent, then reads all 16 resources back.
func TestWriteToolsEndToEnd(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	s := serve(t, st, Options{Agent: "claude-code", Session: "sess-1", Version: "test"}, "")
	r := refCounter{t: t, dir: dir, agent: "claude-code"}
	ctx := context.Background()

	lt, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != strings.Join(wantTools, " ") {
		t.Errorf("tools/list = %v\nwant %v", names, wantTools)
	}

	r.write(s, "context_add_knowledge", map[string]any{"key": "architecture", "content": "Hexagonal.\n"}, "ctx", "knowledge.set")
	r.write(s, "context_add_convention", map[string]any{"key": "git", "content": "Feature branches.\n"}, "ctx", "convention.set")
	r.write(s, "context_record_decision", map[string]any{"title": "Use PostgreSQL", "context": "ACID", "decision": "PG 16",
		"consequences": "ops", "status": "accepted"}, "ctx", "decision.add")
	r.write(s, "context_record_decision", map[string]any{"title": "Use MySQL"}, "ctx", "decision.add")
	r.write(s, "context_update_decision_status", map[string]any{"id": 2, "status": "superseded", "superseded_by": 1}, "ctx", "decision.status")

	// state: only given fields change; an empty list clears
	res := r.write(s, "context_update_state", map[string]any{"current_task": "auth middleware",
		"blockers": []any{"API spec"}, "progress": map[string]any{"auth": "50%"}}, "ctx", "state.update")
	jsonEq(t, "update_state", res["state"].(map[string]any)["blockers"], `["API spec"]`)
	res = r.write(s, "context_update_state", map[string]any{"blockers": []any{}}, "ctx", "state.update")
	if st := res["state"].(map[string]any); st["current_task"] != "auth middleware" || len(st["blockers"].([]any)) != 0 ||
		st["last_agent"] != "claude-code" {
		t.Errorf("state after clearing blockers = %v", st)
	}

	// sessions: session_id defaults to the server's session
	res = r.write(s, "context_append_session", map[string]any{"agent": "claude-code", "summary": "schema work",
		"knowledge_added": []any{"architecture"}, "decisions_added": []any{"1"}}, "ctx", "session.append")
	if ss := res["session"].(map[string]any); ss["id"] != "sess-1" || ss["ended"] != nil {
		t.Errorf("append_session = %v", ss)
	}
	r.write(s, "context_append_session", map[string]any{"agent": "claude-code", "summary": "schema and skills",
		"session_id": "sess-1", "skills_used": []any{"deploy-staging"}, "knowledge_added": []any{"architecture"}}, "ctx", "session.append")
	res = r.write(s, "context_end_session", map[string]any{"session_id": "sess-1"}, "ctx", "session.end")
	if ss := res["session"].(map[string]any); ss["ended"] == nil || ss["summary"] != "schema and skills" {
		t.Errorf("end_session = %v", ss)
	}

	// skills: add, usage, ratings, a proposal accepted
	r.write(s, "context_add_skill", map[string]any{"name": "deploy-staging", "description": "Deploy to staging",
		"instructions": "## Steps\n\n1. Build\n"}, "ctx", "skill.add")
	r.write(s, "context_report_skill_usage", map[string]any{"skill_name": "deploy-staging"}, "ctx", "skill.usage")
	r.write(s, "context_rate_skill", map[string]any{"skill_name": "deploy-staging", "rating": 2, "comment": "no rollback"}, "ctx", "skill.rate")
	r.write(s, "context_rate_skill", map[string]any{"skill_name": "deploy-staging", "rating": 3}, "ctx", "skill.rate")
	skillNow := s.readJSON(t, "context://skills/deploy-staging").(map[string]any)["content"].(string)
	proposed := skillNow + "2. Roll back on failure\n"
	res = r.write(s, "context_propose_skill_improvement", map[string]any{"skill_name": "deploy-staging",
		"proposed_content": proposed, "rationale": "add rollback"}, "ctx", "skill.propose")
	prop := res["proposal"].(map[string]any)
	if prop["status"] != "pending" || !strings.Contains(prop["diff_summary"].(string), "+2. Roll back on failure") {
		t.Errorf("proposal = %v", prop)
	}
	res = r.read(s, "context_list_skill_proposals", map[string]any{"status": "pending"})
	if ps := res["proposals"].([]any); len(ps) != 1 || ps[0].(map[string]any)["id"] != prop["id"] {
		t.Errorf("list_skill_proposals = %v", res)
	}
	r.write(s, "context_resolve_skill_proposal", map[string]any{"skill_name": "deploy-staging", "id": prop["id"],
		"decision": "accept"}, "ctx", "skill.proposal.accept")
	if got := s.readJSON(t, "context://skills/deploy-staging").(map[string]any)["content"]; got != proposed {
		t.Errorf("accepted proposal did not replace SKILL.md: %q", got)
	}
	r.write(s, "context_add_skill", map[string]any{"name": "tmp-skill", "description": "temporary", "instructions": "x"}, "ctx", "skill.add")
	res = r.write(s, "context_remove_skill", map[string]any{"name": "tmp-skill"}, "ctx", "skill.rm")
	jsonEq(t, "remove_skill commits", res["commits"], `{"public":`+mustJSON(git(t, dir, "rev-parse", "ctx"))+`}`)

	// activity: check in (branch defaults to the work tree's), intent, check out
	res = r.write(s, "context_check_in", map[string]any{"task": "auth", "issue_ref": "#42", "doing": "middleware",
		"files": []any{"auth.go"}}, "ctx", "activity.checkin")
	if a := res["activity"].(map[string]any); a["branch"] != "main" || a["availability"] != "working" || a["agent"] != "claude-code" {
		t.Errorf("check_in = %v", a)
	}
	expires := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r.write(s, "context_set_intent", map[string]any{"kind": "change", "paths": []any{"auth.go"}, "areas": []any{"auth"},
		"expires_at": expires}, "ctx", "activity.intent")
	res = r.write(s, "context_check_out", nil, "ctx", "activity.checkout")
	if a := res["activity"].(map[string]any); a["status"] != "checked_out" {
		t.Errorf("check_out = %v", a)
	}

	// scope moves: public -> private moves two refs, and back
	res = r.write(s, "context_set_scope", map[string]any{"kind": "knowledge", "key": "architecture", "scope": "private"},
		store.RefPrivate, "knowledge.scope", "ctx")
	if len(res["commits"].(map[string]any)) != 2 {
		t.Errorf("set_scope commits = %v", res["commits"])
	}
	r.write(s, "context_set_scope", map[string]any{"kind": "knowledge", "key": "architecture", "scope": "public"},
		"ctx", "knowledge.scope", store.RefPrivate)
	r.write(s, "context_set_scope", map[string]any{"kind": "decision", "key": 2, "scope": "ephemeral"},
		store.RefEphemeral, "decision.scope", "ctx")

	// merge status (read-only) and push/pull against the origin (a local bare repository)
	res = r.read(s, "context_merge_status", nil)
	if res["open_conflicts"] != float64(0) || res["branch"] != "ctx" {
		t.Errorf("merge_status = %v", res)
	}
	res = r.read(s, "context_push", nil)
	if res["tip"] != git(t, dir, "rev-parse", "ctx") || res["remote"] != "origin" {
		t.Errorf("push = %v", res)
	}
	if got := git(t, dir, "ls-remote", "origin", "refs/heads/ctx"); !strings.HasPrefix(got, git(t, dir, "rev-parse", "ctx")) {
		t.Errorf("origin ctx = %q", got)
	}
	// The branch and this machine's ref (docs/sync.md) are pushed, never the private or ephemeral refs.
	if out := git(t, dir, "ls-remote", "origin", "refs/ctx/*"); out == "" || strings.Contains(strings.ReplaceAll(out, "refs/ctx/machines/", ""), "refs/ctx/") {
		t.Errorf("refs/ctx/ on the remote:\n%s", out)
	}
	res = r.read(s, "context_pull", nil)
	if res["action"] != "up-to-date" && res["action"] != "none" {
		t.Errorf("pull = %v", res)
	}

	// bad arguments and missing entries: tool errors naming the field, nothing written
	long := strings.Repeat("x", 1025)
	files := make([]any, 51)
	for i := range files {
		files[i] = "f.go"
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"context_update_state", map[string]any{}, "current_task"},
		{"context_update_state", map[string]any{"blockers": []any{"  "}}, "blockers"},
		{"context_update_state", map[string]any{"progress": map[string]any{"": "x"}}, "progress"},
		{"context_update_state", map[string]any{"progress": map[string]any{"a": 5}}, "progress"},
		{"context_update_state", map[string]any{"current_task": 5}, "current_task"},
		{"context_append_session", map[string]any{"summary": "x"}, "agent"},
		{"context_append_session", map[string]any{"agent": "a", "summary": "  "}, "summary"},
		{"context_append_session", map[string]any{"agent": "a", "summary": "s", "session_id": "../x"}, "session_id"},
		{"context_append_session", map[string]any{"agent": "a", "summary": "s", "skills_used": "x"}, "skills_used"},
		{"context_end_session", map[string]any{"session_id": "nope"}, "Session 'nope' not found"},
		{"context_end_session", map[string]any{}, "session_id"},
		{"context_add_skill", map[string]any{"name": "x", "description": "  ", "instructions": ""}, "description"},
		{"context_add_skill", map[string]any{"name": "x", "description": long, "instructions": ""}, "description"},
		{"context_add_skill", map[string]any{"name": "Bad Name", "description": "d", "instructions": ""}, "name"},
		{"context_add_skill", map[string]any{"name": "x", "description": "d"}, "instructions"},
		{"context_add_skill", map[string]any{"name": "x", "description": "d", "instructions": "", "scope": "team"}, "scope"},
		{"context_remove_skill", map[string]any{"name": "ghost"}, "Skill 'ghost' not found"},
		{"context_report_skill_usage", map[string]any{"skill_name": "ghost"}, "Skill 'ghost' not found"},
		{"context_report_skill_usage", map[string]any{"skill_name": "deploy-staging", "session_id": "a/b"}, "session_id"},
		{"context_rate_skill", map[string]any{"skill_name": "deploy-staging", "rating": 6}, "rating"},
		{"context_rate_skill", map[string]any{"skill_name": "deploy-staging", "rating": 2.5}, "rating"},
		{"context_rate_skill", map[string]any{"skill_name": "deploy-staging"}, "rating"},
		{"context_rate_skill", map[string]any{"skill_name": "ghost", "rating": 3}, "Skill 'ghost' not found"},
		{"context_propose_skill_improvement", map[string]any{"skill_name": "deploy-staging", "proposed_content": proposed}, "proposed_content"},
		{"context_propose_skill_improvement", map[string]any{"skill_name": "ghost", "proposed_content": "x"}, "Skill 'ghost' not found"},
		{"context_list_skill_proposals", map[string]any{"status": "open"}, "status"},
		{"context_list_skill_proposals", map[string]any{"skill_name": "ghost"}, "Skill 'ghost' not found"},
		{"context_resolve_skill_proposal", map[string]any{"skill_name": "deploy-staging", "id": prop["id"], "decision": "reject"}, "id"},
		{"context_resolve_skill_proposal", map[string]any{"skill_name": "deploy-staging", "id": "nope", "decision": "reject"}, "Proposal 'nope' not found"},
		{"context_resolve_skill_proposal", map[string]any{"skill_name": "deploy-staging", "id": prop["id"], "decision": "maybe"}, "decision"},
		{"context_check_in", map[string]any{"task": "t", "availability": "busy"}, "availability"},
		{"context_check_in", map[string]any{"task": "t", "doing": strings.Repeat("d", 201)}, "doing"},
		{"context_check_in", map[string]any{"task": "t", "files": files}, "files"},
		{"context_check_in", map[string]any{"issue_ref": "#1"}, "task"},
		{"context_check_out", map[string]any{"force": true}, "force"},
		{"context_set_intent", map[string]any{"kind": "destroy", "paths": []any{}, "areas": []any{}, "expires_at": expires}, "kind"},
		{"context_set_intent", map[string]any{"kind": "add", "paths": []any{}, "areas": []any{}, "expires_at": "tomorrow"}, "expires_at"},
		{"context_set_intent", map[string]any{"kind": "add", "paths": []any{""}, "areas": []any{}, "expires_at": expires}, "paths"},
		{"context_set_intent", map[string]any{"kind": "add", "paths": []any{}, "expires_at": expires}, "areas"},
		{"context_set_scope", map[string]any{"kind": "team", "key": "x", "scope": "public"}, "kind"},
		{"context_set_scope", map[string]any{"kind": "knowledge", "key": "ghost", "scope": "private"}, "Knowledge entry 'ghost' not found"},
		{"context_set_scope", map[string]any{"kind": "knowledge", "key": "architecture", "scope": "world"}, "scope"},
		{"context_set_scope", map[string]any{"kind": "knowledge", "key": 3, "scope": "private"}, "key"},
		{"context_set_scope", map[string]any{"kind": "decision", "key": 99, "scope": "private"}, "Decision '99' not found"},
		{"context_conflict_detail", map[string]any{"id": "nope"}, "Conflict 'nope' not found"},
		{"context_resolve_conflict", map[string]any{"id": "nope", "choice": "kept"}, "Conflict 'nope' not found"},
		{"context_resolve_conflict", map[string]any{"id": "nope", "choice": "file"}, "content"},
		{"context_resolve_conflict", map[string]any{"id": "nope", "choice": "kept", "content": "x"}, "content"},
		{"context_resolve_conflict", map[string]any{"id": "nope", "choice": "mine"}, "choice"},
		{"context_push", map[string]any{"remote": "nowhere"}, "nowhere"},
	} {
		r.fail(s, c.tool, c.args, c.want)
	}

	// all 16 resources read back what the tools wrote
	jsonEq(t, "knowledge", s.readJSON(t, "context://knowledge"), `[{"key":"architecture","content":"Hexagonal.\n","scope":"public"}]`)
	jsonEq(t, "knowledge/architecture", s.readJSON(t, "context://knowledge/architecture"), `{"key":"architecture","content":"Hexagonal.\n"}`)
	jsonEq(t, "conventions", s.readJSON(t, "context://conventions"), `[{"key":"git","content":"Feature branches.\n","scope":"public"}]`)
	jsonEq(t, "conventions/git", s.readJSON(t, "context://conventions/git"), `{"key":"git","content":"Feature branches.\n"}`)
	jsonEq(t, "decisions", s.readJSON(t, "context://decisions"), `[{"id":1,"title":"Use PostgreSQL","status":"accepted","scope":"public"},
		{"id":2,"title":"Use MySQL","status":"superseded","scope":"ephemeral"}]`)
	jsonEq(t, "decisions/1", s.readJSON(t, "context://decisions/1"),
		`{"id":1,"title":"Use PostgreSQL","status":"accepted","context":"ACID","decision":"PG 16","consequences":"ops"}`)
	state := s.readJSON(t, "context://state").(map[string]any)
	if state["current_task"] != "auth middleware" || state["last_agent"] != "claude-code" || state["last_machine"] != "testbox" {
		t.Errorf("state = %v", state)
	}
	jsonEq(t, "state progress", state["progress"], `{"auth":"50%"}`)
	hist := s.readJSON(t, "context://history").([]any)
	if len(hist) != 1 {
		t.Fatalf("history = %v", hist)
	}
	h := hist[0].(map[string]any)
	if h["id"] != "sess-1" || h["ended"] == nil || h["agent"] != "claude-code" {
		t.Errorf("history = %v", h)
	}
	jsonEq(t, "history lists", []any{h["knowledge_added"], h["decisions_added"], h["skills_used"]}, `[["architecture"],["1"],["deploy-staging"]]`)
	jsonEq(t, "skills", s.readJSON(t, "context://skills"), `[{"name":"deploy-staging","description":"Deploy to staging","scope":"public"}]`)
	sk := s.readJSON(t, "context://skills/deploy-staging").(map[string]any)
	if sk["content"] != proposed || sk["description"] != "Deploy to staging" {
		t.Errorf("skill = %v", sk)
	}
	stats := s.readJSON(t, "context://skills/stats").([]any)[0].(map[string]any)
	if stats["usage_count"] != float64(1) || stats["rating_count"] != float64(2) || stats["avg_rating"] != 2.5 ||
		stats["needs_attention"] != true || stats["last_used"] == nil {
		t.Errorf("stats = %v", stats)
	}
	fb := s.readJSON(t, "context://skills/deploy-staging/feedback").([]any)
	comments := map[any]any{}
	for _, f := range fb {
		comments[f.(map[string]any)["rating"]] = f.(map[string]any)["comment"]
		if f.(map[string]any)["agent"] != "claude-code" {
			t.Errorf("feedback agent = %v", f)
		}
	}
	if len(fb) != 2 || comments[float64(2)] != "no rollback" || comments[float64(3)] != "" {
		t.Errorf("feedback = %v", fb)
	}
	ps := s.readJSON(t, "context://skills/deploy-staging/proposals").([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["status"] != "accepted" || ps[0].(map[string]any)["resolved_by"] != "Ada Lovelace <ada@example.com>" {
		t.Errorf("proposals = %v", ps)
	}
	act := s.readJSON(t, "context://activity").([]any)
	if len(act) != 1 || act[0].(map[string]any)["status"] != "checked_out" || act[0].(map[string]any)["task"] != "auth" ||
		act[0].(map[string]any)["member"] != "ada-lovelace" || act[0].(map[string]any)["stale"] != false {
		t.Errorf("activity = %v", act)
	}
	jsonEq(t, "summary", s.readJSON(t, "context://summary"), `{"project":`+mustJSON(projectName(t, st))+
		`,"knowledge_count":1,"convention_count":1,"decisions_count":2,"skills_count":1,"current_task":"auth middleware","blockers":[]}`)
	man := s.readJSON(t, "context://manifest").(map[string]any)
	if man["schema_version"] != store.SchemaVersion {
		t.Errorf("manifest = %v", man)
	}

	// every commit the server made carries its agent and session (docs/architecture.md "Commits")
	for _, msg := range strings.Split(git(t, dir, "log", "--format=%B%x00", "ctx"), "\x00") {
		tr := store.Trailers(strings.TrimSpace(msg))
		if strings.TrimSpace(msg) == "" || tr["Ctx-Op"] == "init" {
			continue
		}
		if tr["Ctx-Agent"] != "claude-code" || tr["Ctx-Session"] != "sess-1" || tr["Ctx-Machine"] != "testbox" {
			t.Errorf("commit trailers %v, want Ctx-Agent claude-code, Ctx-Session sess-1:\n%s", tr, msg)
		}
	}
}

// TestMergeTools makes a real conflict (two clones edit the same line of one entry, one pushes, the other
// pulls through context_pull), then lists, details and resolves it through the tools.
func TestMergeTools(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "db", Content: "Use PostgreSQL.\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	// a teammate's clone: adopt, edit the same line, push
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "-q", originBare(t, dir), other)
	git(t, other, "config", "user.name", "Grace Hopper")
	git(t, other, "config", "user.email", "grace@example.com")
	ost, err := store.Open(ctx, other, store.Actor{Agent: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ost.Pull(ctx, store.PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ost.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "db", Content: "Use SQLite.\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ost.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "db", Content: "Use MySQL.\n"}); err != nil {
		t.Fatal(err)
	}

	s := serve(t, st, Options{Agent: "claude-code"}, "")
	r := refCounter{t: t, dir: dir, agent: "claude-code"}
	pull := structured(t, "context_pull", s.call(t, "context_pull", nil))
	if pull["action"] != "merge" || len(pull["conflicts"].([]any)) != 1 {
		t.Fatalf("pull = %v", pull)
	}
	ms := r.read(s, "context_merge_status", nil)
	if ms["open_conflicts"] != float64(1) || ms["ahead"] != float64(2) || ms["behind"] != float64(0) {
		t.Errorf("merge_status = %v", ms)
	}
	c := ms["conflicts"].([]any)[0].(map[string]any)
	if c["path"] != "knowledge/db.md" {
		t.Errorf("conflict = %v", c)
	}
	d := r.read(s, "context_conflict_detail", map[string]any{"id": "knowledge/db.md"})
	if d["id"] != c["id"] || !strings.Contains(d["kept"].(string)+d["lost"].(string), "SQLite") ||
		!strings.Contains(d["kept"].(string)+d["lost"].(string), "MySQL") {
		t.Errorf("conflict_detail = %v", d)
	}

	gp, err := s.c.GetPrompt(ctx, getPrompt("context_resolve_conflicts", nil))
	if err != nil {
		t.Fatal(err)
	}
	if txt := promptBody(t, gp); !strings.Contains(txt, "knowledge/db.md") || !strings.Contains(txt, c["id"].(string)) ||
		!strings.Contains(txt, "context_resolve_conflict") {
		t.Errorf("context_resolve_conflicts:\n%s", txt)
	}

	res := r.write(s, "context_resolve_conflict", map[string]any{"id": c["id"], "choice": "file",
		"content": "---\nscope: public\n---\nUse PostgreSQL, SQLite in tests.\n"}, "ctx", "conflict.resolve")
	if res["path"] != "knowledge/db.md" {
		t.Errorf("resolve_conflict = %v", res)
	}
	if ms := r.read(s, "context_merge_status", nil); ms["open_conflicts"] != float64(0) {
		t.Errorf("after resolve: %v", ms)
	}
	if got := s.readJSON(t, "context://knowledge/db").(map[string]any)["content"]; got != "Use PostgreSQL, SQLite in tests." {
		t.Errorf("knowledge/db = %q", got)
	}
	r.fail(s, "context_resolve_conflict", map[string]any{"id": c["id"], "choice": "kept"}, "not found")
}

func originBare(t *testing.T, dir string) string {
	t.Helper()
	out := git(t, dir, "config", "--get-regexp", `^url\..*\.insteadof$`)
	k, _, _ := strings.Cut(out, " ")
	return strings.TrimSuffix(strings.TrimPrefix(k, "url."), ".insteadof")
}
