package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctx-dev/ctx/store"
)

// ErrInvalidArgument is wrapped by [Search]'s error when an argument is invalid (the search tool's
// input schema, or its own checks: a blank query, since after until, ...; a cursor that is malformed or of
// another request): the CLI's usage error.
var ErrInvalidArgument = errors.New("invalid argument")

// Search runs the MCP search tool over st and the agent history index of opt.HistoryDir (default: the
// repository's) with args, the tool's arguments as JSON values (query, providers, content_scope,
// event_type, since, until, file, ctx_session_id, repo, primary_only, limit, cursor: docs/mcp.md
// "search"): validated by the tool's input schema, ranked and merged with the context store's entries
// and commits (provider ctx) by the same code. It returns the object the tool returns as
// structuredContent ({query, filters, relaxed, generation, results, pagination, content, hint}), so
// `ctx history search --json` prints what the tool returns. It reads only, but for the search copy of
// the store it keeps beside the index (store-search.db, brought up to the refs: docs/history.md "The
// store's search copy"); an invalid argument is an error wrapping [ErrInvalidArgument].
func Search(ctx context.Context, st *store.Store, opt Options, args map[string]any) (any, error) {
	opt.Agent = st.Actor.Agent
	opt.oneShot = true
	s := &srv{st: st, opt: opt, agents: map[string]*store.Store{},
		usage: newUsage(usagePath(st.CommonDir()), true)}
	// The index is opened on a goroutine while the schema is compiled and the arguments are checked (a
	// free core's work in a process that does only this search): searchTool's s.index waits for it
	// (hist.mu) and takes it, or opens it itself when it comes first or the opening failed (the same
	// error again). An invalid argument is still reported as before; opening an index of an older
	// schema empties it then as a valid search would (docs/history.md "The index").
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		_, _ = s.index(ctx)
	}()
	defer func() {
		<-opened
		s.closeIndex()
	}()
	sch, err := compileSchema("search.input.json")
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out, err := func() (any, error) {
		if err := validateArgs(sch, args); err != nil {
			return nil, err
		}
		a, err := decodeArgs[searchArgs](args)
		if err != nil {
			return nil, err
		}
		out, err := s.searchTool(ctx, a)
		if p, ok := out.(*paged); ok && err == nil {
			// The whole page: a terminal has no response limit (the tool's fitResult may cut a page
			// over maxResponseBytes short, and its cursor then continues where that page stopped).
			return p.Build(p.N), nil
		}
		return out, err
	}()
	var ae *argError
	if errors.As(err, &ae) {
		return nil, fmt.Errorf("%w: %s", ErrInvalidArgument, ae.msg)
	}
	// A cursor that is malformed or of another request is the caller's mistake, as the tool's invalid_cursor
	// and cursor_mismatch say (a stale one was right once: it is not).
	if ce := (*codedError)(nil); errors.As(err, &ce) && (ce.code == codeInvalidCursor || ce.code == codeCursorMismatch) {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalidArgument, ce.code, ce.msg)
	}
	return out, err
}
