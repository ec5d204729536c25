package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/history/internal/textproc"
	"github.com/ctx-dev/ctx/internal/lazyre"
)

// A shared session is a redacted record of one session committed to the context branch by `ctx history
// share` (docs/blame.md "Sharing", docs/format.md "Shared sessions"): an .ndjson log whose first line is
// the session header and whose other lines are its events, each keyed by "id" and ordered by "timestamp",
// so that the branch's merge keeps the union of the events two machines shared. This file has the line
// shapes and the reader that indexes such a record on a teammate's machine; it never writes the branch.

// FormatShared is the source format of a session indexed from the context branch; its sessions' source
// path is "ctx:" followed by the record's path on the branch.
const FormatShared = "ctx_shared"

// SharedHeaderID is the "id" of a record's header line: the nil UUID, which sorts before every event id
// of the same timestamp.
const SharedHeaderID = "00000000-0000-0000-0000-000000000000"

// SharedFormatV1 is the "format" of a header line.
const SharedFormatV1 = "ctx.shared-session/v1"

// SharedHeader is the first line of a shared session record. Every text field is redacted by the writer.
type SharedHeader struct {
	ID        string   `json:"id"`                  // SharedHeaderID
	Kind      string   `json:"kind"`                // "session"
	Timestamp string   `json:"timestamp,omitempty"` // the session's start, RFC 3339 UTC; absent when unknown
	Format    string   `json:"format"`              // SharedFormatV1
	SessionID string   `json:"ctx_session_id"`      // SessionID(Provider, NativeID)
	Provider  Provider `json:"provider"`
	NativeID  string   `json:"native_session_id"`
	ParentID  string   `json:"parent_session_id,omitempty"`
	Scope     string   `json:"agent_scope,omitempty"`
	CWD       string   `json:"cwd,omitempty"` // home directory replaced by "~"
	RepoURL   string   `json:"repo_url,omitempty"`
	Branch    string   `json:"branch,omitempty"`
	Commit    string   `json:"commit,omitempty"`
	Model     string   `json:"model,omitempty"`
	CLI       string   `json:"cli_version,omitempty"`
	Title     string   `json:"title,omitempty"`
	// SummaryOnly is set when the sharer's configuration limits sharing to summaries (history.share =
	// summaries): the record holds the session's summary events only.
	SummaryOnly bool `json:"summary_only,omitempty"`
}

// SharedEvent is an event line of a shared session record.
type SharedEvent struct {
	ID        string    `json:"id"`                  // the event's ctx_event_id
	Kind      string    `json:"kind"`                // "event"
	Timestamp string    `json:"timestamp,omitempty"` // RFC 3339 UTC with milliseconds; absent when unknown
	Seq       int64     `json:"seq"`
	NativeKey string    `json:"native_key"`
	Type      EventType `json:"type"`
	Role      string    `json:"role,omitempty"`
	Text      string    `json:"text"`
	Tool      *Tool     `json:"tool,omitempty"`
	Files     []FileRef `json:"files,omitempty"`
	Facts     []Fact    `json:"facts,omitempty"`
}

// sharedTime is the timestamp format of shared lines.
const sharedTime = "2006-01-02T15:04:05.000Z07:00"

// NewSharedHeader is the header line of s (its fields as they are: the caller redacts them).
func NewSharedHeader(s Session) SharedHeader {
	h := SharedHeader{ID: SharedHeaderID, Kind: "session", Format: SharedFormatV1, SessionID: s.ID, Provider: s.Provider,
		NativeID: s.NativeID, ParentID: s.ParentID, Scope: s.Scope, CWD: s.CWD, RepoURL: s.RepoURL, Branch: s.Branch,
		Commit: s.Commit, Model: s.Model, CLI: s.CLIVersion, Title: s.Title}
	if !s.StartedAt.IsZero() {
		h.Timestamp = s.StartedAt.UTC().Format(sharedTime)
	}
	return h
}

// NewSharedEvent is the line of e (its fields as they are: the caller redacts them).
func NewSharedEvent(e Event) SharedEvent {
	x := SharedEvent{ID: e.ID, Kind: "event", Seq: e.Seq, NativeKey: e.NativeKey, Type: e.Type, Role: e.Role, Text: e.Text,
		Files: e.Files, Facts: e.Facts}
	if e.Tool != nil {
		t := *e.Tool
		x.Tool = &t
	}
	if !e.At.IsZero() {
		x.Timestamp = e.At.UTC().Format(sharedTime)
	}
	return x
}

// Limits of a shared record read from the branch (it comes from teammates: hostile input).
const (
	MaxSharedBytes  = 256 << 20 // one record (exported: readers bound what they load)
	maxSharedEvents = 200000
	maxSharedField  = 4096 // ids, names, paths, metadata
)

// sharedIDRe is the shape of a ctx id (docs/history.md "Identity").
var sharedIDRe = lazyre.New(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// ValidSessionID reports whether id has the shape of a ctx session id (a lower-case UUIDv8).
func ValidSessionID(id string) bool { return sharedIDRe.Get().MatchString(id) }

// ParseShared reads a shared session record: its header (kind "session", wherever it is in the log) and
// its events (kind "event"), ordered by seq then time then id, renumbered from 1. The header's
// ctx_session_id must be the id of its provider and native id, and equal wantID when wantID is not "";
// an event whose id is not the id of its native key, or that repeats an id, is dropped (counted in bad).
// Text is cleaned (valid UTF-8, no NUL, control characters other than tab and newline replaced) and cut
// to MaxTextBytes. The error wraps ErrBadShared.
func ParseShared(data []byte, wantID string) (Session, []Event, int, error) {
	var s Session
	if len(data) > MaxSharedBytes {
		return s, nil, 0, fmt.Errorf("%w: %d bytes, over %d", ErrBadShared, len(data), MaxSharedBytes)
	}
	var (
		head   *SharedHeader
		evs    []Event
		bad    int
		seen   = map[string]bool{}
		lineNo int
	)
	for raw := range bytes.SplitSeq(data, []byte("\n")) {
		lineNo++
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var kind struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(raw, &kind) != nil {
			bad++
			continue
		}
		switch kind.Kind {
		case "session":
			var h SharedHeader
			if json.Unmarshal(raw, &h) != nil || head != nil {
				return s, nil, bad, fmt.Errorf("%w: line %d: a second or malformed session header", ErrBadShared, lineNo)
			}
			head = &h
		case "event":
			if len(evs) >= maxSharedEvents {
				return s, nil, bad, fmt.Errorf("%w: more than %d events", ErrBadShared, maxSharedEvents)
			}
			var x SharedEvent
			if json.Unmarshal(raw, &x) != nil || x.NativeKey == "" || len(x.NativeKey) > maxSharedField || seen[x.ID] ||
				x.Type == "" || len(x.Type) > 64 {
				bad++
				continue
			}
			seen[x.ID] = true
			e := Event{ID: x.ID, Seq: x.Seq, NativeKey: neutral(x.NativeKey), Type: EventType(neutral(string(x.Type))),
				Role: field(x.Role), Text: clip(neutral(x.Text)), Tool: x.Tool}
			if x.Timestamp != "" {
				if t, err := time.Parse(time.RFC3339Nano, x.Timestamp); err == nil {
					e.At = t.UTC()
				}
			}
			if e.Tool != nil {
				t := *e.Tool
				t.Name, t.CallID, t.Protocol, t.Server = field(t.Name), field(t.CallID), field(t.Protocol), field(t.Server)
				t.Input, t.Output = clip(neutral(t.Input)), clip(neutral(t.Output))
				e.Tool = &t
			}
			for _, f := range x.Files {
				if f.Path == "" || len(f.Path) > maxSharedField {
					continue
				}
				e.Files = append(e.Files, FileRef{Path: neutral(f.Path), Op: FileOp(field(string(f.Op))), OldPath: field(f.OldPath)})
			}
			for _, f := range x.Facts {
				if f.Kind == "" || len(f.Value) > maxSharedField {
					continue
				}
				e.Facts = append(e.Facts, Fact{Kind: field(f.Kind), Value: neutral(f.Value)})
			}
			evs = append(evs, e)
		default:
			bad++
		}
	}
	if head == nil {
		return s, nil, bad, fmt.Errorf("%w: no session header", ErrBadShared)
	}
	h := head
	if _, ok := ParseProvider(string(h.Provider)); !ok {
		return s, nil, bad, fmt.Errorf("%w: unknown provider %q", ErrBadShared, field(string(h.Provider)))
	}
	if h.NativeID == "" || len(h.NativeID) > maxSharedField || h.SessionID != SessionID(h.Provider, h.NativeID) {
		return s, nil, bad, fmt.Errorf("%w: the header's ctx_session_id is not the id of its provider and native session id", ErrBadShared)
	}
	if wantID != "" && h.SessionID != wantID {
		return s, nil, bad, fmt.Errorf("%w: the record of session %s is named after %s", ErrBadShared, h.SessionID, field(wantID))
	}
	s = Session{ID: h.SessionID, Provider: h.Provider, NativeID: h.NativeID, Scope: "primary", CWD: field(h.CWD),
		RepoURL: field(h.RepoURL), Branch: field(h.Branch), Commit: field(h.Commit), Model: field(h.Model),
		CLIVersion: field(h.CLI), Title: field(h.Title), SourceFormat: FormatShared}
	if ValidSessionID(h.ParentID) {
		s.ParentID, s.Scope = h.ParentID, "subagent"
	}
	if h.Scope == "subagent" {
		s.Scope = "subagent"
	}
	if h.Timestamp != "" {
		if t, err := time.Parse(time.RFC3339Nano, h.Timestamp); err == nil {
			s.StartedAt = t.UTC()
		}
	}
	// Ids come from the native keys, never from the file.
	kept := evs[:0]
	for _, e := range evs {
		if e.ID != EventID(s.ID, e.NativeKey) {
			bad++
			continue
		}
		kept = append(kept, e)
	}
	evs = kept
	sort.SliceStable(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if a.Seq != b.Seq {
			return a.Seq < b.Seq
		}
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.ID < b.ID
	})
	for i := range evs {
		evs[i].Seq = int64(i + 1)
		evs[i].SessionID = s.ID
		if at := evs[i].At; !at.IsZero() {
			if s.StartedAt.IsZero() || at.Before(s.StartedAt) {
				s.StartedAt = at
			}
			if at.After(s.EndedAt) {
				s.EndedAt = at
			}
		}
	}
	s.EventCount = len(evs)
	return s, evs, bad, nil
}

// ErrBadShared is wrapped by the errors of a shared session record that cannot be indexed.
var ErrBadShared = errors.New("not a valid shared session record")

// neutral is s as valid UTF-8 without NUL, with every control character but tab and newline (C0, DEL,
// C1: a terminal escape sequence) replaced by U+FFFD.
func neutral(s string) string {
	s = textproc.Clean(s)
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f))
}

// Neutral is the rule of ParseShared for text: valid UTF-8, no NUL, control characters other than tab
// and newline replaced by U+FFFD. The writer of a shared record applies it too.
func Neutral(s string) string { return neutral(s) }

// field is a short metadata field: neutral, one line, at most maxSharedField bytes.
func field(s string) string {
	s = neutral(strings.ReplaceAll(s, "\n", " "))
	if len(s) > maxSharedField {
		cut := maxSharedField
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// SharedResult is what indexing one shared record did.
type SharedResult struct {
	Path      string `json:"path"` // the record's path on the context branch
	SessionID string `json:"ctx_session_id,omitempty"`
	Action    string `json:"action"` // "imported", "unchanged", "local" (the session's own transcript is indexed here), "failed"
	Events    int    `json:"events"`
	BadLines  int    `json:"bad_lines"`
	Err       string `json:"error,omitempty"`
}

// ImportShared indexes the shared session record at path (of the context branch; its content data, its
// blob id blob) as session wantID. An unchanged blob is a no-op; a session whose own transcript is
// indexed here is left as it is ("local": the unredacted original wins); otherwise the session's events
// are replaced by the record's in one transaction. A record that is not valid is "failed" with the reason
// and changes nothing; the error is for the index itself.
func (ix *Index) ImportShared(ctx context.Context, path, blob, wantID string, data []byte) (SharedResult, error) {
	res := SharedResult{Path: path, SessionID: wantID}
	unlock, err := ix.LockImport(ctx) // one import at a time (docs/history.md "Concurrent imports")
	if err != nil {
		return res, err
	}
	defer unlock()
	key := "ctx:" + path
	prev, err := ix.loadSource(ctx, key)
	if err != nil {
		return res, err
	}
	if prev != nil && prev.rev == parserRev && prev.fingerprint == blob {
		res.Action = "unchanged"
		return res, nil
	}
	var format string
	err = ix.db.QueryRowContext(ctx, `SELECT source_format FROM sessions WHERE id=?`, wantID).Scan(&format)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return res, fmt.Errorf("import shared %s: %w", path, err)
	case format != FormatShared:
		res.Action = "local"
		return res, nil
	}
	s, evs, bad, err := ParseShared(data, wantID)
	res.BadLines = bad
	if err != nil {
		res.Action, res.Err = "failed", err.Error()
		return res, nil
	}
	s.SourcePath = key
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("import shared %s: %w", path, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	// Like every other writer's first transaction: FTS5's default merge policy (setFTSConfig).
	if err := setFTSConfig(ctx, tx, false); err != nil {
		return res, fmt.Errorf("import shared %s: %w", path, err)
	}
	w, err := prepareWriter(ctx, tx)
	if err != nil {
		return res, fmt.Errorf("import shared %s: %w", path, err)
	}
	defer w.close()
	others, err := w.dropSourceEvents(ctx, s.ID, key)
	if err != nil {
		return res, err
	}
	st := parseState{NativeID: s.NativeID, Subagent: s.Scope == "subagent", Meta: sessionMeta{CWD: s.CWD, RepoURL: s.RepoURL,
		Branch: s.Branch, Commit: s.Commit, Model: s.Model, CLIVersion: s.CLIVersion, Title: s.Title, StartedAt: s.StartedAt,
		EndedAt: s.EndedAt}}
	src := Source{Provider: s.Provider, Format: FormatShared, Path: key}
	grp, err := w.groupOf(s.ID, sessionScope(src, &st))
	if err != nil {
		return res, fmt.Errorf("import shared %s: %w", path, err)
	}
	n, err := w.insertEvents(ctx, s.ID, key, s.CWD, grp, evs, nil)
	if err != nil {
		return res, fmt.Errorf("import shared %s: %w", path, err)
	}
	count := int64(n)
	if others {
		count = -1
	}
	if err := w.upsertSession(ctx, src, s.ID, &st, count, others); err != nil {
		return res, fmt.Errorf("import shared %s: %w", path, err)
	}
	if s.ParentID != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET parent_id=? WHERE id=?`, s.ParentID, s.ID); err != nil {
			return res, fmt.Errorf("import shared %s: %w", path, err)
		}
	}
	sum := sha256.Sum256(data)
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO sources(path, provider, format, parser_rev, size, mtime, fingerprint,
		content_hash, offset, check_hash, state, session_id, unknown, bad_lines, imported_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		key, string(s.Provider), FormatShared, parserRev, len(data), 0, blob, hex.EncodeToString(sum[:]), len(data), "", "{}",
		s.ID, "{}", bad, time.Now().UnixMilli()); err != nil {
		return res, fmt.Errorf("import shared %s: record source: %w", path, err)
	}
	if err := bumpGeneration(ctx, tx); err != nil {
		return res, fmt.Errorf("import shared: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("import shared %s: commit: %w", path, err)
	}
	res.Action, res.Events = "imported", n
	return res, ix.relink(ctx)
}
