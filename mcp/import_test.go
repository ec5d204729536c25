package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/store"
)

// TestDecisionsServedWhole imports every real ADR of the corpus and reads each back through
// context://decisions/{id}: a decision whose sections are not Context/Decision/Consequences (headings in
// another language, or none) is still served whole, in body; the resource's own fields stay.
func TestDecisionsServedWhole(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	dirs := []string{"../testdata/corpus/adr"}
	if _, err := os.Stat("/work/shared/corpus/adr"); err == nil {
		dirs = append(dirs, "/work/shared/corpus/adr")
	}
	plan, err := importer.Scan(ctx, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	_, decisions, err := st.Apply(ctx, store.Op{Name: "import", Summary: "import ADRs"}, importer.Batch(plan, store.Public))
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, st, Options{Agent: "claude-code"}, "")
	whole, sections := 0, 0
	for _, d := range decisions {
		got := s.readJSON(t, "context://decisions/"+strconv.Itoa(d.ID)).(map[string]any)
		for _, f := range []string{"id", "title", "status", "context", "decision", "consequences"} {
			if _, ok := got[f]; !ok {
				t.Errorf("decision %d: field %s missing", d.ID, f)
			}
		}
		complete := got["context"] != "" && got["decision"] != "" && got["consequences"] != ""
		switch body, _ := got["body"].(string); {
		case complete && body == "":
			sections++
		case body == d.Body && body != "":
			whole++
		default:
			t.Errorf("decision %d (%s) is not served whole: context %q decision %q consequences %q body %d bytes",
				d.ID, d.Source, got["context"], got["decision"], got["consequences"], len(body))
		}
	}
	t.Logf("%d decisions: %d with their three sections, %d served whole in body", len(decisions), sections, whole)
	// Chinese headings (phodal/adr: 上下文, 决策, 结果) are sections too.
	for _, d := range decisions {
		if filepath.Base(filepath.Dir(d.Source)) == "phodal-adr" && (d.Context == "" || d.Decision == "" || d.Consequences == "") {
			t.Errorf("%s: Chinese sections not read: %q / %q / %q", d.Source, d.Context, d.Decision, d.Consequences)
		}
	}
}

// TestKeysNFCOverMCP: a key in decomposed Unicode names the same entry in a context:// URI and in a tool
// argument; the stats skill resource stays the stats resource.
func TestKeysNFCOverMCP(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "caf\u00e9", Content: "espresso"}); err != nil {
		t.Fatal(err)
	}
	s := serve(t, st, Options{Agent: "claude-code"}, "")
	got := s.readJSON(t, "context://knowledge/cafe%CC%81").(map[string]any)
	if got["content"] != "espresso" || got["key"] != "caf\u00e9" {
		t.Errorf("NFD URI: %v", got)
	}
	res := structured(t, "context_add_knowledge", s.call(t, "context_add_knowledge", map[string]any{"key": "cafe\u0301", "content": "ristretto"}))
	if res["key"] != "caf\u00e9" {
		t.Errorf("add with an NFD key: %v", res)
	}
	list := s.readJSON(t, "context://knowledge").([]any)
	if len(list) != 1 || list[0].(map[string]any)["content"] != "ristretto" {
		t.Errorf("NFD and NFC made two entries: %v", list)
	}
	if _, ok := s.readJSON(t, "context://skills/stats").([]any); !ok {
		t.Error("context://skills/stats is not the stats list")
	}
}
