package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// golden compares got with mcp/testdata/<name>; -update rewrites the file.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./mcp -run %s -update to write it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed: review the difference and run go test ./mcp -run %s -update\n%s", path, t.Name(),
			firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n- " + w + "\n+ " + g
		}
	}
	return ""
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// rawRequest sends a request without parameters and returns its raw result: mcp-go's client decodes
// schemas into structs that drop keywords, so snapshots use the JSON as served.
//
// Each request has its own id: mcp-go's stdio client forgets a response channel by id after the
// response arrived, which can drop the channel of a next request that reuses the id.
func rawRequest(t *testing.T, s *session, method string) json.RawMessage {
	t.Helper()
	resp, err := s.c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(rawRequestID.Add(1)), Method: method})
	if err != nil || resp.Error != nil {
		t.Fatalf("%s: %v %v", method, err, resp)
	}
	return resp.Result
}

// rawRequestID numbers the raw requests, above the ids the client picks itself.
var rawRequestID atomic.Int64

func init() { rawRequestID.Store(9000) }

// itemKey orders listed items: by name, else URI template.
func itemKey(m map[string]any) string {
	for _, k := range []string{"name", "uri", "uriTemplate"} {
		if v, ok := m[k].(string); ok {
			return v + "\x00" + k
		}
	}
	return ""
}

// TestCatalogSnapshots snapshots what a client sees of the server: tools/list (each tool's name,
// description, annotations, input and output schema), resources/list, resources/templates/list and
// prompts/list, through a real client, against the golden files under mcp/testdata/.
func TestCatalogSnapshots(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	s := serve(t, st, Options{Agent: "claude-code", Version: "test"}, "")
	lists := map[string]string{"tools/list": "tools", "resources/list": "resources",
		"resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}
	counts := map[string]int{}
	for method, key := range lists {
		var res map[string]json.RawMessage
		if err := json.Unmarshal(rawRequest(t, s, method), &res); err != nil {
			t.Fatal(err)
		}
		var items []map[string]any
		if err := json.Unmarshal(res[key], &items); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		sort.Slice(items, func(i, j int) bool { return itemKey(items[i]) < itemKey(items[j]) })
		counts[key] = len(items)
		golden(t, strings.ReplaceAll(method, "/", "_")+".golden.json", indentJSON(t, items))
	}
	ctx := context.Background()
	lt, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}

	// The catalog the README is generated from is what the client saw.
	cat := NewServer(st, Options{Version: "test"}).Catalog()
	if len(cat.Tools) != counts["tools"] || len(cat.Resources) != counts["resources"] ||
		len(cat.Templates) != counts["resourceTemplates"] || len(cat.Prompts) != counts["prompts"] {
		t.Errorf("catalog has %d tools, %d resources, %d templates, %d prompts; the client saw %v",
			len(cat.Tools), len(cat.Resources), len(cat.Templates), len(cat.Prompts), counts)
	}
	var catNames, listNames []string
	for _, c := range cat.Tools {
		catNames = append(catNames, c.Name)
	}
	for _, tl := range lt.Tools {
		listNames = append(listNames, tl.Name)
	}
	sort.Strings(catNames)
	if strings.Join(catNames, " ") != strings.Join(listNames, " ") {
		t.Errorf("catalog tools %v, tools/list %v", catNames, listNames)
	}
}

// TestCatalogREADME fails when README.md's list of MCP resources, tools and prompts (between the
// mcp-catalog markers) is not what the server offers; go generate ./mcp (or this test with -update)
// rewrites it.
func TestCatalogREADME(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	want := NewServer(st, Options{Version: "test"}).Catalog().Markdown()
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, CatalogBegin), strings.Index(readme, CatalogEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q ... %q block", CatalogBegin, CatalogEnd)
	}
	block := readme[i+len(CatalogBegin) : j]
	if block == "\n"+want {
		return
	}
	if !*update {
		t.Fatalf("README.md's MCP list is stale: run go generate ./mcp\n%s", firstDiff(block, "\n"+want))
	}
	out := readme[:i+len(CatalogBegin)] + "\n" + want + readme[j:]
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}
