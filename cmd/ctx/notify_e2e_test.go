package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// TestMCPUpdatedEachWrite: a client of `ctx mcp serve` (over stdio, mcp-go's client) subscribed to an entry
// that does not exist yet gets one notifications/resources/updated per write of it, each before the next
// write, whether the write is the server's own tool (context_add_knowledge) or another ctx process (`ctx
// knowledge set`, creating the entry and changing it), and none for a write of another entry; a read
// after each one serves the value written (docs/mcp.md "Notifications", "Resource errors"). The bound is
// generous (the refs are polled every second): it is no timing assertion.
//
// A tester saw updates one write late or never; the cause was the tester's client, which waited with
// select(2) on the pipe but read it through Python's buffered readline: list_changed and updated arrive
// together, and the second line stayed in the reader's buffer until the next write's bytes woke select.
func TestMCPUpdatedEachWrite(t *testing.T) {
	dir := testenv.NewRepo(t)
	mustCtx(t, dir, nil, 0, "init", "--no-hooks")
	s := serveStdio(t, dir)
	ctx := context.Background()
	const uri = "context://knowledge/t1"
	sub := mcpgo.SubscribeRequest{}
	sub.Params.URI = uri
	//nolint:staticcheck // SA1019: resources/subscribe is what protocol 2025-06-18 clients send
	if err := s.c.Subscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	const within = 20 * time.Second
	updated := 0
	expect := func(what, value string) {
		t.Helper()
		updated++
		if n := s.waitCount(mcpgo.MethodNotificationResourceUpdated, uri, updated, within); n != updated {
			s.mu.Lock()
			t.Logf("notifications received: %+v", s.notes)
			s.mu.Unlock()
			t.Fatalf("%s: %d resources/updated of %s within %v, want %d", what, n, uri, within, updated)
		}
		var e struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal([]byte(s.read(t, uri)), &e); err != nil || e.Content != value {
			t.Fatalf("%s: read %s: %q %v, want %q", what, uri, e.Content, err, value)
		}
	}
	for i := range 2 {
		v := fmt.Sprintf("tool %d", i)
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "context_add_knowledge"
		req.Params.Arguments = map[string]any{"key": "t1", "content": v}
		res, err := s.c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("context_add_knowledge: %v %+v", err, res)
		}
		expect("after the tool's write "+v, v)
	}
	for i := range 2 {
		v := fmt.Sprintf("cli %d", i)
		mustCtx(t, dir, nil, 0, "knowledge", "set", "t1", v)
		expect("after ctx knowledge set "+v, v)
	}
	// Another entry: a list_changed, and no resources/updated of t1.
	lists := s.count(mcpgo.MethodNotificationResourcesListChanged, "")
	mustCtx(t, dir, nil, 0, "knowledge", "set", "t2", "other")
	if n := s.waitCount(mcpgo.MethodNotificationResourcesListChanged, "", lists+1, within); n <= lists {
		t.Fatalf("no list_changed after ctx knowledge set t2 within %v", within)
	}
	mustCtx(t, dir, nil, 0, "knowledge", "set", "t1", "last")
	expect("after ctx knowledge set last", "last")
}
