package mcp

import (
	"context"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestResourcesReadBothLayouts: context://history, context://skills/stats and a skill's feedback serve the
// records of both layouts (docs/format.md "Layout for growth"): flat files a teammate's older ctx wrote
// next to history/YYYY/MM/ and month files, each record once; the session tools keep working on both.
func TestResourcesReadBothLayouts(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	if _, _, err := st.AddSkill(ctx, "lint", "Run the linters", "make lint", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(ctx, store.Op{Name: "test", Summary: "flat-layout files"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "history/old.json", []byte(`{"id":"old","agent":"a","user":"u","machine":"m","started":"2025-01-02T00:00:00Z","ended":null,"summary":"flat","knowledge_added":[],"decisions_added":[],"skills_used":[]}`+"\n"))
		ed.Put(store.Public, "history/2025/03/mid.json", []byte(`{"id":"mid","agent":"a","user":"u","machine":"m","started":"2025-03-02T00:00:00Z","ended":null,"summary":"sharded","knowledge_added":[],"decisions_added":[],"skills_used":[]}`+"\n"))
		ed.Put(store.Public, "skills/lint/.feedback.ndjson", []byte(`{"id":"f1","agent":"a","rating":2,"comment":"flat","timestamp":"2025-01-02T00:00:00Z"}`+"\n"))
		ed.Put(store.Public, "skills/lint/.feedback/2025-03.ndjson", []byte(`{"id":"f2","agent":"a","rating":4,"comment":"month","timestamp":"2025-03-02T00:00:00Z"}`+"\n"+
			`{"id":"f1","agent":"a","rating":2,"comment":"flat","timestamp":"2025-01-02T00:00:00Z"}`+"\n"))
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
	s := serve(t, st, Options{Agent: "claude-code", Session: "sess-1", Version: "test"}, "")
	hist := s.readJSON(t, "context://history").([]any)
	if len(hist) != 2 || hist[0].(map[string]any)["id"] != "old" || hist[1].(map[string]any)["id"] != "mid" {
		t.Fatalf("context://history = %v", hist)
	}
	fb := s.readJSON(t, "context://skills/lint/feedback").([]any)
	if len(fb) != 2 || fb[0].(map[string]any)["id"] != "f1" || fb[1].(map[string]any)["id"] != "f2" {
		t.Fatalf("feedback = %v", fb)
	}
	jsonEq(t, "skills/stats", s.readJSON(t, "context://skills/stats"),
		`[{"skill_name":"lint","usage_count":0,"avg_rating":3,"rating_count":2,"last_used":null,"needs_attention":false}]`)
	// The session tool updates the flat record (this store has layout 2: it moves to its month).
	s.call(t, "context_append_session", map[string]any{"session_id": "old", "agent": "claude-code", "summary": "updated over MCP"})
	s.call(t, "context_end_session", map[string]any{"session_id": "mid", "summary": "ended over MCP"})
	hist = s.readJSON(t, "context://history").([]any)
	if len(hist) != 2 || hist[0].(map[string]any)["summary"] != "updated over MCP" {
		t.Fatalf("after the tool: %v", hist)
	}
	files := map[string]bool{}
	v, err := st.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"history/old.json", "history/2025/01/old.json"} {
		if _, err := v.ReadIn(ctx, store.Public, p); err == nil {
			files[p] = true
		}
	}
	if files["history/old.json"] || !files["history/2025/01/old.json"] {
		t.Errorf("the record was not moved to its month: %v", files)
	}
}
