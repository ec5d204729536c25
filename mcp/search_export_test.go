package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestSearchMatchesTool: Search (what `ctx history search` runs) returns the object the search tool
// returns over stdio, hit for hit, for queries with and without the context store (provider ctx), and
// its argument errors wrap ErrInvalidArgument.
func TestSearchMatchesTool(t *testing.T) {
	e := corpusServer(t)
	ctx := context.Background()
	for _, k := range []string{"zanzibar", "deploy"} {
		setEntry(t, e.st, store.KnowledgeKind, k, "# "+k+"\nHow to "+k+": run make release, then apply_patch the tests.\n")
	}
	sawCtx := false
	for _, args := range []map[string]any{
		{"query": "zanzibar"},
		{"query": "zanzibar", "providers": []any{"ctx"}},
		{"query": "apply_patch", "limit": 30},
		{"query": "apply_patch tests", "providers": []any{"ctx", "codex"}},
		{"query": "deploy", "event_type": "summary"},
		{"query": "make release", "content_scope": "transcript", "limit": 3},
	} {
		name := fmt.Sprint(args)
		want := structured(t, name, e.s.call(t, "search", args))
		got, err := Search(ctx, e.st, Options{HistoryDir: e.hist}, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if len(list(want, "results")) == 0 || !reflect.DeepEqual(m, want) {
			t.Errorf("%s:\nSearch %s\ntool   %v", name, b, want)
		}
		// The store's search copy serves both; reading the store directly gives the same object.
		ctxIndexDisabled = true
		direct, err := Search(ctx, e.st, Options{HistoryDir: e.hist}, args)
		ctxIndexDisabled = false
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if db, _ := json.Marshal(direct); string(db) != string(b) {
			t.Errorf("%s:\ncopy   %s\ndirect %s", name, b, db)
		}
		for _, h := range list(m, "results") {
			sawCtx = sawCtx || obj(h)["provider"] == "ctx"
		}
	}
	if !sawCtx {
		t.Error("no query found a context-store hit")
	}
	for _, bad := range []map[string]any{{"query": ""}, {"query": "x", "providers": []any{"nope"}},
		{"query": "x", "since": "2026-02-01T00:00:00Z", "until": "2025-01-01T00:00:00Z"}} {
		if _, err := Search(ctx, e.st, Options{HistoryDir: e.hist}, bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v: %v, want ErrInvalidArgument", bad, err)
		}
	}
}
