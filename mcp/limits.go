package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The server's resource limits (docs/limits.md). Every response fits maxResponseBytes; a request may
// load at most maxFileRead bytes of any one file of the store, and a single entry larger than the
// response limit is refused before it is loaded.
const (
	// maxFileRead is the most bytes of one file of the store a request loads whole (a decision, a skill,
	// a JSON record). A larger file is refused with a *store.TooLargeError naming it; the lists of
	// knowledge and conventions read only the beginning of each entry (listEntries).
	maxFileRead = 4 << 20

	// maxRequestBytes is the longest request line ServeStdio reads; a longer one is answered with an
	// invalid-request error and skipped without being kept in memory.
	maxRequestBytes = 4 << 20

	// maxRunning is how many requests ServeStdio handles at once; the others wait for a slot.
	maxRunning = 8
	// maxInFlight is how many requests may be admitted (running or waiting); one more is refused with a
	// server-busy error (codeServerBusy) until a response went out.
	maxInFlight = 64
	// maxInFlightBytes bounds the request lines admitted and not yet answered.
	maxInFlightBytes = 32 << 20
)

// JSON-RPC error codes of ServeStdio's refusals (the implementation-defined server-error range).
const (
	codeServerBusy = -32000 // too many requests or request bytes in flight: retry after a response
)

// errOutputLimit is wrapped by a resource or prompt refused because its response would exceed
// maxResponseBytes; it is a JSON-RPC error whose message starts with "output_limit_exceeded".
var errOutputLimit = errors.New(codeOutputLimit)

// view is the checked-out tree (store.CheckoutView) bounded for one request: a file over maxFileRead
// is refused without being loaded.
func (s *srv) view(ctx context.Context) (*store.View, error) {
	v, err := s.st.CheckoutView(ctx)
	if err != nil {
		return nil, err
	}
	return v.WithMaxRead(maxFileRead), nil
}

// refView is the context refs' tips (store.RefView), bounded like view.
func (s *srv) refView(ctx context.Context) (*store.View, error) {
	v, err := s.st.RefView(ctx)
	if err != nil {
		return nil, err
	}
	return v.WithMaxRead(maxFileRead), nil
}

// resourceResponseSize is the size in bytes of the JSON-RPC response carrying contents.
func resourceResponseSize(contents []mcpgo.ResourceContents) (int, error) {
	b, err := json.Marshal(mcpgo.ReadResourceResult{Contents: contents})
	if err != nil {
		return 0, err
	}
	return len(b) + responseEnvelope, nil
}

// checkEntrySize refuses, before loading it, a single entry whose file is larger than one response may
// carry: output_limit_exceeded with its size and where to read it whole.
func checkEntrySize(ctx context.Context, v *store.View, uri, p, cli string) error {
	for _, sc := range store.Scopes {
		_, size, err := v.ReadPrefix(ctx, sc, p, 0)
		if err != nil {
			continue // absent in this scope; the read reports a missing entry
		}
		if size > int64(maxResponseBytes) {
			return fmt.Errorf("%w: %s is %d bytes, over the %d-byte MCP response limit: read it with `%s`",
				errOutputLimit, uri, size, maxResponseBytes, cli)
		}
		return nil
	}
	return nil
}
