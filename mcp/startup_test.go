package mcp

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ctx-dev/ctx/store"
)

// A server compiles a tool's input schema on the tool's first call, not at start-up: initialising and
// listing compile none, and a second call does not compile again.
func TestStartupCompilesNoSchema(t *testing.T) {
	_, st := newRepo(t, store.Actor{})
	before := schemasCompiled.Load()
	s := serve(t, st, Options{}, "")
	if _, err := s.c.ListTools(context.Background(), mcpgo.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	if n := schemasCompiled.Load() - before; n != 0 {
		t.Errorf("start-up and tools/list compiled %d schemas, want none", n)
	}
	for i := 0; i < 2; i++ {
		structured(t, "add", s.call(t, "context_add_knowledge", map[string]any{"key": "k", "content": "x\n"}))
	}
	if n := schemasCompiled.Load() - before; n != 1 {
		t.Errorf("two calls of one tool compiled %d schemas, want 1", n)
	}
}

// Every embedded schema is valid against its metaschema and compiles (the server compiles them lazily and
// without the metaschema check, so a broken one would otherwise show only on its tool's first call, or
// not at all).
func TestEmbeddedSchemasCompile(t *testing.T) {
	names, err := fs.Glob(schemaFS, "schemas/*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("embedded schemas: %v, %v", names, err)
	}
	for _, n := range names {
		if _, err := compileSchemaChecked(strings.TrimPrefix(n, "schemas/")); err != nil {
			t.Error(err)
		}
	}
	// The check catches a schema that breaks its metaschema; the trusted compile does not look.
	bad := []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": "query"}`)
	if _, err := compileSchemaDoc("bad.json", bad, true); err == nil {
		t.Error("a schema whose required is not an array passed the metaschema check")
	}
}

// The trusted compile (no metaschema check) validates arguments as the checked one does: the search
// tool's schema on valid and crafted arguments.
func TestTrustedSchemaValidatesAlike(t *testing.T) {
	trusted, err := compileSchema("search.input.json")
	if err != nil {
		t.Fatal(err)
	}
	checked, err := compileSchemaChecked("search.input.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"query": "x"},
		{"query": "x", "limit": 20, "providers": []any{"ctx", "codex"}, "content_scope": "calls"},
		{},
		{"query": 5},
		{"query": "x", "limit": 0},
		{"query": "x", "limit": 100000},
		{"query": "x", "content_scope": "everything"},
		{"query": "x", "event_type": "nonsense\u0000"},
		{"query": "x", "unknown": true},
		{"query": "x", "providers": "codex"},
	} {
		e1, e2 := validateArgs(trusted, args), validateArgs(checked, args)
		if (e1 == nil) != (e2 == nil) || (e1 != nil && e1.Error() != e2.Error()) {
			t.Errorf("%v: trusted %v, checked %v", args, e1, e2)
		}
	}
	if validateArgs(trusted, map[string]any{"query": "x", "limit": 0}) == nil {
		t.Error("limit 0 passed the trusted schema")
	}
}
