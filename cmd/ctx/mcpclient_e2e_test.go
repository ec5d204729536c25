package main_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// stdioClient is a real MCP client of `ctx -C dir mcp serve` (the built binary over stdio) that records
// the notifications it receives.
type stdioClient struct {
	c     *client.Client
	mu    sync.Mutex
	notes []mcpgo.JSONRPCNotification
	note  chan struct{}
}

// serveStdio starts `ctx -C dir mcp serve` and initialises a client of it; the server stops with the test.
func serveStdio(t *testing.T, dir string) *stdioClient {
	t.Helper()
	c, err := client.NewStdioMCPClient(ctxBin, nil, "-C", dir, "mcp", "serve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s := &stdioClient{c: c, note: make(chan struct{}, 1)}
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		s.mu.Lock()
		s.notes = append(s.notes, n)
		s.mu.Unlock()
		select {
		case s.note <- struct{}{}:
		default:
		}
	})
	// NewStdioMCPClient starts the transport only; Start (idempotent) installs the notification handler.
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcpgo.Implementation{Name: "e2e", Version: "1"}
	if _, err := c.Initialize(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	return s
}

// read returns the text of resource uri.
func (s *stdioClient) read(t *testing.T, uri string) string {
	t.Helper()
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcpgo.TextResourceContents)
	if !ok {
		t.Fatalf("read %s: contents %T", uri, res.Contents[0])
	}
	return tc.Text
}

// count is the number of notifications of method (for params.uri uri when it is not "") received so far.
func (s *stdioClient) count(method, uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, x := range s.notes {
		if x.Method == method && (uri == "" || x.Params.AdditionalFields["uri"] == uri) {
			n++
		}
	}
	return n
}

// waitCount waits until count(method, uri) reaches want, at most within; it returns the count then.
func (s *stdioClient) waitCount(method, uri string, want int, within time.Duration) int {
	deadline := time.After(within)
	for {
		if n := s.count(method, uri); n >= want {
			return n
		}
		select {
		case <-s.note:
		case <-deadline:
			return s.count(method, uri)
		}
	}
}
