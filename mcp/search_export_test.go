package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// TestSearchClosesTheIndexItOpensAhead: Search opens the history index on a goroutine while it checks
// the arguments; whatever the outcome (hits, an invalid argument found before the index is used, a
// missing index), the index it opened is closed when it returns: no file of the process stays open.
func TestSearchClosesTheIndexItOpensAhead(t *testing.T) {
	e := corpusServer(t)
	ctx := context.Background()
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	calls := []struct {
		args map[string]any
		dir  string
		bad  bool
	}{
		{map[string]any{"query": "apply_patch"}, e.hist, false},
		{map[string]any{"query": "x", "providers": []any{"nope"}}, e.hist, true},
		{map[string]any{"query": ""}, e.hist, true},
		{map[string]any{"query": "apply_patch"}, t.TempDir(), false}, // no index.db there
	}
	for _, c := range calls { // once first: what the first calls open for good (the store's packs)
		if _, err := Search(ctx, e.st, Options{HistoryDir: c.dir}, c.args); (err != nil) != c.bad {
			t.Fatalf("%v: %v", c.args, err)
		}
	}
	before := fds()
	for range 10 {
		for _, c := range calls {
			_, err := Search(ctx, e.st, Options{HistoryDir: c.dir}, c.args)
			if c.bad && !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("%v: %v, want ErrInvalidArgument", c.args, err)
			}
			if !c.bad && err != nil {
				t.Fatalf("%v: %v", c.args, err)
			}
		}
	}
	if after := fds(); after > before {
		t.Fatalf("%d files open after 40 searches, %d before: the index opened ahead was not closed", after, before)
	}
}
