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

// Every embedded schema compiles (the server compiles them lazily, so a broken one would otherwise show
// only on its tool's first call).
func TestEmbeddedSchemasCompile(t *testing.T) {
	names, err := fs.Glob(schemaFS, "schemas/*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("embedded schemas: %v, %v", names, err)
	}
	for _, n := range names {
		if _, err := compileSchema(strings.TrimPrefix(n, "schemas/")); err != nil {
			t.Error(err)
		}
	}
}
