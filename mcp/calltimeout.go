package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// toolCallTimeout bounds a call of a read-only tool (docs/mcp.md "Errors"): past it the call's context is
// cancelled (a running SQLite query is interrupted, the loops stop) and the call answers the tool error
// `timeout`. Write tools are not cut short: a write runs to its commit or its error.
var toolCallTimeout = 30 * time.Second

// codeTimeout is the error_code of a read-only tool call that did not finish within toolCallTimeout.
const codeTimeout = "timeout"

// timedOut returns the `timeout` tool error when the call failed (err) past its own deadline (call's; not
// its caller's cancellation, parent's: a client gone, a server stopping), else nil. The error of a SQLite
// query interrupted by the deadline need not wrap context.DeadlineExceeded: the call's context tells.
func timedOut(name string, parent, call context.Context, err error) *mcpgo.CallToolResult {
	if err == nil || parent.Err() != nil ||
		(!errors.Is(err, context.DeadlineExceeded) && !errors.Is(call.Err(), context.DeadlineExceeded)) {
		return nil
	}
	return codedResult(codeTimeout, fmt.Sprintf("%s did not finish within %s and was stopped: ask for less "+
		"(a narrower query, a filter, a smaller limit) or use the CLI (`ctx search`, `ctx history`)", name, toolCallTimeout))
}

// untimedKey holds, in a read-only tool call's context, its context before the call's own deadline.
type untimedKey struct{}

// untimed returns a context that ends when ctx's caller goes away (the context before the tool call's
// deadline: a client gone, a server stopping) but not at that deadline; ctx itself outside a tool call.
// stop releases it.
func untimed(ctx context.Context) (context.Context, func()) {
	parent, ok := ctx.Value(untimedKey{}).(context.Context)
	if !ok {
		return ctx, func() {}
	}
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopAfter := context.AfterFunc(parent, cancel)
	return c, func() { stopAfter(); cancel() }
}

// lock takes the copy's lock, or returns ctx's error when ctx ends first.
func (c *ctxIndex) lock(ctx context.Context) error {
	c.semOnce.Do(func() { c.sem = make(chan struct{}, 1) })
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *ctxIndex) unlock() { <-c.sem }
