package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/mcp/")

const testdataDir = "../testdata/mcp"

// resourceSchemas loads testdata/mcp/resources/*.json (JSON Schemas written from the shapes of docs/mcp.md).
func resourceSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testdataDir, "resources", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no resource schemas: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	ids := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		id := doc.(map[string]any)["$id"].(string)
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ids[strings.TrimSuffix(filepath.Base(f), ".json")] = id
	}
	out := map[string]*jsonschema.Schema{}
	for name, id := range ids {
		sch, err := c.Compile(id)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		out[name] = sch
	}
	return out
}

// TestResourceContract validates every resource's output, including the error objects, against the
// JSON Schemas written from docs/mcp.md, and get_project_context's structuredContent against its
// output schema.
func TestResourceContract(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	// an agent's write, so that the members list has an agent and memory an agent_generated item
	other, err := store.Open(context.Background(), dir, store.Actor{Agent: "cursor", Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.SetEntry(context.Background(), store.KnowledgeKind, store.SetEntry{Key: "db", Content: strings.Repeat("é", 5000)}); err != nil {
		t.Fatal(err)
	}
	// state, a session, skill usage, feedback and a proposal, and activity (check-in)
	ctx := context.Background()
	task, blockers := "Implementing auth middleware", []string{"Waiting for API spec"}
	if _, _, err := other.UpdateState(ctx, store.StatePatch{CurrentTask: &task, Blockers: &blockers}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.StartSession(ctx, store.SessionUpdate{ID: "sess-a", Summary: "schema work", KnowledgeAdded: []string{"db"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.ReportSkillUsage(ctx, "deploy-staging", "sess-a"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []int{2, 3} {
		if _, _, err := other.RateSkill(ctx, "deploy-staging", r, "meh"); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := other.ProposeSkill(ctx, "deploy-staging", skillMD+"2. Roll back\n", "add rollback"); err != nil {
		t.Fatal(err)
	}
	branch := "feature/auth"
	if _, _, err := other.CheckIn(ctx, store.CheckIn{Task: "auth", Availability: "working", Doing: "writing middleware",
		Branch: &branch, Files: []string{"auth.go"}}); err != nil {
		t.Fatal(err)
	}
	schemas := resourceSchemas(t)
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			s := tr.serve(t, st, Options{Agent: "claude-code"}, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)
			resourceContract(t, s, schemas, task)
		})
	}
}

// resourceContract is TestResourceContract's checks on one connected session.
func resourceContract(t *testing.T, s *session, schemas map[string]*jsonschema.Schema, task string) {

	cases := map[string]string{
		"context://manifest":                        "manifest",
		"context://summary":                         "summary",
		"context://knowledge":                       "knowledge",
		"context://knowledge/architecture":          "knowledge-entry",
		"context://knowledge/missing":               "knowledge-entry",
		"context://conventions":                     "conventions",
		"context://conventions/git":                 "convention",
		"context://conventions/missing":             "convention",
		"context://decisions":                       "decisions",
		"context://decisions/1":                     "decision",
		"context://decisions/Adopt%20gRPC":          "decision",
		"context://decisions/99":                    "decision",
		"context://state":                           "state",
		"context://history":                         "history",
		"context://skills":                          "skills",
		"context://skills/deploy-staging":           "skill",
		"context://skills/missing":                  "skill",
		"context://skills/stats":                    "skills-stats",
		"context://skills/deploy-staging/feedback":  "skill-feedback",
		"context://skills/missing/feedback":         "skill-feedback",
		"context://skills/deploy-staging/proposals": "skill-proposals",
		"context://skills/missing/proposals":        "skill-proposals",
		"context://activity":                        "activity",
	}
	covered := map[string]bool{}
	for uri, name := range cases {
		sch := schemas[name]
		if sch == nil {
			t.Fatalf("no schema %s.json", name)
		}
		covered[name] = true
		text := s.read(t, uri)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%s does not match %s.json: %v\n%s", uri, name, err, text)
		}
	}
	for name := range schemas {
		if !covered[name] && name != "error" {
			t.Errorf("schema %s.json validates no resource", name)
		}
	}

	// get_project_context against its output schema (the embedded copy served as outputSchema)
	out, err := compileSchema("get_project_context.output.json")
	if err != nil {
		t.Fatal(err)
	}
	res := s.call(t, "get_project_context", map[string]any{"project": "engine-notes"})
	pc := structured(t, "get_project_context", res)
	b, _ := json.Marshal(pc)
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err := out.Validate(doc); err != nil {
		t.Errorf("get_project_context output does not match its output schema: %v\n%s", err, b)
	}
	if p := pc["pulse"].([]any); len(p) != 1 || p[0].(map[string]any)["agent_id"] != "ada-lovelace/cursor" ||
		p[0].(map[string]any)["availability"] != "working" {
		t.Errorf("pulse = %v", pc["pulse"])
	}
	for uri, check := range map[string]func(v any) bool{
		"context://state":   func(v any) bool { return v.(map[string]any)["current_task"] == task },
		"context://summary": func(v any) bool { return v.(map[string]any)["current_task"] == task },
		"context://history": func(v any) bool { return len(v.([]any)) == 1 },
		"context://skills/stats": func(v any) bool {
			st := v.([]any)[0].(map[string]any)
			return st["usage_count"] == float64(1) && st["rating_count"] == float64(2) && st["needs_attention"] == true
		},
		"context://skills/deploy-staging/feedback":  func(v any) bool { return len(v.([]any)) == 2 },
		"context://skills/deploy-staging/proposals": func(v any) bool { return len(v.([]any)) == 1 },
		"context://activity":                        func(v any) bool { return len(v.([]any)) == 1 },
	} {
		if v := s.readJSON(t, uri); !check(v) {
			t.Errorf("%s = %v", uri, v)
		}
	}
	kinds := map[string]int{}
	for _, m := range pc["members"].([]any) {
		kinds[m.(map[string]any)["kind"].(string)]++
	}
	if kinds["person"] == 0 || kinds["agent"] < 2 {
		t.Errorf("members = %v; want persons and the agents claude-code and cursor", pc["members"])
	}
	for _, m := range pc["memory"].([]any) {
		mm := m.(map[string]any)
		if mm["key"] != "db" {
			continue
		}
		val := mm["value"].(string)
		if n := len([]rune(val)); n > maxMemoryValue || n < maxMemoryValue-200 || mm["provenance"] != "agent_generated" || mm["updated_by"] != "cursor" {
			t.Errorf("memory db = %v (value truncated to at most 4000 characters, provenance agent_generated, updated_by cursor)", mm)
		}
		if !regexp.MustCompile(`\n\[truncated: showing \d+ of \d+ bytes; read context://knowledge/db\]$`).MatchString(val) {
			t.Errorf("memory db: the 4,000-character cut is not marked: ...%q", val[max(len(val)-120, 0):])
		}
	}
}

// TestProjectContextSchemas checks that get_project_context is served with its embedded input and
// output schemas, verbatim (the whole tools/list is snapshotted by TestCatalogSnapshots).
func TestProjectContextSchemas(t *testing.T) {
	_, st := newRepo(t, store.Actor{})
	s := serve(t, st, Options{}, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(rawRequest(t, s, "tools/list"), &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if string(tool["name"]) != `"get_project_context"` {
			continue
		}
		for kind, served := range map[string]json.RawMessage{"input": tool["inputSchema"], "output": tool["outputSchema"]} {
			if !jsonEqual(served, rawSchema("get_project_context."+kind+".json")) {
				t.Errorf("served %s schema differs from schemas/get_project_context.%s.json", kind, kind)
			}
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestProjectContextSchemaDocs: docs/mcp.md describes get_project_context's output schema as it is (seed
// 002's, exact): it promises no error branch (oneOf) that the schema does not have.
func TestProjectContextSchemaDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n### `get_project_context`\n")
	if !ok {
		t.Fatal("docs/mcp.md has no get_project_context section")
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	var top map[string]json.RawMessage
	if err := json.Unmarshal(rawSchema("get_project_context.output.json"), &top); err != nil {
		t.Fatal(err)
	}
	if _, branches := top["oneOf"]; strings.Contains(sec, "oneOf") != branches {
		t.Errorf("docs/mcp.md's get_project_context section and the output schema disagree on a top-level oneOf (schema has one: %v)", branches)
	}
}
