package history

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Receipt is a commit receipt found in a transcript: a tool output of a call that ran `git commit`, whose
// successful output names the commit (docs/history.md "Events", fact kind `commit`).
type Receipt struct {
	Short   string  `json:"short_oid"` // the commit id as printed (abbreviated, lower case)
	Event   Event   `json:"event"`     // the tool output that prints it
	Session Session `json:"session"`
}

// ReceiptsFor returns the receipts whose printed id is a prefix of oid (a full, lower-case hex commit id).
// The caller resolves each printed id in the repository of the session's cwd: an abbreviated id that
// matches is only a candidate.
func (ix *Index) ReceiptsFor(ctx context.Context, oid string) (_ []Receipt, err error) {
	defer ix.noteDamaged(&err)
	oid = strings.ToLower(oid)
	if len(oid) < 7 {
		return nil, fmt.Errorf("receipts: commit id %q is shorter than 7 digits", oid)
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT c.oid, e.rowid FROM event_commits c JOIN events e ON e.rowid = c.event
		WHERE substr(c.oid, 1, 7) = ? ORDER BY e.at, e.rowid`, oid[:7])
	if err != nil {
		return nil, fmt.Errorf("receipts of %s: %w", oid, err)
	}
	type hit struct {
		short string
		rowid int64
	}
	var hits []hit
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.short, &h.rowid); err != nil {
			rows.Close()
			return nil, fmt.Errorf("receipts of %s: %w", oid, err)
		}
		if strings.HasPrefix(oid, h.short) {
			hits = append(hits, h)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("receipts of %s: %w", oid, err)
	}
	out := make([]Receipt, 0, len(hits))
	for _, h := range hits {
		e, s, err := ix.eventAndSession(ctx, h.rowid)
		if err != nil {
			return nil, err
		}
		out = append(out, Receipt{Short: h.short, Event: e, Session: s})
	}
	return out, nil
}

// Edit is an event that created or changed a file, with its session.
type Edit struct {
	Path    string  `json:"path"` // as the provider recorded it
	Event   Event   `json:"event"`
	Session Session `json:"session"`
}

// EditsOf returns the tool calls that created, modified or renamed (to) any of paths, as the providers
// recorded the paths (absolute, or relative to the session's working directory), oldest first. At most
// limit events (limit ≤ 0: 10,000).
func (ix *Index) EditsOf(ctx context.Context, paths []string, limit int) (_ []Edit, err error) {
	defer ix.noteDamaged(&err)
	if len(paths) == 0 {
		return nil, nil
	}
	if limit <= 0 {
		limit = 10000
	}
	ph := strings.TrimSuffix(strings.Repeat("?,", len(paths)), ",")
	args := make([]any, 0, len(paths)+1)
	for _, p := range paths {
		args = append(args, p)
	}
	args = append(args, limit)
	rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT f.event, f.path FROM event_files f JOIN events e ON e.rowid = f.event
		WHERE f.path IN (`+ph+`) AND f.op IN ('create','modify','rename') AND e.type = 'tool_call'
		ORDER BY e.at, f.event LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("edits: %w", err)
	}
	type hit struct {
		rowid int64
		path  string
	}
	var hits []hit
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.rowid, &h.path); err != nil {
			rows.Close()
			return nil, fmt.Errorf("edits: %w", err)
		}
		hits = append(hits, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("edits: %w", err)
	}
	out := make([]Edit, 0, len(hits))
	for _, h := range hits {
		e, s, err := ix.eventAndSession(ctx, h.rowid)
		if err != nil {
			return nil, err
		}
		out = append(out, Edit{Path: h.path, Event: e, Session: s})
	}
	return out, nil
}

// SessionCWDs returns the distinct working directories recorded by sessions (for mapping a repository
// path to the relative paths providers record).
func (ix *Index) SessionCWDs(ctx context.Context) (_ []string, err error) {
	defer ix.noteDamaged(&err)
	rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT cwd FROM sessions WHERE cwd <> ''`)
	if err != nil {
		return nil, fmt.Errorf("session cwds: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("session cwds: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (ix *Index) eventAndSession(ctx context.Context, rowid int64) (Event, Session, error) {
	e, err := ix.scanEvent(ix.db.QueryRowContext(ctx, eventCols+` WHERE rowid = ?`, rowid))
	if err != nil {
		return e, Session{}, fmt.Errorf("load event: %w", err)
	}
	s, err := ix.Session(ctx, e.SessionID)
	if err != nil {
		return e, s, err
	}
	return e, s, nil
}

// ReceiptPrefixes returns the first seven digits of every commit id printed by a receipt: a caller that
// looks up many commits asks ReceiptsFor only for those whose prefix is in the set (one query, not one per
// commit).
func (ix *Index) ReceiptPrefixes(ctx context.Context) (_ map[string]bool, err error) {
	defer ix.noteDamaged(&err)
	rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT substr(oid, 1, 7) FROM event_commits`)
	if err != nil {
		return nil, fmt.Errorf("receipt prefixes: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("receipt prefixes: %w", err)
		}
		out[p] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("receipt prefixes: %w", err)
	}
	return out, nil
}

// Exchange is a tool call with the outputs linked to it by its call id, and its session.
type Exchange struct {
	Call    Event   `json:"call"`
	Outputs []Event `json:"outputs"`
	Session Session `json:"session"`
}

// maxExchanges bounds CallsContaining.
const maxExchanges = 1000

// CallsContaining returns the tool calls whose recorded tool (name and input, as stored) contains s, with
// their linked outputs, oldest first (at most 1,000). The caller checks what the call ran: s only narrows
// the scan (e.g. "gh pr " for the pull-request evidence of docs/blame.md).
func (ix *Index) CallsContaining(ctx context.Context, s string) (_ []Exchange, err error) {
	defer ix.noteDamaged(&err)
	if s == "" {
		return nil, nil
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT rowid FROM events WHERE type = 'tool_call' AND instr(tool, ?) > 0
		ORDER BY at, rowid LIMIT ?`, s, maxExchanges)
	if err != nil {
		return nil, fmt.Errorf("calls: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("calls: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("calls: %w", err)
	}
	var out []Exchange
	for _, id := range ids {
		call, sess, err := ix.eventAndSession(ctx, id)
		if err != nil {
			return nil, err
		}
		x := Exchange{Call: call, Session: sess}
		if call.Tool != nil && call.Tool.CallID != "" {
			key, _ := json.Marshal(call.Tool.CallID)
			orows, err := ix.db.QueryContext(ctx, eventCols+` WHERE session_id = ? AND type = 'tool_output' AND instr(tool, ?) > 0 ORDER BY seq`,
				call.SessionID, `"call_id":`+string(key))
			if err != nil {
				return nil, fmt.Errorf("calls: %w", err)
			}
			for orows.Next() {
				e, err := ix.scanEvent(orows)
				if err != nil {
					orows.Close()
					return nil, err
				}
				if e.Tool != nil && e.Tool.CallID == call.Tool.CallID {
					x.Outputs = append(x.Outputs, e)
				}
			}
			orows.Close()
			if err := orows.Err(); err != nil {
				return nil, fmt.Errorf("calls: %w", err)
			}
		}
		out = append(out, x)
	}
	return out, nil
}
