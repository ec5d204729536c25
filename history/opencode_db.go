package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// OpenCode's current store is one SQLite database, opencode.db, with tables session (one row per
// session: id, parent_id, directory, title, version, time_created, time_updated), message (id,
// session_id, time_created, time_updated, data) and part (id, message_id, session_id, time_created,
// time_updated, data), where data is the JSON of the legacy message and part files without their ids
// (docs/history.md "OpenCode"). It is opened read-only (mode=ro, query_only) and never written; when no
// -wal or -journal file is beside it, also immutable, so that reading it creates no file there.
//
// The file may come from elsewhere (a copied root, $OPENCODE_DB): it is read only when session, message
// and part are real tables (a view can run an endless recursive query), with trusted_schema off, and every
// read of it is bounded in time (openCodeDBTimeout): past it SQLite is interrupted and the source fails
// with an error, the others import (faults11 B12; docs/history.md "OpenCode").

const maxOpenCodeDBSessions = 100_000

// openCodeDBTimeout bounds listing a database's sessions, and reading one session of it (a var for the
// tests).
var openCodeDBTimeout = 30 * time.Second

// boundDB returns ctx limited to openCodeDBTimeout, and what turns a read's error after that limit into
// one that says so.
func boundDB(ctx context.Context, path string) (context.Context, context.CancelFunc, func(error) error) {
	bctx, cancel := context.WithTimeout(ctx, openCodeDBTimeout)
	explain := func(err error) error {
		if err != nil && ctx.Err() == nil && bctx.Err() != nil {
			return fmt.Errorf("%s: reading it took more than %s, stopped (a huge or hostile database?): %w", path, openCodeDBTimeout, err)
		}
		return err
	}
	return bctx, cancel, explain
}

// providerDB is a provider's SQLite database open read-only; Close also removes the private copy it
// may read (openProviderDB).
type providerDB struct {
	*sql.DB
	tmp string // the folder of the private copy, "" when the database is read where it is
}

// Close closes the database and removes its private copy.
func (p *providerDB) Close() error {
	err := p.DB.Close()
	if p.tmp != "" {
		if rerr := os.RemoveAll(p.tmp); err == nil {
			err = rerr
		}
	}
	return err
}

// openProviderDB opens a provider's SQLite database read-only. The caller closes it.
//
// A -wal without its -shm (a copied root, an OpenCode that crashed: a writer keeps both while it runs)
// cannot be read in place without SQLite creating the -shm beside it, and immutable would skip the -wal's
// commits: the database and its -wal are copied into a private temporary folder and the copy is read
// (faults12 B5; docs/history.md "OpenCode").
func openProviderDB(ctx context.Context, path string) (*providerDB, error) {
	f, _, err := openRegular(path) // refuses links and non-regular files
	if err != nil {
		return nil, err
	}
	f.Close()
	p := &providerDB{}
	if exists(path+"-wal") && !exists(path+"-shm") {
		if p.tmp, err = os.MkdirTemp("", "ctx-provider-db-*"); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		copyPath := filepath.Join(p.tmp, "provider.db")
		for _, suffix := range []string{"", "-wal"} {
			if err := copyRegular(path+suffix, copyPath+suffix); err != nil {
				os.RemoveAll(p.tmp)
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
		}
		path = copyPath
	}
	db, err := openDBAt(ctx, path)
	if err != nil {
		if p.tmp != "" {
			os.RemoveAll(p.tmp)
		}
		return nil, err
	}
	p.DB = db
	return p, nil
}

// copyRegular copies the regular file src (not a link) to the new file dst.
func copyRegular(src, dst string) error {
	in, _, err := openRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// openDBAt opens the SQLite database at path read-only and checks its tables.
func openDBAt(ctx context.Context, path string) (*sql.DB, error) {
	dsn := "file:" + path + "?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)&_pragma=trusted_schema(0)"
	if !exists(path+"-wal") && !exists(path+"-journal") {
		// No writer has it open (a WAL database keeps its -wal while open; a rollback journal exists while
		// a transaction runs): immutable, else SQLite creates -shm and -wal beside a WAL-mode database even
		// read-only, in the provider's directory, and leaves them there.
		dsn += "&immutable=1"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := checkOpenCodeTables(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// checkOpenCodeTables makes sure session, message and part are tables: a view of that name could run any
// query, endless ones included, when ctx reads it.
func checkOpenCodeTables(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT lower(name), type, coalesce(sql, '') FROM sqlite_master WHERE lower(name) IN ('session', 'message', 'part')`)
	if err != nil {
		return fmt.Errorf("read its schema: %w", err)
	}
	defer rows.Close()
	tables := map[string]bool{}
	for rows.Next() {
		var name, typ, create string
		if err := rows.Scan(&name, &typ, &create); err != nil {
			return fmt.Errorf("read its schema: %w", err)
		}
		if typ != "table" {
			return fmt.Errorf("not an OpenCode database: %s is a %s, not a table", name, typ)
		}
		if f := strings.Fields(strings.ToUpper(create)); len(f) > 1 && f[1] == "VIRTUAL" {
			return fmt.Errorf("not an OpenCode database: %s is a virtual table", name)
		}
		tables[name] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read its schema: %w", err)
	}
	for _, n := range []string{"session", "message", "part"} {
		if !tables[n] {
			return fmt.Errorf("not an OpenCode database: no table %s", n)
		}
		// A generated column is computed when it is read, by any expression (a printf of 400 MB): only
		// stored columns, whose values are no larger than the file, are read (faults12 B2).
		var generated sql.NullString
		err := db.QueryRowContext(ctx, `SELECT name FROM pragma_table_xinfo(?) WHERE hidden != 0 LIMIT 1`, n).Scan(&generated)
		if err == nil {
			return fmt.Errorf("not an OpenCode database: %s.%s is a generated column", n, generated.String)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read its schema: %w", err)
		}
	}
	return nil
}

// openCodeDBSessions lists the sessions of an opencode.db as sources, one per session.
func openCodeDBSessions(ctx context.Context, path string) (_ []Source, err error) {
	ctx, cancel, explain := boundDB(ctx, path)
	defer cancel()
	defer func() { err = explain(err) }()
	db, err := openProviderDB(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT id FROM session ORDER BY time_created, id LIMIT ?`, maxOpenCodeDBSessions+1)
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s: %w", path, err)
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list sessions of %s: %w", path, err)
		}
		if len(out) == maxOpenCodeDBSessions {
			return nil, fmt.Errorf("list sessions of %s: more than %d", path, maxOpenCodeDBSessions)
		}
		out = append(out, Source{Provider: OpenCode, Format: FormatOpenCodeDB, Path: path, Session: id})
	}
	return out, rows.Err()
}

// openCodeDBFingerprint summarises what can change in one session's rows.
func openCodeDBFingerprint(ctx context.Context, db *providerDB, id string) (string, error) {
	var upd sql.NullInt64
	var nm, np int64
	var mm, mp sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT time_updated FROM session WHERE id=?`, id).Scan(&upd); err != nil {
		return "", fmt.Errorf("session %s: %w", id, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*), max(time_updated) FROM message WHERE session_id=?`, id).Scan(&nm, &mm); err != nil {
		return "", fmt.Errorf("session %s messages: %w", id, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*), max(time_updated) FROM part WHERE session_id=?`, id).Scan(&np, &mp); err != nil {
		return "", fmt.Errorf("session %s parts: %w", id, err)
	}
	return fmt.Sprintf("db:%d:%d:%d:%d:%d", upd.Int64, nm, mm.Int64, np, mp.Int64), nil
}

func parseOpenCodeDB(ctx context.Context, db *providerDB, id string, st *parseState) (*parseResult, error) {
	b := newBuilder(st)
	var s ocSession
	var parent, title, version sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT id, parent_id, directory, title, version, time_created, time_updated FROM session WHERE id=?`, id).
		Scan(&s.ID, &parent, &s.Directory, &title, &version, &s.Time.Created, &s.Time.Updated); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	s.ParentID, s.Title, s.Version = parent.String, title.String, version.String
	// A value longer than a JSONL line may be (maxLineBytes) is not read: a bad line, as in a JSONL file.
	rows, err := db.QueryContext(ctx, `SELECT id, time_created, CASE WHEN octet_length(data) > ? THEN NULL ELSE data END
		FROM message WHERE session_id=? ORDER BY time_created, id LIMIT ?`, maxLineBytes, id, maxOpenCodeMessages)
	if err != nil {
		return nil, fmt.Errorf("session %s messages: %w", id, err)
	}
	var msgs []ocMessage
	for rows.Next() {
		var mid string
		var data sql.NullString
		var created int64
		if err := rows.Scan(&mid, &created, &data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("session %s messages: %w", id, err)
		}
		if !data.Valid {
			b.bad("message %s: data longer than %d bytes (or null), skipped", mid, maxLineBytes)
			continue
		}
		var m ocMessage
		if err := json.Unmarshal([]byte(data.String), &m); err != nil {
			b.bad("message %s: %v", mid, err)
			continue
		}
		m.ID = mid
		if m.Time.Created == 0 {
			m.Time.Created = created
		}
		msgs = append(msgs, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session %s messages: %w", id, err)
	}
	parts := func(m ocMessage) ([]ocPart, error) {
		rows, err := db.QueryContext(ctx, `SELECT id, CASE WHEN octet_length(data) > ? THEN NULL ELSE data END
			FROM part WHERE message_id=? ORDER BY id LIMIT ?`, maxLineBytes, m.ID, maxOpenCodeParts)
		if err != nil {
			return nil, fmt.Errorf("message %s parts: %w", m.ID, err)
		}
		defer rows.Close()
		var out []ocPart
		for rows.Next() {
			var pid string
			var data sql.NullString
			if err := rows.Scan(&pid, &data); err != nil {
				return nil, fmt.Errorf("message %s parts: %w", m.ID, err)
			}
			if !data.Valid {
				b.bad("part %s: data longer than %d bytes (or null), skipped", pid, maxLineBytes)
				continue
			}
			var p ocPart
			if err := json.Unmarshal([]byte(data.String), &p); err != nil {
				b.bad("part %s: %v", pid, err)
				continue
			}
			p.ID = pid
			out = append(out, p)
		}
		return out, rows.Err()
	}
	if err := openCodeAssemble(ctx, b, s, msgs, parts); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // past openCodeDBTimeout: the source fails (boundDB says why), nothing half-read is kept
	}
	return b.res, nil
}

// isOpenCodeDB reports whether a file name is OpenCode's database.
func isOpenCodeDB(name string) bool {
	return strings.HasPrefix(name, "opencode") && strings.HasSuffix(name, ".db")
}

// exists reports whether path names anything (a link included).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
