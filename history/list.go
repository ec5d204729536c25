package history

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// EventQuery selects events for ListEvents. Every set field narrows the selection (AND).
type EventQuery struct {
	SessionID string      // one session (full ctx id)
	Providers []Provider  // sessions of these providers
	Types     []EventType // these event types
	Role      string      // this role
	File      string      // a touched path: exact, or a prefix when it ends in "/"
	Repo      string      // sessions whose cwd is this directory or inside it
	Since     time.Time   // events at or after (events without a time never match a time bound)
	Until     time.Time   // events before
	Desc      bool        // newest first (default oldest first)
	// After continues a listing: only events strictly after this position in the listing's order.
	After *EventPos
	Limit int // at most this many events; ≤ 0 means 100
	// MaxBytes, when > 0, bounds the stored size of a listed event (RecordBytes, of the projection
	// Projection names): an event over it is listed without being loaded (ListedEvent.Oversized), so that
	// a reader with a response limit refuses it before reading it (docs/mcp.md "Oversized events").
	MaxBytes int64
	// Projection is what MaxBytes counts: "full" (text, tool, files and facts; an output's text twice,
	// as it is shown as text and as the tool's output) or "text" (the text alone).
	Projection string
}

// EventPos is an event's position in a ListEvents order: its time (Unix milliseconds, 0 when the provider
// recorded none) and its row in the index. Positions are valid for one index generation.
type EventPos struct {
	At  int64 `json:"at"`
	Row int64 `json:"row"`
}

// ListedEvent is one event of a ListEvents answer, with its session's provider and its position.
type ListedEvent struct {
	Event    Event
	Provider Provider
	Pos      EventPos
	// Oversized is set when the event's stored size is over EventQuery.MaxBytes (Bytes): Event then holds
	// its identity (id, session, seq, native key, time, type, role) only.
	Oversized bool
	Bytes     int64
}

// ListEvents returns the events q selects, ordered by time then row (events without a time first;
// reversed with Desc), at most q.Limit of them, from after q.After.
func (ix *Index) ListEvents(ctx context.Context, q EventQuery) (_ []ListedEvent, err error) {
	defer ix.noteDamaged(&err)
	var where []string
	var args []any
	if q.SessionID != "" {
		where, args = append(where, "e.session_id = ?"), append(args, q.SessionID)
	}
	if len(q.Providers) > 0 {
		where = append(where, "s.provider IN ("+strings.TrimSuffix(strings.Repeat("?,", len(q.Providers)), ",")+")")
		for _, p := range q.Providers {
			args = append(args, string(p))
		}
	}
	if len(q.Types) > 0 {
		where = append(where, "e.type IN ("+strings.TrimSuffix(strings.Repeat("?,", len(q.Types)), ",")+")")
		for _, t := range q.Types {
			args = append(args, string(t))
		}
	}
	if q.Role != "" {
		where, args = append(where, "e.role = ?"), append(args, q.Role)
	}
	if !q.Since.IsZero() {
		where, args = append(where, "e.at <> 0 AND e.at >= ?"), append(args, atMillis(q.Since))
	}
	if !q.Until.IsZero() {
		where, args = append(where, "e.at <> 0 AND e.at < ?"), append(args, atMillis(q.Until))
	}
	where, args = repoFileWhere(where, args, q.Repo, q.File)
	order, cmp := "ASC", ">"
	if q.Desc {
		order, cmp = "DESC", "<"
	}
	if q.After != nil {
		where = append(where, "(e.at, e.rowid) "+cmp+" (?, ?)")
		args = append(args, q.After.At, q.After.Row)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	// size is the stored size of the projection MaxBytes counts, in bytes (0 without a bound): columns
	// over the bound are read as NULL, so that an oversized event is never loaded.
	size := "0"
	switch {
	case q.MaxBytes > 0 && q.Projection == "text":
		size = "length(CAST(e.text AS BLOB))"
	case q.MaxBytes > 0:
		size = "length(CAST(e.text AS BLOB)) * (1 + (e.type = 'tool_output')) + ifnull(length(CAST(e.tool AS BLOB)), 0) + " +
			"ifnull(length(CAST(e.files AS BLOB)), 0) + ifnull(length(CAST(e.facts AS BLOB)), 0)"
	}
	bound := q.MaxBytes
	if bound <= 0 {
		bound = math.MaxInt64
	}
	text := `SELECT id, session_id, seq, native_key, at, type, role, iif(sz > ?1, '', text), iif(sz > ?1, NULL, tool),
		iif(sz > ?1, NULL, files), iif(sz > ?1, NULL, facts), provider, rid, sz FROM (SELECT e.id, e.session_id, e.seq,
		e.native_key, e.at, e.type, e.role, e.text, e.tool, e.files, e.facts, s.provider, e.rowid AS rid, ` + size + ` AS sz
		FROM events e JOIN sessions s ON s.id = e.session_id`
	if len(where) > 0 {
		text += " WHERE " + strings.Join(where, " AND ")
	}
	text += " ORDER BY e.at " + order + ", e.rowid " + order + " LIMIT ?) ORDER BY at " + order + ", rid " + order
	args = append([]any{bound}, append(args, limit)...)
	rows, err := ix.db.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []ListedEvent
	for rows.Next() {
		var le ListedEvent
		var prov string
		e, err := ix.scanEvent(scanTail{rows, []any{&prov, &le.Pos.Row, &le.Bytes}})
		if err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		le.Oversized = q.MaxBytes > 0 && le.Bytes > q.MaxBytes
		le.Event, le.Provider = e, Provider(prov)
		le.Pos.At = atMillis(e.At) // the stored e.at
		out = append(out, le)
	}
	return out, rows.Err()
}

// scanTail scans a row holding the columns of eventCols followed by extra columns.
type scanTail struct {
	r     rowScanner
	extra []any
}

func (s scanTail) Scan(dest ...any) error { return s.r.Scan(append(dest, s.extra...)...) }
