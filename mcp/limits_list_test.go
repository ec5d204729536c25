package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// manyEntries commits n knowledge entries of size bytes each (markdown with quotes and newlines, which
// JSON escapes twice in a resource response) in one commit.
func manyEntries(t *testing.T, st *store.Store, n, size int) {
	t.Helper()
	line := `a "quoted" line of notes, with <html> & a tab	here` + "\n"
	body := strings.Repeat(line, size/len(line)+1)[:size]
	var b store.Batch
	for i := range n {
		b.Entries = append(b.Entries, store.BatchEntry{Kind: store.KnowledgeKind,
			SetEntry: store.SetEntry{Key: fmt.Sprintf("note-%04d", i), Content: body}})
	}
	if _, _, err := st.Apply(context.Background(), store.Op{Name: "import", Summary: "many"}, b); err != nil {
		t.Fatal(err)
	}
}

// context://knowledge keeps within the response limit: at 1 MiB (make stress), 130 entries of 8 KiB
// (1,076,156 bytes before) and 2,000 (16.5 MB) are cut, each cut entry with a visible marker naming its own
// resource, and the list keeps the resource's shape. get_project_context stays within the limit and valid
// against its output schema. make test runs the same at responseLimitSmall (64 KiB), where the cases keep
// their proportions: 130 entries of a 128th of the limit (512 bytes), and 8 KiB entries as many as leave
// each the share of the limit they had at 2,000 (125: 524 bytes, room for the marker).
func TestListsWithinResponseLimit(t *testing.T) {
	withResponseLimit(t, responseLimitSmall)
	out, err := compileSchema("get_project_context.output.json")
	if err != nil {
		t.Fatal(err)
	}
	schemas := resourceSchemas(t)
	for _, c := range []struct{ n, size int }{{130, maxResponseBytes / 128}, {2000 * maxResponseBytes / (1 << 20), 8 << 10}} {
		n := c.n
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			truncMarker := regexp.MustCompile(fmt.Sprintf(`\n\n\[truncated: showing \d+ of %d bytes; read context://knowledge/note-\d{4}\]$`, c.size))
			_, st := newRepo(t, store.Actor{Agent: "cli"})
			manyEntries(t, st, n, c.size)
			s := serve(t, st, Options{}, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)

			req := mcpgo.ReadResourceRequest{}
			req.Params.URI = "context://knowledge"
			res, err := s.c.ReadResource(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			size := responseSize(t, res) + len(`{"jsonrpc":"2.0","id":99,"result":}`+"\n")
			t.Logf("%d entries of %d bytes: context://knowledge response %d bytes", n, c.size, size)
			if size > maxResponseBytes {
				t.Errorf("context://knowledge: %d bytes, over %d", size, maxResponseBytes)
			}
			text := res.Contents[0].(mcpgo.TextResourceContents).Text
			doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(text))
			if err := schemas["knowledge"].Validate(doc); err != nil {
				t.Errorf("not the resource's shape: %v", err)
			}
			var list []entryItem
			if err := json.Unmarshal([]byte(text), &list); err != nil {
				t.Fatal(err)
			}
			if len(list) != n {
				t.Errorf("%d of %d entries listed", len(list), n)
			}
			for _, e := range list {
				if !truncMarker.MatchString(e.Content) {
					t.Fatalf("%s: no truncation marker: ...%q", e.Key, e.Content[max(len(e.Content)-120, 0):])
				}
			}

			res2 := s.call(t, "get_project_context", map[string]any{"project": "engine-notes"})
			size = responseSize(t, res2) + len(`{"jsonrpc":"2.0","id":99,"result":}`+"\n")
			t.Logf("get_project_context response %d bytes", size)
			if size > maxResponseBytes {
				t.Errorf("get_project_context: %d bytes", size)
			}
			pc := structured(t, "get_project_context", res2)
			b, _ := json.Marshal(pc)
			d, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err := out.Validate(d); err != nil {
				t.Errorf("not the tool's output schema: %v", err)
			}
			mem := pc["memory"].([]any)
			for _, m := range mem {
				v := m.(map[string]any)["value"].(string)
				if !strings.Contains(v, "\n[truncated: showing ") {
					t.Fatalf("memory %v: value cut without a marker", m.(map[string]any)["key"])
				}
			}
			if len(res2.Content) < 2 || !strings.Contains(resultText(res2), "[truncated: memory values were cut") {
				t.Errorf("no note on the cut: %q", resultText(res2)[max(len(resultText(res2))-300, 0):])
			}
		})
	}
}

// A missing entry of a known template is a normal result holding the error object {"error": ...}, while a URI
// that names no resource is the JSON-RPC error -32002; each template's description says so.
func TestMissingEntryVersusUnknownResource(t *testing.T) {
	_, st := newRepo(t, store.Actor{})
	s := serve(t, st, Options{}, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)
	for uri, want := range map[string]string{
		"context://knowledge/nope":            `{"error":"Knowledge entry 'nope' not found"}`,
		"context://conventions/nope":          `{"error":"Convention 'nope' not found"}`,
		"context://decisions/99":              `{"error":"Decision '99' not found"}`,
		"context://skills/nope":               `{"error":"Skill 'nope' not found"}`,
		"context://skills/nope/feedback":      `{"error":"Skill 'nope' not found"}`,
		"context://skills/nope/proposals":     `{"error":"Skill 'nope' not found"}`,
		"context://knowledge/%2E%2E%2Fsecret": `{"error":"Knowledge entry '../secret' not found"}`,
	} {
		jsonEq(t, uri, s.readJSON(t, uri), want)
	}
	for _, uri := range []string{"context://bogus", "context://knowledge/a/b/c", "context://skills/x/y/z"} {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = uri
		_, err := s.c.ReadResource(context.Background(), req)
		if !errors.Is(err, mcpgo.ErrResourceNotFound) {
			t.Errorf("read %s: %v; want JSON-RPC error -32002", uri, err)
		}
	}
	tpls, err := s.c.ListResourceTemplates(context.Background(), mcpgo.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range tpls.ResourceTemplates {
		if !strings.Contains(tp.Description, `the result holds {"error": "`) || !strings.Contains(tp.Description, "-32002") {
			t.Errorf("%s: the description does not document the not-found answer: %q", tp.URITemplate.Raw(), tp.Description)
		}
	}
}
