package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/mcp/searchpage"
	"github.com/ctx-dev/ctx/store"
)

// unifiedArgs turns ctx history search's options into the MCP search tool's arguments (docs/history.md
// "Search"): the same names, a session prefix resolved by the caller, times as RFC 3339.
func unifiedArgs(o historySearchOptions, limit int) map[string]any {
	q := o.Query
	a := map[string]any{"query": q.Text, "limit": limit}
	if q.EventType != "" {
		a["event_type"] = string(q.EventType)
	} else if q.Scope != "" {
		a["content_scope"] = q.Scope
	}
	if len(o.Names) > 0 {
		ps := make([]any, len(o.Names))
		for i, n := range o.Names {
			ps[i] = n
		}
		a["providers"] = ps
	}
	if !q.Since.IsZero() {
		a["since"] = q.Since.UTC().Format(time.RFC3339Nano)
	}
	if !q.Until.IsZero() {
		a["until"] = q.Until.UTC().Format(time.RFC3339Nano)
	}
	for k, v := range map[string]string{"file": q.File, "repo": q.Repo, "ctx_session_id": q.SessionID} {
		if v != "" {
			a[k] = v
		}
	}
	if q.PrimaryOnly {
		a["primary_only"] = true
	}
	return a
}

// runUnifiedSearch is ctx history search over the index and the context store (provider ctx) by the MCP
// search tool's code (mcp.Search): --json prints the tool's structuredContent; above 100 hits (the
// tool's page) it follows the cursor and prints one object with every page's results.
func runUnifiedSearch(ctx context.Context, e *env, st *store.Store, o historySearchOptions) error {
	var err error
	if o.Query.File, err = e.absFile(o.Query.File); err != nil {
		return err
	}
	if o.Query.Repo, err = e.absRepo(o.Query.Repo); err != nil {
		return err
	}
	if id := o.Query.SessionID; id != "" && !strings.HasPrefix(id, "ctx:") {
		ix, err := e.openHistoryRead(ctx, o.Index)
		if err != nil {
			return err
		}
		s, err := ix.Session(ctx, id)
		_ = ix.Close()
		if err != nil {
			return historyErr(err)
		}
		o.Query.SessionID = s.ID
	}
	left := o.Query.Limit
	var first map[string]any
	var all []any
	cursor, pages := o.Cursor, 0
	for {
		args := unifiedArgs(o, min(left, 100))
		if cursor != "" {
			args["cursor"] = cursor
		}
		pages++
		out, err := mcp.Search(ctx, st, mcp.Options{HistoryDir: o.Index}, args)
		if errors.Is(err, mcp.ErrInvalidArgument) {
			return usagef("%v", err)
		}
		if err != nil {
			return historyErr(err)
		}
		b, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		rs, _ := m["results"].([]any)
		all = append(all, rs...)
		left -= len(rs)
		if first == nil {
			first = m
		}
		pg, _ := m["pagination"].(map[string]any)
		first["pagination"] = pg
		next, _ := pg["next_cursor"].(string)
		if left <= 0 || next == "" || len(rs) == 0 {
			if pages > 1 {
				// Several pages: the pagination describes the whole answer. The last page's cursor is
				// bound to that page's limit, which is not the request's: no cursor is given.
				first["pagination"] = map[string]any{"limit": o.Query.Limit, "returned": len(all), "has_more": pg["has_more"]}
			}
			break
		}
		cursor = next
	}
	if all == nil {
		all = []any{}
	}
	first["results"] = all
	return searchpage.PrintCLI(e.stdout, e.stderr, first, o.JSON)
}
