package history

import (
	"context"
	"fmt"
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
	text := `SELECT e.id, e.session_id, e.seq, e.native_key, e.at, e.type, e.role, e.text, e.tool, e.files, e.facts,
		s.provider, e.rowid FROM events e JOIN sessions s ON s.id = e.session_id`
	if len(where) > 0 {
		text += " WHERE " + strings.Join(where, " AND ")
	}
	text += " ORDER BY e.at " + order + ", e.rowid " + order + " LIMIT ?"
	args = append(args, limit)
	rows, err := ix.db.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []ListedEvent
	for rows.Next() {
		var le ListedEvent
		var prov string
		e, err := ix.scanEvent(scanTail{rows, []any{&prov, &le.Pos.Row}})
		if err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
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
