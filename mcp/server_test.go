package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

const skillMD = "---\nname: deploy-staging\ndescription: Deploy the application to staging environment\n---\n\n## Steps\n\n1. Build\n"

// seed fills a store through the store API (as the CLI would).
func seed(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must2 := func(_, _ any, err error) { t.Helper(); must(nil, err) }
	must(st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "architecture", Content: "## Architecture\n\nMicroservices with gRPC.\n"}))
	must(st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "credentials-setup", Content: "ask ops\n", Scope: store.Private}))
	must(st.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "git", Content: "Always use feature branches.\n"}))
	must2(st.AddDecision(ctx, store.NewDecision{Title: "Use PostgreSQL for persistence", Status: "accepted",
		Context: "Need ACID transactions", Decision: "PostgreSQL 16", Consequences: "Team needs PostgreSQL expertise"}))
	must2(st.AddDecision(ctx, store.NewDecision{Title: "Adopt gRPC", Context: "c", Decision: "d", Consequences: "e"}))
	_, _, err := st.Apply(ctx, store.Op{Name: "skill.add", Key: "deploy-staging", Summary: "add skill deploy-staging"},
		store.Batch{Skills: []store.NewSkill{{Name: "deploy-staging", Content: []byte(skillMD)}}})
	if err != nil {
		t.Fatal(err)
	}
}

var wantResources = []string{"context://activity", "context://conventions", "context://decisions", "context://history",
	"context://knowledge", "context://manifest", "context://skills", "context://skills/stats", "context://state", "context://summary"}

var wantTemplates = []string{"context://conventions/{key}", "context://decisions/{id}", "context://knowledge/{key}",
	"context://skills/{name}", "context://skills/{name}/feedback", "context://skills/{name}/proposals"}

func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	gb, _ := json.Marshal(got)
	var g any
	if err := json.Unmarshal(gb, &g); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, want)
	}
}

func TestResourcesAndTools(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	head := git(t, dir, "rev-parse", "HEAD")
	status := git(t, dir, "status", "--porcelain")
	s := serve(t, st, Options{Agent: "claude-code", Session: "sess-1", Version: "test"}, "")
	ctx := context.Background()

	// resources/list and resources/templates/list
	lr, err := s.c.ListResources(ctx, mcpgo.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
		if r.MIMEType != "application/json" {
			t.Errorf("%s: mimeType %q", r.URI, r.MIMEType)
		}
	}
	sort.Strings(uris)
	if !reflect.DeepEqual(uris, wantResources) {
		t.Errorf("resources/list = %v\nwant %v", uris, wantResources)
	}
	lt, err := s.c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var tpls []string
	for _, r := range lt.ResourceTemplates {
		tpls = append(tpls, r.URITemplate.Raw())
	}
	sort.Strings(tpls)
	if !reflect.DeepEqual(tpls, wantTemplates) {
		t.Errorf("resources/templates/list = %v\nwant %v", tpls, wantTemplates)
	}

	// every resource, in the shapes of docs/mcp.md
	jsonEq(t, "knowledge", s.readJSON(t, "context://knowledge"), `[
		{"key":"architecture","content":"## Architecture\n\nMicroservices with gRPC.\n","scope":"public"},
		{"key":"credentials-setup","content":"ask ops\n","scope":"private"}]`)
	jsonEq(t, "knowledge/architecture", s.readJSON(t, "context://knowledge/architecture"),
		`{"key":"architecture","content":"## Architecture\n\nMicroservices with gRPC.\n"}`)
	jsonEq(t, "conventions", s.readJSON(t, "context://conventions"),
		`[{"key":"git","content":"Always use feature branches.\n","scope":"public"}]`)
	jsonEq(t, "conventions/git", s.readJSON(t, "context://conventions/git"),
		`{"key":"git","content":"Always use feature branches.\n"}`)
	jsonEq(t, "decisions", s.readJSON(t, "context://decisions"), `[
		{"id":1,"title":"Use PostgreSQL for persistence","status":"accepted","scope":"public"},
		{"id":2,"title":"Adopt gRPC","status":"proposed","scope":"public"}]`)
	pg := `{"id":1,"title":"Use PostgreSQL for persistence","status":"accepted","context":"Need ACID transactions",
		"decision":"PostgreSQL 16","consequences":"Team needs PostgreSQL expertise"}`
	jsonEq(t, "decisions/1", s.readJSON(t, "context://decisions/1"), pg)
	jsonEq(t, "decisions/<title>", s.readJSON(t, "context://decisions/Use%20PostgreSQL%20for%20persistence"), pg)
	jsonEq(t, "skills", s.readJSON(t, "context://skills"),
		`[{"name":"deploy-staging","description":"Deploy the application to staging environment","scope":"public"}]`)
	jsonEq(t, "skills/deploy-staging", s.readJSON(t, "context://skills/deploy-staging"),
		`{"name":"deploy-staging","description":"Deploy the application to staging environment","content":`+mustJSON(skillMD)+`}`)
	jsonEq(t, "skills/stats", s.readJSON(t, "context://skills/stats"),
		`[{"skill_name":"deploy-staging","usage_count":0,"avg_rating":0,"rating_count":0,"last_used":null,"needs_attention":false}]`)
	jsonEq(t, "feedback", s.readJSON(t, "context://skills/deploy-staging/feedback"), `[]`)
	jsonEq(t, "proposals", s.readJSON(t, "context://skills/deploy-staging/proposals"), `[]`)
	jsonEq(t, "history", s.readJSON(t, "context://history"), `[]`)
	jsonEq(t, "activity", s.readJSON(t, "context://activity"), `[]`)
	jsonEq(t, "state", s.readJSON(t, "context://state"),
		`{"current_task":"","blockers":[],"progress":{},"last_agent":"","last_machine":"","updated_at":null}`)
	jsonEq(t, "summary", s.readJSON(t, "context://summary"), `{"project":`+mustJSON(projectName(t, st))+
		`,"knowledge_count":2,"convention_count":1,"decisions_count":2,"skills_count":1,"current_task":"","blockers":[]}`)
	man := s.readJSON(t, "context://manifest").(map[string]any)
	if man["schema_version"] != store.SchemaVersion || man["project"].(map[string]any)["name"] != "engine-notes" {
		t.Errorf("manifest = %v", man)
	}

	// the error objects of docs/mcp.md, as resource contents
	for uri, msg := range map[string]string{
		"context://knowledge/nonexistent":       "Knowledge entry 'nonexistent' not found",
		"context://conventions/nonexistent":     "Convention 'nonexistent' not found",
		"context://decisions/99":                "Decision '99' not found",
		"context://skills/nonexistent":          "Skill 'nonexistent' not found",
		"context://skills/nonexistent/feedback": "Skill 'nonexistent' not found",
		"context://skills/ghost/proposals":      "Skill 'ghost' not found",
		// invalid keys and names: not found, never a path escape
		"context://knowledge/..%2F..%2Fmanifest": "Knowledge entry '../../manifest' not found",
		"context://conventions/a%2Fb":            "Convention 'a/b' not found",
		"context://skills/..":                    "Skill '..' not found",
		"context://knowledge/.hidden":            "Knowledge entry '.hidden' not found",
	} {
		jsonEq(t, uri, s.readJSON(t, uri), `{"error":`+mustJSON(msg)+`}`)
	}

	// tools: each write is one commit with the trailers of docs/architecture.md "Commits"
	countBefore := git(t, dir, "rev-list", "--count", "ctx")
	res := structured(t, "add_knowledge", s.call(t, "context_add_knowledge", map[string]any{
		"key": "tech-stack", "content": "Go 1.26\n", "provenance": "owner_approved"}))
	if res["key"] != "tech-stack" || res["scope"] != "public" || res["commit"] != git(t, dir, "rev-parse", "ctx") {
		t.Errorf("context_add_knowledge = %v", res)
	}
	msg := git(t, dir, "log", "-1", "--format=%B", "ctx")
	for _, want := range []string{"Ctx-Op: knowledge.set", "Ctx-Key: tech-stack", "Ctx-Agent: claude-code", "Ctx-Session: sess-1", "Ctx-Machine: testbox"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	if got := git(t, dir, "rev-list", "--count", "ctx"); got != itoa(atoi(countBefore)+1) {
		t.Errorf("commits after one write: %s, want %d", got, atoi(countBefore)+1)
	}
	jsonEq(t, "knowledge/tech-stack", s.readJSON(t, "context://knowledge/tech-stack"), `{"key":"tech-stack","content":"Go 1.26\n"}`)
	// the same write again changes nothing: no commit, commit ""
	res = structured(t, "add_knowledge again", s.call(t, "context_add_knowledge", map[string]any{"key": "tech-stack", "content": "Go 1.26\n"}))
	if res["commit"] != "" {
		t.Errorf("unchanged write made commit %v", res["commit"])
	}
	// updating a private entry without a scope keeps it private
	res = structured(t, "add_knowledge private", s.call(t, "context_add_knowledge", map[string]any{"key": "credentials-setup", "content": "ask ops, then vault\n"}))
	if res["scope"] != "private" || res["commit"] != git(t, dir, "rev-parse", store.RefPrivate) {
		t.Errorf("private update = %v", res)
	}
	res = structured(t, "remove_knowledge", s.call(t, "context_remove_knowledge", map[string]any{"key": "tech-stack"}))
	if res["commit"] != git(t, dir, "rev-parse", "ctx") || !strings.Contains(git(t, dir, "log", "-1", "--format=%B", "ctx"), "Ctx-Op: knowledge.rm") {
		t.Errorf("context_remove_knowledge = %v", res)
	}
	jsonEq(t, "removed", s.readJSON(t, "context://knowledge/tech-stack"), `{"error":"Knowledge entry 'tech-stack' not found"}`)

	structured(t, "add_convention", s.call(t, "context_add_convention", map[string]any{"key": "env", "content": "No sudo.\n", "scope": "ephemeral"}))
	if !strings.Contains(git(t, dir, "log", "-1", "--format=%B", store.RefEphemeral), "Ctx-Op: convention.set") {
		t.Errorf("ephemeral convention not committed on %s", store.RefEphemeral)
	}
	res = structured(t, "remove_convention", s.call(t, "context_remove_convention", map[string]any{"key": "env"}))
	if res["scope"] != "ephemeral" {
		t.Errorf("context_remove_convention = %v", res)
	}

	res = structured(t, "record_decision", s.call(t, "context_record_decision", map[string]any{
		"title": "Use NATS", "context": "events", "decision": "NATS JetStream", "consequences": "ops"}))
	if res["id"] != float64(3) || res["status"] != "proposed" || res["commit"] != git(t, dir, "rev-parse", "ctx") {
		t.Errorf("context_record_decision = %v", res)
	}
	if !strings.Contains(git(t, dir, "log", "-1", "--format=%B", "ctx"), "Ctx-Op: decision.add") {
		t.Errorf("decision commit lacks its trailer")
	}
	res = structured(t, "update_status", s.call(t, "context_update_decision_status", map[string]any{"id": 2, "status": "superseded", "superseded_by": 3}))
	if res["status"] != "superseded" || res["superseded_by"] != float64(3) {
		t.Errorf("context_update_decision_status = %v", res)
	}
	res = structured(t, "update_status by title", s.call(t, "context_update_decision_status", map[string]any{"id": "Use NATS", "status": "accepted"}))
	if res["id"] != float64(3) || res["status"] != "accepted" {
		t.Errorf("by title = %v", res)
	}
	jsonEq(t, "decisions after", s.readJSON(t, "context://decisions"), `[
		{"id":1,"title":"Use PostgreSQL for persistence","status":"accepted","scope":"public"},
		{"id":2,"title":"Adopt gRPC","status":"superseded","scope":"public"},
		{"id":3,"title":"Use NATS","status":"accepted","scope":"public"}]`)

	// bad arguments and missing entries: tool errors, nothing written
	tipBefore := git(t, dir, "rev-parse", "ctx")
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"context_add_knowledge", map[string]any{"content": "x"}, "key"},
		{"context_add_knowledge", map[string]any{"key": "k", "content": "x", "scope": "team"}, "scope"},
		{"context_add_knowledge", map[string]any{"key": "k", "content": "x", "provenance": "rumour"}, "provenance"},
		{"context_add_knowledge", map[string]any{"key": "../escape", "content": "x"}, "key"},
		{"context_add_knowledge", map[string]any{"key": "k", "content": 5}, "content"},
		{"context_add_knowledge", map[string]any{"key": "k", "content": "x", "extra": true}, "extra"},
		{"context_remove_knowledge", map[string]any{"key": "nope"}, "Knowledge entry 'nope' not found"},
		{"context_remove_convention", map[string]any{"key": "nope"}, "Convention 'nope' not found"},
		{"context_record_decision", map[string]any{"title": "  "}, "title"},
		{"context_record_decision", map[string]any{"title": "x", "status": "maybe"}, "status"},
		{"context_update_decision_status", map[string]any{"id": 99, "status": "accepted"}, "Decision '99' not found"},
		{"context_update_decision_status", map[string]any{"id": 1, "status": "accepted", "superseded_by": 2}, "superseded_by"},
		{"context_update_decision_status", map[string]any{"id": 1.5, "status": "accepted"}, "id"},
		{"get_project_context", map[string]any{}, "project"},
		{"get_project_context", map[string]any{"project": "Not A Slug"}, "project"},
		{"get_project_context", map[string]any{"project": "other-project"}, "other-project"},
	} {
		res := s.call(t, c.tool, c.args)
		if !res.IsError || !strings.Contains(resultText(res), c.want) {
			t.Errorf("%s %v: isError %v, %q; want an error naming %q", c.tool, c.args, res.IsError, resultText(res), c.want)
		}
	}
	if got := git(t, dir, "rev-parse", "ctx"); got != tipBefore {
		t.Errorf("failed tool calls moved the context branch")
	}

	// get_project_context
	slug := Slugify(projectName(t, st), maxSlug)
	pc := structured(t, "get_project_context", s.call(t, "get_project_context", map[string]any{"project": slug}))
	proj := pc["project"].(map[string]any)
	if proj["slug"] != slug || proj["team"] != teamOf(repoURL(t, st)) || proj["name"] != projectName(t, st) {
		t.Errorf("project = %v", proj)
	}
	mem := pc["memory"].([]any)
	if len(mem) != 1 || mem[0].(map[string]any)["key"] != "architecture" || mem[0].(map[string]any)["updated_by"] != "Ada Lovelace" ||
		mem[0].(map[string]any)["provenance"] != "owner_instruction" {
		t.Errorf("memory (public knowledge only) = %v", mem)
	}
	var you []string
	for _, m := range pc["members"].([]any) {
		mm := m.(map[string]any)
		if mm["is_you"] == true {
			you = append(you, mm["kind"].(string)+":"+mm["address"].(string))
		}
	}
	if !reflect.DeepEqual(you, []string{"person:ada-lovelace", "agent:ada-lovelace/claude-code"}) {
		t.Errorf("is_you members = %v (members %v)", you, pc["members"])
	}

	// the user's HEAD, index and working files are never touched (docs/architecture.md "Promises")
	if got := git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved: %s -> %s", head, got)
	}
	if got := git(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("git status changed:\n%s\nwas:\n%s", got, status)
	}
}

// TestUnknownResource: a URI outside the resources of docs/mcp.md is a JSON-RPC error, not an error object.
func TestUnknownResource(t *testing.T) {
	_, st := newRepo(t, store.Actor{})
	s := serve(t, st, Options{}, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)
	for _, uri := range []string{"context://nope", "context://knowledge/a/b", "file:///etc/passwd"} {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = uri
		if _, err := s.c.ReadResource(context.Background(), req); err == nil {
			t.Errorf("read %s: no error", uri)
		}
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"My Project":                   "my-project",
		"  --Ünïcode__name--":          "n-code-name",
		"engine-notes":                 "engine-notes",
		"":                             "",
		"a" + strings.Repeat("-b", 30): "a-b-b-b-b-b-b-b-b-b-b-b-b-b-b-b-b-b-b-b",
	} {
		if got := Slugify(in, maxSlug); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"https://github.com/org/repo.git": "org",
		"git@github.com:team/repo.git":    "team",
		"ssh://git@host/a/b/c":            "b",
		"":                                "",
		"/srv/git/repo":                   "",
	} {
		if got := teamOf(in); got != want {
			t.Errorf("teamOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func projectName(t *testing.T, st *store.Store) string {
	t.Helper()
	v, err := st.RefView(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, err := v.ReadManifest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m.Project.Name
}

func repoURL(t *testing.T, st *store.Store) string {
	t.Helper()
	v, err := st.RefView(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, err := v.ReadManifest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m.Project.RepoURL
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func atoi(s string) int {
	var n int
	_ = json.Unmarshal([]byte(s), &n) // not a number: 0
	return n
}
