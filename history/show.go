package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNotFound is wrapped when a session or event id (or prefix) matches nothing.
var ErrNotFound = errors.New("not found")

// ErrAmbiguous is wrapped when an id prefix matches more than one session or event.
var ErrAmbiguous = errors.New("ambiguous id")

// ErrInvalidID is wrapped when an id is not a ctx id nor a prefix of one (ValidIDPrefix): it names nothing
// an index could hold ("--------", "x"). Session ids fall back to the provider's own ids, so only events
// report it (docs/history.md "Identity").
var ErrInvalidID = errors.New("malformed id")

// ValidIDPrefix reports whether id (lower case) is a ctx id (a UUID: 8-4-4-4-12 hex digits) or a prefix
// of one with at least 8 hex digits, the forms resolveID looks up.
func ValidIDPrefix(id string) bool {
	if len(id) > 36 {
		return false
	}
	hex := 0
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
			hex++
		}
	}
	return hex >= 8
}

// resolveID maps a full id or a prefix of at least 8 hex digits to one id of table. An id of another
// form wraps ErrInvalidID (and ErrNotFound, for the callers that only know that one).
func (ix *Index) resolveID(ctx context.Context, table, id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if !ValidIDPrefix(id) {
		return "", invalidIDError{id}
	}
	if len(id) == 36 {
		return id, nil
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT id FROM `+table+` WHERE id >= ? AND id < ? ORDER BY id LIMIT 2`, id, id+"\xff")
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", id, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		ids = append(ids, s)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%w: %s", ErrNotFound, id)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%w: the prefix %s names more than one: give more of it, or the full id", ErrAmbiguous, id)
}

// invalidIDError is the error of an id of no ctx id's form: it wraps ErrInvalidID and ErrNotFound (for the
// callers that only know that one) and says what is wrong with it, not that it was not found.
type invalidIDError struct{ id string }

func (e invalidIDError) Error() string {
	return fmt.Sprintf("%s %q: not a ctx id (give the full id, 8-4-4-4-12 hex digits, or a prefix of it with at least 8 hex digits)", ErrInvalidID, e.id)
}

func (e invalidIDError) Is(target error) bool { return target == ErrInvalidID || target == ErrNotFound }

// Session returns the session named by id: its full ctx id; else a provider's own session id or a unique
// prefix (at least 8 hex digits) of a ctx id, which must not name two sessions (a session whose native id
// is the beginning of another's ctx id: ambiguous, give the full id); else a unique prefix of a provider's
// id (at least 8 characters). A full ctx id always names its own session, whatever native ids other
// sessions claim (docs/history.md "Identity"). An id not found that holds the escapes ctx's output writes
// (\n, \uXXXX, \xHH, ...) is looked up read back too (printedSession). Errors wrap ErrNotFound or
// ErrAmbiguous.
func (ix *Index) Session(ctx context.Context, id string) (_ Session, err error) {
	defer ix.noteDamaged(&err)
	s, err := ix.session(ctx, id)
	if err != nil {
		return ix.printedSession(ctx, id, err)
	}
	return s, nil
}

// session is Session for id as given.
func (ix *Index) session(ctx context.Context, id string) (_ Session, err error) {
	// A native id taken from a file name that is not valid UTF-8 is stored as nameID writes it (what
	// search prints); the name's own bytes find it too.
	given := nameID(strings.TrimSpace(id))
	full := strings.ToLower(given)
	isFull := len(full) == 36 && ValidIDPrefix(full)
	if isFull {
		if s, err := ix.sessionByID(ctx, full); !errors.Is(err, ErrNotFound) {
			return s, err
		}
	}
	var native []string
	if given != "" {
		var err error
		if native, err = ix.sessionIDs(ctx, `SELECT id FROM sessions WHERE native_id = ? ORDER BY id LIMIT 2`, given); err != nil {
			return Session{}, err
		}
		if len(native) > 1 {
			return Session{}, ix.nativeAmbiguous(ctx, given)
		}
	}
	id, err = ix.resolveID(ctx, "sessions", given)
	if err == nil && isFull {
		err = fmt.Errorf("session %w: %s", ErrNotFound, full) // looked up above
	}
	switch {
	case err == nil && len(native) == 1 && native[0] != id:
		return Session{}, fmt.Errorf("%w: %s is the beginning of session %s's ctx id and the native id of session %s: give the full ctx id",
			ErrAmbiguous, given, id, native[0])
	case len(native) == 1:
		return ix.sessionByID(ctx, native[0])
	}
	var s Session
	if err == nil {
		s, err = ix.sessionByID(ctx, id)
	}
	if errors.Is(err, ErrNotFound) {
		// A prefix of the provider's own session id (what search prints beside the provider).
		nid, nerr := ix.nativeSession(ctx, given)
		switch {
		case nerr == nil:
			return ix.sessionByID(ctx, nid)
		case !errors.Is(nerr, ErrNotFound):
			err = nerr
		case errors.Is(err, ErrInvalidID):
			// Not a ctx id, nor a provider's id this index holds: a session id may be any provider's.
			err = fmt.Errorf("session %w: %s", ErrNotFound, given)
		}
	}
	return s, err
}

// printedSession is Session for an id as ctx prints it: when id is not found as given and holds a
// backslash, the escapes ctx's output writes are read back (\n, \r and \t of a field, searchpage.OneLine;
// \uXXXX of a control character and \xHH of an invalid byte, the sanitizer, docs/security.md "Input
// hygiene"; \\) and the session is looked up by that too. So a native id holding a newline or an escape
// sequence is found as search prints it (docs/history.md "ctx history show session").
func (ix *Index) printedSession(ctx context.Context, id string, err error) (Session, error) {
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrAmbiguous) || !strings.Contains(id, `\`) {
		return Session{}, err
	}
	raw := unprint(strings.TrimSpace(id))
	if raw == strings.TrimSpace(id) {
		return Session{}, err
	}
	s, rerr := ix.session(ctx, raw)
	if rerr != nil {
		if errors.Is(rerr, ErrNotFound) && !errors.Is(rerr, ErrAmbiguous) {
			return Session{}, err // the id as given: what the reader typed
		}
		return Session{}, rerr
	}
	return s, nil
}

// unprint reads back the escapes ctx's text output writes: \n, \r, \t, \\, \uXXXX (four hex digits, a
// character) and \xHH (two hex digits, a byte). Any other backslash stays as it is (searchpage.OneLine
// does not double a backslash of the value).
func unprint(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; {
		case strings.IndexByte(`nrt\`, c) >= 0:
			b.WriteByte("\n\r\t\\"[strings.IndexByte(`nrt\`, c)])
			i++
		case c == 'u' && i+6 <= len(s) && hexDigits(s[i+2:i+6]):
			v, _ := strconv.ParseUint(s[i+2:i+6], 16, 16)
			b.WriteRune(rune(v))
			i += 5
		case c == 'x' && i+4 <= len(s) && hexDigits(s[i+2:i+4]):
			v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
			b.WriteByte(byte(v))
			i += 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// hexDigits reports whether s is hex digits only.
func hexDigits(s string) bool {
	return strings.Trim(s, "0123456789abcdefABCDEF") == ""
}

// sessionByID reads the session with the full ctx id id; an error wraps ErrNotFound when there is none.
func (ix *Index) sessionByID(ctx context.Context, id string) (Session, error) {
	s, err := scanSession(ix.db.QueryRowContext(ctx, sessionCols+` WHERE id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("session %w: %s", ErrNotFound, id)
	}
	if err != nil {
		return s, fmt.Errorf("read session %s: %w", id, err)
	}
	return s, nil
}

// sessionCols selects the columns scanSession reads.
const sessionCols = `SELECT id, provider, native_id, parent_id, root_id, scope, cwd, repo_url, branch, commit_id,
		model, cli_version, title, started_at, ended_at, source_format, source_path, event_count FROM sessions`

// scanSession reads a row of sessionCols.
func scanSession(r rowScanner) (Session, error) {
	var s Session
	var prov string
	var started, ended int64
	if err := r.Scan(&s.ID, &prov, &s.NativeID, &s.ParentID, &s.RootID, &s.Scope, &s.CWD, &s.RepoURL, &s.Branch, &s.Commit,
		&s.Model, &s.CLIVersion, &s.Title, &started, &ended, &s.SourceFormat, &s.SourcePath, &s.EventCount); err != nil {
		return s, err
	}
	s.Provider = Provider(prov)
	// An index written before the bound (ClipSessionField) may hold longer fields.
	for _, f := range []*string{&s.CWD, &s.RepoURL, &s.Branch, &s.Commit, &s.Model, &s.CLIVersion, &s.Title} {
		*f = ClipSessionField(*f)
	}
	s.StartedAt, s.EndedAt = atTime(started), atTime(ended)
	return s, nil
}

// nativeSession returns the ctx id of the one session whose provider-native id is native. Errors wrap
// ErrNotFound, or ErrAmbiguous when sessions of several providers share it.
func (ix *Index) nativeSession(ctx context.Context, native string) (string, error) {
	native = strings.TrimSpace(native)
	if native == "" {
		return "", fmt.Errorf("session %w", ErrNotFound)
	}
	ids, err := ix.sessionIDs(ctx, `SELECT id FROM sessions WHERE native_id = ? ORDER BY id LIMIT 2`, native)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 && len(native) >= 8 {
		// A unique prefix of at least 8 characters, as for ctx ids: what a reader copies from the native
		// id search prints.
		if ids, err = ix.sessionIDs(ctx, `SELECT id FROM sessions WHERE native_id >= ? AND native_id < ? ORDER BY id LIMIT 2`, native, native+"\xff"); err != nil {
			return "", err
		}
		if len(ids) > 1 {
			return "", fmt.Errorf("%w: %s is the beginning of several sessions' native ids: give more of it", ErrAmbiguous, native)
		}
	}
	if len(ids) == 0 && !strings.Contains(native, "/") {
		// A subagent's own name (Claude's agent-<id>), without the parent its native id begins with.
		return ix.subagentSession(ctx, native)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("session %w: %s", ErrNotFound, native)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%w: native session id %s names sessions of several providers: give the ctx id", ErrAmbiguous, native)
}

// maxSubagentNames is how many sessions subagentSession's ambiguity error names.
const maxSubagentNames = 5

// subagentSession is the ctx id of the one session whose native id is "<parent's native id>/<name>": a
// subagent's, whose transcript is named after the agent only (claudeNativeID; docs/history.md
// "Identity"). ErrNotFound when no session's is; ErrAmbiguous naming them (their native ids, the first
// maxSubagentNames) when several parents have a subagent of that name.
func (ix *Index) subagentSession(ctx context.Context, name string) (string, error) {
	var ids, natives []string
	total := 0
	err := ix.scanRows(ctx, `SELECT id, native_id, count(*) OVER () FROM sessions
		WHERE length(native_id) > length(?1) AND substr(native_id, length(native_id) - length(?1)) = '/' || ?1
		ORDER BY native_id, id LIMIT ?2`, []any{name, maxSubagentNames}, func(r *sql.Rows) error {
		var id, native string
		if err := r.Scan(&id, &native, &total); err != nil {
			return err
		}
		ids, natives = append(ids, id), append(natives, native)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("resolve subagent %s: %w", name, err)
	}
	switch total {
	case 0:
		return "", fmt.Errorf("session %w: %s", ErrNotFound, name)
	case 1:
		return ids[0], nil
	}
	named := strings.Join(natives, ", ")
	if total > len(natives) {
		named += fmt.Sprintf(" and %d more", total-len(natives))
	}
	return "", fmt.Errorf("%w: %s is a subagent of several sessions: %s: give the whole native id (parent/%s) or the ctx id",
		ErrAmbiguous, name, named, name)
}

// sessionIDs runs query (selecting sessions' ids) with args and returns the ids.
func (ix *Index) sessionIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	var ids []string
	err := ix.scanRows(ctx, query, args, func(r *sql.Rows) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resolve native id: %w", err)
	}
	return ids, nil
}

// Sessions lists sessions, newest first, optionally of one provider; limit ≤ 0 means all.
func (ix *Index) Sessions(ctx context.Context, p Provider, limit int) (_ []Session, err error) {
	defer ix.noteDamaged(&err)
	q := `SELECT id FROM sessions`
	var args []any
	if p != "" {
		q += ` WHERE provider = ?`
		args = append(args, string(p))
	}
	q += ` ORDER BY started_at DESC, id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	out := make([]Session, 0, len(ids))
	for _, id := range ids {
		s, err := ix.Session(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Events returns the events of a session in sequence order with Seq > afterSeq, at most limit of them
// (limit ≤ 0: all).
func (ix *Index) Events(ctx context.Context, sessionID string, afterSeq int64, limit int) (_ []Event, err error) {
	defer ix.noteDamaged(&err)
	id, err := ix.resolveID(ctx, "sessions", sessionID)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := ix.db.QueryContext(ctx, eventCols+` WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e, err := ix.scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("read events of %s: %w", id, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Event returns the event with the ctx id (or unique prefix) id and up to window events before and
// after it in its session (window ≤ 0: none).
func (ix *Index) Event(ctx context.Context, id string, window int) (_ Event, _ []Event, err error) {
	defer ix.noteDamaged(&err)
	given := id
	sessionHint := func(err error) error {
		// A session's id given as an event's: say where it is (as Session says the reverse).
		if errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalidID) {
			if s, serr := ix.Session(ctx, given); serr == nil {
				return fmt.Errorf("event %w: %s is session %s's id: show it as a session (ctx show session %s, MCP show_session)",
					ErrNotFound, strings.TrimSpace(given), s.ID, s.ID)
			}
		}
		return err
	}
	id, err = ix.resolveID(ctx, "events", id)
	if err != nil {
		return Event{}, nil, sessionHint(err)
	}
	e, err := ix.scanEvent(ix.db.QueryRowContext(ctx, eventCols+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, nil, sessionHint(fmt.Errorf("event %w: %s", ErrNotFound, id))
	}
	if err != nil {
		return e, nil, fmt.Errorf("read event %s: %w", id, err)
	}
	if window <= 0 {
		return e, nil, nil
	}
	rows, err := ix.db.QueryContext(ctx, eventCols+` WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`, e.SessionID, e.Seq-int64(window), e.Seq+int64(window))
	if err != nil {
		return e, nil, fmt.Errorf("read window of %s: %w", id, err)
	}
	defer rows.Close()
	var around []Event
	for rows.Next() {
		x, err := ix.scanEvent(rows)
		if err != nil {
			return e, nil, err
		}
		around = append(around, x)
	}
	return e, around, rows.Err()
}

// Stats counts what the index holds.
type Stats struct {
	Sources    int            `json:"sources"`
	Sessions   int            `json:"sessions"`
	Events     int            `json:"events"`
	Generation int64          `json:"generation"`
	ByProvider map[string]int `json:"sessions_by_provider"`
	// Conflicts counts the records a file holds with other content than the indexed event, which
	// another file of the session gave first (docs/history.md "A session of several files").
	Conflicts int `json:"conflicts,omitempty"`
}

// Stats returns counts of sources, sessions, events and conflicting records.
func (ix *Index) Stats(ctx context.Context) (_ Stats, err error) {
	defer ix.noteDamaged(&err)
	st := Stats{ByProvider: map[string]int{}}
	for q, dst := range map[string]*int{
		`SELECT count(*) FROM sources`: &st.Sources, `SELECT count(*) FROM sessions`: &st.Sessions, `SELECT count(*) FROM events`: &st.Events,
		`SELECT count(*) FROM conflicts`: &st.Conflicts,
	} {
		if err := ix.db.QueryRowContext(ctx, q).Scan(dst); err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT provider, count(*) FROM sessions GROUP BY provider`)
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var n int
		if err := rows.Scan(&p, &n); err != nil {
			return st, err
		}
		st.ByProvider[p] = n
	}
	if st.Generation, err = ix.Generation(ctx); err != nil {
		return st, err
	}
	return st, rows.Err()
}

// nativeAmbiguous is the error of a native session id that two or more providers' sessions share.
func (ix *Index) nativeAmbiguous(ctx context.Context, native string) error {
	var n int
	var provs string
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*), group_concat(DISTINCT provider) FROM sessions WHERE native_id = ?`, native).Scan(&n, &provs); err != nil {
		return fmt.Errorf("read sessions of native id %s: %w", native, err)
	}
	return fmt.Errorf("%w: %d sessions of providers %s have the native id %s: use the ctx id", ErrAmbiguous, n, strings.ReplaceAll(provs, ",", ", "), native)
}

// MaxSessionField is the most bytes a session's descriptive field (title, cwd, repository URL, branch,
// commit, model, CLI version) keeps: the import cuts a longer one, and a read of an index written before
// cuts it again, so that every session fits a response (docs/limits.md "Agent history"). A cut field ends
// with "… [cut: N bytes]", N the bytes of the whole field.
const MaxSessionField = 8 << 10

// ClipSessionField cuts s to MaxSessionField bytes (at a rune boundary) with the marker; a shorter s is
// returned as it is.
func ClipSessionField(s string) string {
	if len(s) <= MaxSessionField {
		return s
	}
	marker := fmt.Sprintf("… [cut: %d bytes]", len(s))
	cut := MaxSessionField - len(marker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}
