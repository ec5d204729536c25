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
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlitevfs "modernc.org/sqlite/vfs"
)

// OpenCode's current store is one SQLite database, opencode.db, with tables session (one row per
// session: id, parent_id, directory, title, version, time_created, time_updated), message (id,
// session_id, time_created, time_updated, data) and part (id, message_id, session_id, time_created,
// time_updated, data), where data is the JSON of the legacy message and part files without their ids
// (docs/history.md "OpenCode"). It is opened read-only (mode=ro, query_only) where it is, and nothing is
// written beside it (openProviderDB).
//
// The file may come from elsewhere (a copied root, $OPENCODE_DB): it is read only when session, message
// and part are real tables (a view can run an endless recursive query), with trusted_schema off, and every
// read of it is bounded in time (openCodeDBTimeout): past it SQLite is interrupted and the source fails
// with an error, the others import (docs/history.md "OpenCode").

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

// providerDB is a provider's SQLite database open read-only where it is (openProviderDB).
type providerDB struct {
	*sql.DB
	path  string
	stamp dbStamp       // the database's files when it was opened; zero when SQLite's own locks keep the read consistent
	vfs   *sqlitevfs.FS // the read-only VFS of a -wal without -shm, unregistered by Close; nil otherwise
}

// Close closes the database and unregisters its read-only VFS.
func (p *providerDB) Close() error {
	err := p.DB.Close()
	if p.vfs != nil {
		err = errors.Join(err, p.vfs.Close())
	}
	return err
}

// dbStamp is the stat data of a provider database and its -wal: size, mtime and inode (and the database's
// ctime). A -wal's ctime is left out: SQLite, run as root, fchowns the -wal it opens to its owner, which
// moves the ctime only.
type dbStamp struct {
	db, wal fileStat
	set     bool
}

// stampOf stats path and its -wal.
func stampOf(path string) (dbStamp, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return dbStamp{}, err
	}
	s := dbStamp{db: statOf(fi), set: true}
	if wi, err := os.Lstat(path + "-wal"); err == nil {
		s.wal = statOf(wi)
		s.wal.ctime = 0
	} else if !errors.Is(err, fs.ErrNotExist) {
		return dbStamp{}, err
	}
	return s, nil
}

// unchanged returns an error when the database or its -wal changed since it was opened: read without
// SQLite's locks (immutable, or a -wal without -shm read into memory), what was read may mix two states.
func (p *providerDB) unchanged() error {
	if !p.stamp.set {
		return nil
	}
	now, err := stampOf(p.path)
	if err != nil || now != p.stamp {
		return fmt.Errorf("%s changed while it was read (an OpenCode started meanwhile?): read again by the next import", p.path)
	}
	return nil
}

// changedOr returns, when err is not nil, the error that the database changed while it was read if it did
// (a read without SQLite's locks of a database being written meets pages of two states, which SQLite calls
// "database disk image is malformed": the database is fine, the next import reads it again), else err.
func (p *providerDB) changedOr(err error) error {
	if err == nil {
		return nil
	}
	if cerr := p.unchanged(); cerr != nil {
		return cerr
	}
	return err
}

// explainOpen returns the error of opening path with SQLite, err, in words where SQLite's are obscure:
// SQLITE_PROTOCOL (15, "locking protocol") read with readonly_shm is a -shm that does not describe the
// -wal beside it (a -shm an OpenCode left when it stopped, beside a -wal without a commit), which SQLite
// cannot recover without writing the -shm.
func explainOpen(path string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 15 {
		return fmt.Errorf("open %s: its -shm does not match its -wal (left by an OpenCode that stopped?), and ctx writes nothing beside it: not read; running OpenCode once repairs them: %w", path, err)
	}
	return err
}

// maxProviderWALBytes bounds the -wal of a provider's database that ctx reads: SQLite reads a -wal no
// writer holds open whole to index it (docs/limits.md).
const maxProviderWALBytes = 1 << 30

// openProviderDB opens a provider's SQLite database read-only, where it is, writing nothing beside it
// (docs/history.md "OpenCode"). The caller closes it.
//
//   - No -wal, or an empty one without -shm (no OpenCode has it open): immutable, so that SQLite creates no
//     -wal and -shm beside a WAL-mode database; a database in rollback mode with a -journal (a writer's
//     transaction, or a hot journal) is read with SQLite's locks instead, which create nothing.
//   - A -wal and a -shm (OpenCode runs, or crashed): readonly_shm, so SQLite maps the -shm read-only: with
//     a writer it reads under the writer's wal-index and its read locks, without one it reads the -wal
//     into memory and ignores the -shm (a stale one, a hard link to any file, is never truncated or
//     initialised).
//   - A -wal without -shm (a copied root): read into memory in exclusive locking mode, which never opens a
//     -shm, through a read-only VFS (walFS) that opens the database and its -wal O_RDONLY, never creates,
//     truncates or deletes a file: the -wal's commits are read (an earlier ctx copied both files into
//     $TMPDIR instead, unbounded). SQLite's own VFS opens the -wal O_RDWR|O_CREAT and, when it holds no
//     valid frame (garbage, a header only), unlinked it on close.
//
// A -wal is at most maxProviderWALBytes. Read without locks, the database is stat'ed when opened and
// after its reads (providerDB.unchanged).
func openProviderDB(ctx context.Context, path string) (*providerDB, error) {
	f, fi, err := openRegular(path) // refuses links and non-regular files
	if err != nil {
		return nil, err
	}
	var header [100]byte
	n, _ := io.ReadFull(f, header[:])
	f.Close()
	removeStaleProviderCopies()
	p := &providerDB{path: path}
	if p.stamp, err = stampOf(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wal, walErr := os.Lstat(path + "-wal")
	shm, shmErr := os.Lstat(path + "-shm")
	hasWAL, hasSHM := walErr == nil, shmErr == nil && shm.Mode().IsRegular()
	params := "mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)&_pragma=trusted_schema(0)"
	switch {
	case hasWAL && !wal.Mode().IsRegular():
		return nil, fmt.Errorf("open %s: its -wal is not a regular file", path)
	case hasWAL && wal.Size() > maxProviderWALBytes:
		return nil, fmt.Errorf("open %s: its -wal is %d bytes, more than the %d MiB ctx reads (docs/limits.md)", path, wal.Size(), maxProviderWALBytes>>20)
	case hasWAL && fi.Size() == 0:
		// SQLite deletes the -wal of an empty database, even read-only.
		return nil, fmt.Errorf("open %s: not an OpenCode database: an empty file beside a -wal", path)
	case hasWAL && hasSHM:
		params += "&readonly_shm=1"
		p.stamp = dbStamp{} // SQLite's locks: the writer's wal-index, or the -wal read whole under a read lock
	case hasWAL && wal.Size() > 0:
		name, vfs, err := sqlitevfs.New(walFS{path: path})
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		db, err := openDBAt(ctx, path, walFSName, "vfs="+name+"&_pragma=locking_mode(exclusive)&"+params)
		if err != nil {
			_ = vfs.Close()
			return nil, err
		}
		p.DB, p.vfs = db, vfs
		return p, nil
	case exists(path+"-journal") && n == len(header) && header[18] == 1 && header[19] == 1:
		p.stamp = dbStamp{} // rollback mode: SQLite's shared lock; a hot journal is an error read-only
	default:
		params += "&immutable=1"
	}
	db, err := openDBAt(ctx, path, path, params)
	if err != nil {
		return nil, explainOpen(path, err)
	}
	p.DB = db
	return p, nil
}

// walFSName is the name under which walFS serves a database, and walFSName+"-wal" its -wal.
const walFSName = "provider.db"

// walFS is the file system of sqlitevfs.New that serves one provider database (walFSName) and its -wal,
// opened read-only without following a final link or blocking on a FIFO, and nothing else (a -journal is
// not there: a database with a -wal was last in WAL mode). Opened through it, SQLite can read only.
type walFS struct{ path string }

// Open opens walFSName or its -wal; any other name does not exist.
func (w walFS) Open(name string) (fs.File, error) {
	var path string
	switch name {
	case walFSName:
		path = w.path
	case walFSName + "-wal":
		path = w.path + "-wal"
	default:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return f, nil
}

// removeStaleProviderCopies removes, once per process, the private copies of provider databases that
// ctx before the thirteenth round made in $TMPDIR (ctx-provider-db-*: a database and its -wal, copied
// whole and unbounded) and left when killed: the folders of this user untouched for an hour, which hold
// nothing but such a copy.
func removeStaleProviderCopies() {
	staleCopiesOnce.Do(func() {
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "ctx-provider-db-*"))
		for _, dir := range dirs {
			if staleProviderCopy(dir, time.Now().Add(-time.Hour)) {
				_ = os.RemoveAll(dir)
			}
		}
	})
}

var staleCopiesOnce sync.Once

// staleProviderCopy says whether dir is a folder of this user, not changed since before, that holds only
// provider.db and its -wal, -shm or -journal.
func staleProviderCopy(dir string, before time.Time) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.ModTime().After(before) || !ownedBySelf(fi) {
		return false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		switch e.Name() {
		case "provider.db", "provider.db-wal", "provider.db-shm", "provider.db-journal":
		default:
			return false
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.ModTime().After(before) {
			return false
		}
	}
	return true
}

// openDBAt opens the SQLite database at path, named name for SQLite (path itself, or walFSName in a
// walFS), with the URI parameters params (read-only ones) and checks its tables.
func openDBAt(ctx context.Context, path, name, params string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+name+"?"+params)
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
		// stored columns, whose values are no larger than the file, are read.
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
		return nil, db.changedOr(fmt.Errorf("list sessions of %s: %w", path, err))
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, db.changedOr(fmt.Errorf("list sessions of %s: %w", path, err))
		}
		if len(out) == maxOpenCodeDBSessions {
			return nil, fmt.Errorf("list sessions of %s: more than %d", path, maxOpenCodeDBSessions)
		}
		out = append(out, Source{Provider: OpenCode, Format: FormatOpenCodeDB, Path: path, Session: id})
	}
	if err := rows.Err(); err != nil {
		return nil, db.changedOr(err)
	}
	return out, db.unchanged()
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
