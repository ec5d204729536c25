package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/store"
)

// unifiedPage is the part of the MCP search tool's structuredContent the text output reads.
type unifiedPage struct {
	Relaxed bool `json:"relaxed"`
	Window  int  `json:"ranked_window"`
	Results []struct {
		Provider        string  `json:"provider"`
		CtxEventID      string  `json:"ctx_event_id"`
		CtxSessionID    string  `json:"ctx_session_id"`
		NativeSessionID string  `json:"native_session_id"`
		EventType       string  `json:"event_type"`
		At              string  `json:"at"`
		Score           float64 `json:"score"`
		Snippet         string  `json:"snippet"`
		MoreInGroup     int     `json:"more_in_group"`
		Kind            string  `json:"kind"`
		Key             string  `json:"key"`
		URI             string  `json:"uri"`
	} `json:"results"`
	Pagination struct {
		NextCursor *string `json:"next_cursor"`
	} `json:"pagination"`
	Hint string `json:"hint"`
}

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
	if o.JSON {
		return printJSON(e.stdout, first)
	}
	b, err := json.Marshal(first)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	var pg unifiedPage
	if err := json.Unmarshal(b, &pg); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	w := e.stdout
	if pg.Relaxed {
		fmt.Fprintln(w, "(no event has every word: hits match any word)")
	}
	if pg.Window > 0 {
		fmt.Fprintf(w, "(more than %d events match: ranked the %d most recently imported; add words or filters to narrow)\n", pg.Window, pg.Window)
	}
	for _, h := range pg.Results {
		when := ""
		if t, err := time.Parse(time.RFC3339Nano, h.At); err == nil {
			when = t.Format("2006-01-02 15:04")
		}
		if h.Provider == "ctx" {
			// an entry (kind, key, URI) or a commit (its ctx:<commit> id, the key it touched)
			fmt.Fprintf(w, "%s  %s  ctx %s %s", scoreText(h.Score), when, h.Kind, h.Key)
			if h.URI != "" {
				fmt.Fprintf(w, "  %s", h.URI)
			}
			if h.CtxEventID != "" {
				fmt.Fprintf(w, "  %s", h.CtxEventID)
			}
		} else {
			fmt.Fprintf(w, "%s  %s  %s %s  %s  %s", scoreText(h.Score), when, h.Provider, h.NativeSessionID, h.EventType, h.CtxEventID)
			if h.MoreInGroup > 0 {
				fmt.Fprintf(w, "  (+%d in this session tree)", h.MoreInGroup)
			}
		}
		fmt.Fprintf(w, "\n    %s\n", h.Snippet)
	}
	if len(pg.Results) == 0 {
		fmt.Fprintln(w, "no hits")
		if pg.Hint != "" {
			fmt.Fprintf(e.stderr, "ctx: %s\n", pg.Hint)
		}
	}
	return nil
}

// scoreText prints a hit's score with 3 significant digits (at least 2 decimals): a common word's BM25
// scores are small, and "0.00" for all of them hid their order.
func scoreText(f float64) string {
	if f >= 1 || f <= -1 || f == 0 {
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	return strconv.FormatFloat(f, 'g', 3, 64)
}
