package mcp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
)

// TestStatusUpgradeSection: status carries the agent-history contract's upgrade section (docs/mcp.md) beside history and local_usage
// (in structuredContent only, not in the text fallback):
// everything current over a freshly imported index and a new store (date-sharded layout), with this
// ctx's schema version and the index path as a local diagnostic.
func TestStatusUpgradeSection(t *testing.T) {
	e := corpusServer(t)
	res := e.s.call(t, "status", nil)
	st := structured(t, "status", res)
	// The machine-only facts are in structuredContent alone: the text fallback is the store's status and
	// the history report (docs/mcp.md: they "do not expand the MCP text fallback").
	var text map[string]any
	if err := json.Unmarshal([]byte(resultText(res)), &text); err != nil || text["history"] == nil || text["branch"] == nil ||
		text["upgrade"] != nil || text["local_usage"] != nil || text["read_only"] != nil {
		t.Errorf("status text fallback = %.400s (%v)", resultText(res), err)
	}
	up := obj(st["upgrade"])
	hi, cs := obj(up["history_index"]), obj(up["context_store"])
	if st["read_only"] != true || up["state"] != "current" || up["ctx_version"] == "" || len(list(up, "actions")) != 0 ||
		hi["state"] != "current" || hi["schema_version"] != float64(history.SchemaVersion) ||
		hi["supported_version"] != float64(history.SchemaVersion) || hi["path"] != filepath.Join(e.hist, "index.db") ||
		cs["state"] != "current" || cs["layout"] != float64(2) || cs["schema_version"] == "" {
		t.Fatalf("upgrade = %v", up)
	}
}

// setIndexVersion sets the PRAGMA user_version of the index in dir (an index "of an older ctx").
func setIndexVersion(t *testing.T, dir string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		t.Fatal(err)
	}
}

// TestOlderIndexNotRebuiltByServer: an index of an older schema is neither read nor rebuilt by the server
// (the MCP process never writes derived state): status says rebuild_required with the action, search and
// query_events answer from the context store with the hint to rebuild and freshness rebuild_required, and
// the index file keeps its version and rows; an import (history.Open) rebuilds it, and the same server
// then reads it.
func TestOlderIndexNotRebuiltByServer(t *testing.T) {
	e := corpusServer(t)
	setIndexVersion(t, e.hist, history.SchemaVersion-1)
	before := history.Inspect(context.Background(), e.hist)
	s := serve(t, e.st, Options{HistoryDir: e.hist}, "")
	st := structured(t, "status", s.call(t, "status", nil))
	up := obj(st["upgrade"])
	hi := obj(up["history_index"])
	if up["state"] != "action_required" || hi["state"] != "rebuild_required" || hi["schema_version"] != float64(history.SchemaVersion-1) ||
		!strings.Contains(fmt.Sprint(up["actions"]), "ctx history import") || obj(st["history"])["exists"] != false ||
		!strings.Contains(fmt.Sprint(obj(st["history"])["hint"]), "older ctx") {
		t.Fatalf("status over an older index = upgrade %v, history %v", up, st["history"])
	}
	res := structured(t, "search", s.call(t, "search", map[string]any{"query": "apply_patch"}))
	if len(list(res, "results")) != 0 || !strings.Contains(fmt.Sprint(res["hint"]), "older ctx") {
		t.Errorf("search over an older index = %v", res)
	}
	res = structured(t, "query_events", s.call(t, "query_events", nil))
	if obj(res["freshness"])["state"] != "rebuild_required" || len(list(res, "events")) != 0 {
		t.Errorf("query_events over an older index = %v", res)
	}
	is := history.Inspect(context.Background(), e.hist)
	if is.SchemaVersion != history.SchemaVersion-1 || before.Generation == 0 || is.Generation != before.Generation {
		t.Fatalf("the server changed the older index: %+v", is)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.hist, "index.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil || n < 900 {
		t.Errorf("the older index lost its events: %d %v", n, err)
	}
	db.Close()
	// The import's Open rebuilds it (empty, generation bumped): the server reads it from then on.
	reimport(t, e.hist, e.extra)
	st = structured(t, "status after import", s.call(t, "status", nil))
	if hi := obj(obj(st["upgrade"])["history_index"]); hi["state"] != "current" || obj(st["history"])["exists"] != true {
		t.Errorf("status after the rebuild = %v, history %v", hi, st["history"])
	}
}

// TestQueryEventsFreshnessFrontier: every event_range_page carries freshness (the generation, when the
// import that made it ran, how to refresh) and its frontier (the page's last event, whether the
// selection ends there), which moves with the pages.
func TestQueryEventsFreshnessFrontier(t *testing.T) {
	e := corpusServer(t)
	var cursor any
	var lastID string
	for i := 0; ; i++ {
		args := map[string]any{"limit": 100, "content": "none", "providers": []any{"codex"}}
		if cursor != nil {
			args["cursor"] = cursor
		}
		res := structured(t, "page", e.s.call(t, "query_events", args))
		fr, fe := obj(res["frontier"]), obj(res["freshness"])
		if fe["state"] != "indexed" || fe["generation"] != res["generation"] || fe["changed_at"] == nil ||
			fe["refreshed_by"] != "ctx history import" {
			t.Fatalf("freshness = %v", fe)
		}
		evs := list(res, "events")
		last := obj(evs[len(evs)-1])
		if fr["last_event_id"] != last["ctx_event_id"] || fr["last_event_id"] == lastID || fr["reached_end"] != res["terminal"] ||
			fr["last_at"] != last["at"] {
			t.Fatalf("page %d: frontier = %v, last event %v", i, fr, last)
		}
		lastID = last["ctx_event_id"].(string)
		if res["terminal"] == true {
			if i == 0 {
				t.Fatal("one page: the frontier never moved")
			}
			break
		}
		cursor = res["next_cursor"]
	}
	// Without an index: no_index, no frontier event.
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	s := serve(t, st, Options{HistoryDir: filepath.Join(t.TempDir(), "none")}, "")
	res := structured(t, "no index", s.call(t, "query_events", nil))
	if obj(res["freshness"])["state"] != "no_index" || obj(res["frontier"])["last_event_id"] != nil || obj(res["frontier"])["reached_end"] != true {
		t.Errorf("query_events without an index = %v", res)
	}
}

// shapeOf is the JSON shape of v: an object's keys with their shapes, an array's elements' shapes merged
// (objects: the union of their keys), a scalar's type; shapes that differ join as "a|b".
func shapeOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = shapeOf(e)
		}
		return m
	case []any:
		var merged any
		for _, e := range x {
			merged = mergeShape(merged, shapeOf(e))
		}
		if merged == nil {
			return []any{}
		}
		return []any{merged}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func mergeShape(a, b any) any {
	if a == nil {
		return b
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		out := map[string]any{}
		for k, v := range am {
			out[k] = v
		}
		for k, v := range bm {
			out[k] = mergeShape(out[k], v)
		}
		return out
	}
	as, bs := fmt.Sprint(a), fmt.Sprint(b)
	if as == bs {
		return a
	}
	if aok || bok {
		return "object|" + map[bool]string{true: bs, false: as}[aok]
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(as+"|"+bs, "|") {
		parts[p] = true
	}
	keys := make([]string, 0, len(parts))
	for p := range parts {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	return strings.Join(keys, "|")
}

// TestHistoryOutputShapes snapshots the structuredContent shapes of the history read tools (every key
// and its JSON type, array elements merged) over the corpus: a field added, renamed, dropped or retyped
// against the agent-history contract (docs/mcp.md) shows here; review the difference, then -update.
func TestHistoryOutputShapes(t *testing.T) {
	e := corpusServer(t)
	s := e.s
	out := map[string]any{}
	add := func(name, tool string, args map[string]any) map[string]any {
		t.Helper()
		res := structured(t, name, s.call(t, tool, args))
		out[name] = shapeOf(res)
		return res
	}
	add("status", "status", nil)
	add("sources", "sources", nil)
	sr := add("search", "search", map[string]any{"query": "apply_patch", "limit": 5})
	hit := obj(list(sr, "results")[0])
	add("show_session", "show_session", map[string]any{"ctx_session_id": hit["ctx_session_id"], "mode": "log", "limit": 3})
	add("show_event", "show_event", map[string]any{"ctx_event_id": hit["ctx_event_id"], "window": 1})
	for _, c := range []string{"full", "text", "none"} {
		add("query_events/"+c, "query_events", map[string]any{"providers": []any{"codex"}, "content": c, "limit": 20})
	}
	res := s.call(t, "show_session", map[string]any{"ctx_session_id": hit["ctx_session_id"], "cursor": "AAAA"})
	b, err := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err != nil || json.Unmarshal(b, &m) != nil || !res.IsError || m["error_code"] != "invalid_cursor" {
		t.Fatalf("a malformed cursor: %v %s", res.IsError, b)
	}
	out["error"] = shapeOf(m)
	golden(t, "history_outputs.golden.json", indentJSON(t, out))
}

// TestStatusWithoutContextBranch: a repository with an agent-history index but no context branch (git
// init, ctx history import, no ctx init) answers status with the history report and
// upgrade.context_store.state not_initialized, and no store fields (docs/mcp.md "status: upgrade").
func TestStatusWithoutContextBranch(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	repoIdentity(t)
	dir := filepath.Join(t.TempDir(), "plain")
	git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	st, err := store.Open(context.Background(), dir, store.Actor{Machine: "testbox"})
	if err != nil {
		t.Fatal(err)
	}
	hist, extra := filepath.Join(t.TempDir(), "history"), t.TempDir()
	importCorpus(t, hist, extra)
	s := serve(t, st, Options{HistoryDir: hist}, "")
	res := s.call(t, "status", nil)
	if res.IsError {
		t.Fatalf("status without a context branch: %s", resultText(res))
	}
	got := structured(t, "status", res)
	cs := obj(obj(got["upgrade"])["context_store"])
	if cs["state"] != "not_initialized" || obj(got["history"])["sessions"] == float64(0) || got["branch"] != nil || got["read_only"] != true {
		t.Fatalf("status = %v", got)
	}
}
