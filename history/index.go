package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	sjson "github.com/segmentio/encoding/json"

	"github.com/ctx-dev/ctx/history/internal/ftsrank"
	"github.com/ctx-dev/ctx/history/internal/textproc"
	"github.com/ctx-dev/ctx/internal/termesc"

	_ "modernc.org/sqlite" // the index's SQLite engine (pure Go, FTS5)
)

// parserRev is bumped when a parser changes what it produces: every source is then re-imported. 4: the
// paths of event_files are kept cleaned (CleanFilePath). 5: a time at or before the Unix epoch is no time; Windows paths kept as winClean makes them.
// 6: a file name that is not valid UTF-8 enters native ids and line keys as nameID writes it. 7: a Claude
// subagent's native id names its parent (claudeNativeID). 8: a time at or before the Unix epoch is kept
// (atMillis). 9: the search body's CJK characters are tokens of their own (textproc.SplitCJK).
// 10: terminal escape sequences are left out of the search body (searchBody).
const parserRev = 10

// Bounds of the zstd decoder for .jsonl.zst rollouts (docs/limits.md).
const (
	zstdDecoderMemory = 256 << 20
	maxZstdWindow     = 128 << 20
)

// maxJSONLBytes is how much of a raw transcript file (.jsonl, an append-only log) is read (bytes); the rest
// is not imported and the source's result says so (docs/limits.md). Real transcripts reach hundreds of
// MB: the bound is far above them, and bounds what a file of hostile size (a sparse file) costs.
var maxJSONLBytes int64 = 4 << 30

// maxZstdBytes is how much of a .jsonl.zst is read decompressed (bytes); the rest is not imported and the
// source's result says so (SourceResult.Truncated). A variable so that tests can lower it.
var maxZstdBytes int64 = 256 << 20

// A .jsonl.zst may decompress to at most maxZstdRatio times its compressed size, or zstdRatioFloor bytes
// when that is more (a small rollout): a source that passes it while it is read is a decompression bomb
// (a few KiB that expand to hundreds of MiB of one repeated line, each line an event), and fails whole, so
// its cost is bounded by its size on disk (docs/limits.md). Real rollouts compress 5–20×. (Variables
// for the tests.)
var (
	maxZstdRatio   int64 = 100
	zstdRatioFloor int64 = 8 << 20
)

// damageReader reads r, ending at the first error of r as at its end: err keeps the error and n the bytes
// read before it. A .jsonl.zst cut short or damaged is imported up to its last whole line (parseWhole).
type damageReader struct {
	r   io.Reader
	n   int64
	err error
}

func (d *damageReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, io.EOF
	}
	k, err := d.r.Read(p)
	d.n += int64(k)
	if err != nil && err != io.EOF {
		d.err, err = err, io.EOF
	}
	return k, err
}

// errZstdRatio is the error of a .jsonl.zst that passes its bound (ratioReader).
var errZstdRatio = errors.New("decompression bomb")

// ratioReader reads r, failing with errZstdRatio once more than n bytes came out of it.
type ratioReader struct {
	r io.Reader
	n int64
}

func (c *ratioReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	if c.n -= int64(k); c.n < 0 {
		return 0, errZstdRatio
	}
	return k, err
}

// cappedReader reads r up to n bytes, then reports EOF; cut is set when r had more.
type cappedReader struct {
	r   io.Reader
	n   int64
	cut bool
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		var one [1]byte
		if k, _ := io.ReadFull(c.r, one[:]); k > 0 {
			c.cut = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	return k, err
}

// schemaVersion is the index's PRAGMA user_version: Open creates the schema when it is missing and
// rebuilds an index of an older version (docs/history.md "The index"). Version 2: the ev_fts rowid
// carries the event's class (ftsRowid); sessions_root. Version 3: the directory cache (dirs) and the
// covering index sources_stamp, added to a version 2 index without a rebuild (schemaAdded). Version 4:
// the ev_fts rowid also carries the body's length in tokens (ftsrank.Rowid), events.fts_len. Version 5:
// events.src, the key of the source an event came from (a session may have several: docs/history.md
// "Identity"), and the line-keyed events' native keys name their file. Version 6: sources_session (the
// sources of a session), conflicts (records two files of a session disagree on), a session of several
// files numbers its events once across them (docs/history.md "A session of several files"), and the map
// from event to root group (groupSchema). A version 5 index is brought to 6 in place (ensureSchema): the
// map is built from its rows (migrateGroups), the new table and index are created, and the sources of every
// session of several files are marked to be read again by the next import, which numbers them once.
// Version 7: sources.ctime and sources.ino, the rest of a source's stat that tells it unchanged (as git's
// index keeps them), in sources_stamp too; added in place to a version 5 or 6 index (migrateStat), whose
// rows hold 0 until their file is next looked at.
const schemaVersion = 7

// groupKeySQL is the root group of the sessions row named s (or a trigger's new row): its root session's
// id, or its own when it has no root (docs/history.md "Grouping").
func groupKeySQL(s string) string {
	return `CASE WHEN ` + s + `.root_id <> '' THEN ` + s + `.root_id ELSE ` + s + `.id END`
}

// groupSQL is the ev_group.grp value of the sessions row s: its root group's number (ev_roots) shifted
// left by one, the low bit set for a subagent session.
func groupSQL(s string) string {
	return `(((SELECT n FROM ev_roots WHERE key = ` + groupKeySQL(s) + `) << 1) | (` + s + `.scope = 'subagent'))`
}

// groupSchema is the compact map a search groups its candidates by (docs/history.md "The index"):
// ev_group holds one small row per event (its rowid, and its session's root group number and scope in
// one integer), so a candidate's group is read from a page of hundreds of such rows instead of its event
// row and its session scattered through the file, and a group's events from its index ev_group_grp; ev_roots numbers the root groups' keys (session ids; a number
// is never reused). The import's writer gives each event it inserts its row (writer.groupOf, then
// insertEvents); triggers keep the rest exact whichever statement does it: a session whose root or scope
// is updated (relink) rewrites the rows of its events that differ, a deleted event loses its row. No
// trigger fires on the import's inserts: a statement that fires one opens a statement savepoint, and a
// savepoint makes FTS5 write its pending postings to disk (at every event: a first import cost 1.5-1.8
// times the CPU, bench/README.md "Ninth round").
var groupSchema = `
CREATE TABLE IF NOT EXISTS ev_roots(n INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS ev_group(ev INTEGER PRIMARY KEY, grp INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS ev_group_grp ON ev_group(grp);
CREATE TRIGGER IF NOT EXISTS ev_group_del AFTER DELETE ON events BEGIN
	DELETE FROM ev_group WHERE ev = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS ev_group_session_upd AFTER UPDATE OF id, root_id, scope ON sessions BEGIN` + sessionGroupsSQL + `END;
`

// sessionGroupsSQL is the body of the trigger on sessions' updates: the new row's root group gets a
// number when it has none, then its events' rows are set to the row's group. No statement relies on a
// conflict clause of its own (a trigger's statements take the clause of the statement that fired it: an
// OR REPLACE would replace ev_roots' row, and renumber the group).
var sessionGroupsSQL = `
	INSERT INTO ev_roots(key) SELECT ` + groupKeySQL("new") + ` WHERE NOT EXISTS (SELECT 1 FROM ev_roots WHERE key = ` + groupKeySQL("new") + `);
	UPDATE ev_group SET grp = ` + groupSQL("new") + ` WHERE ev IN (SELECT rowid FROM events WHERE session_id = new.id) AND grp <> ` + groupSQL("new") + `;
	INSERT INTO ev_group(ev, grp) SELECT e.rowid, ` + groupSQL("new") + ` FROM events e
		WHERE e.session_id = new.id AND NOT EXISTS (SELECT 1 FROM ev_group m WHERE m.ev = e.rowid);
`

// migrateGroups builds the map of a version 5 index from its rows (what the triggers would have written).
const migrateGroups = `
INSERT OR IGNORE INTO ev_roots(key) SELECT ` + "CASE WHEN root_id <> '' THEN root_id ELSE id END" + ` FROM sessions ORDER BY 1;
INSERT INTO ev_group(ev, grp) SELECT e.rowid, (r.n << 1) | (s.scope = 'subagent')
	FROM events e JOIN sessions s ON s.id = e.session_id JOIN ev_roots r ON r.key = ` + "CASE WHEN s.root_id <> '' THEN s.root_id ELSE s.id END" + `
	ORDER BY e.rowid;
`

// schemaAdded is what version 3 adds to version 2: created in place, the rows kept.
const schemaAdded = `
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, stamp TEXT NOT NULL, entries TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sources_stamp ON sources(path, format, parser_rev, size, mtime, ctime, ino, offset, session_id);
`

// migrateStat adds what version 7 adds to version 6 (migrateStat's caller adds the columns when missing):
// the covering index of loadSources with them.
const migrateStat = `DROP INDEX IF EXISTS sources_stamp;
CREATE INDEX sources_stamp ON sources(path, format, parser_rev, size, mtime, ctime, ino, offset, session_id);
`

// schema is the index's tables but the full-text one (ftsSchema).
const schema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
	path TEXT PRIMARY KEY, provider TEXT NOT NULL, format TEXT NOT NULL, parser_rev INTEGER NOT NULL,
	size INTEGER NOT NULL, mtime INTEGER NOT NULL, fingerprint TEXT NOT NULL, content_hash TEXT NOT NULL,
	offset INTEGER NOT NULL, check_hash TEXT NOT NULL, state TEXT NOT NULL, session_id TEXT NOT NULL,
	unknown TEXT NOT NULL, bad_lines INTEGER NOT NULL, imported_at INTEGER NOT NULL,
	ctime INTEGER NOT NULL DEFAULT 0, ino INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS sessions(
	id TEXT PRIMARY KEY, provider TEXT NOT NULL, native_id TEXT NOT NULL, parent_id TEXT NOT NULL,
	root_id TEXT NOT NULL, scope TEXT NOT NULL, cwd TEXT NOT NULL, repo_url TEXT NOT NULL, branch TEXT NOT NULL,
	commit_id TEXT NOT NULL, model TEXT NOT NULL, cli_version TEXT NOT NULL, title TEXT NOT NULL,
	started_at INTEGER NOT NULL, ended_at INTEGER NOT NULL, source_format TEXT NOT NULL, source_path TEXT NOT NULL,
	event_count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events(
	rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
	native_key TEXT NOT NULL, at INTEGER NOT NULL, type TEXT NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,
	tool TEXT, files TEXT, facts TEXT, fts_len INTEGER NOT NULL DEFAULT 65535, src TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS events_session ON events(session_id, seq);
CREATE INDEX IF NOT EXISTS sessions_root ON sessions(root_id);
CREATE TABLE IF NOT EXISTS event_files(event INTEGER NOT NULL, path TEXT NOT NULL, op TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS event_files_path ON event_files(path);
CREATE INDEX IF NOT EXISTS event_files_event ON event_files(event);
CREATE TABLE IF NOT EXISTS event_commits(event INTEGER NOT NULL, oid TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS event_commits_oid ON event_commits(substr(oid, 1, 7));
CREATE INDEX IF NOT EXISTS event_commits_event ON event_commits(event);
CREATE INDEX IF NOT EXISTS sources_session ON sources(session_id);
CREATE TABLE IF NOT EXISTS conflicts(src TEXT NOT NULL, event TEXT NOT NULL, PRIMARY KEY(src, event)) WITHOUT ROWID;
`

// oldTables are the tables of an index older than schemaVersion that Open drops (their rows are rebuilt
// from the providers' files by the next import).
var oldTables = []string{"ev_fts", "events", "event_files", "event_commits", "sessions", "sources", "sources_snap", "sources_dirty", "conflicts",
	"ev_group", "ev_roots"}

// ftsSchema is the full-text table: contentless (the text is in events), deletable by rowid. Its rowid
// is ftsRowid(event rowid, type, length): the event's class rides in the low bits and the body's length
// in tokens above them, so a search weights and narrows FTS5's matches without joining them with events
// and ranks them without FTS5's per-row read of the length (ftsrank, docs/history.md "Search").
const ftsSchema = `CREATE VIRTUAL TABLE IF NOT EXISTS ev_fts USING fts5(body, content='', contentless_delete=1,
	tokenize='` + ftsrank.Tokenizer + `');
`

// ftsClass is a class of events: searched together and weighted alike (docs/history.md "Search").
type ftsClass struct {
	types  []EventType // the types it holds; nil: every type no other class holds
	weight float64     // the class weight under content_scope all and transcript
}

// Class numbers: the low ftsClassBits of an ev_fts rowid. They are stored in the index: a change needs a
// schemaVersion bump.
const (
	classMessage = iota
	classSummary
	classCall
	classOutput
	classQuiet // reasoning and notices: left out of content_scope all
	classOther // any other type (the set is open)

	ftsClassBits = ftsrank.ClassBits
)

// ftsClasses, by class number.
var ftsClasses = []ftsClass{
	classMessage: {types: []EventType{Message}, weight: 1.0},
	classSummary: {types: []EventType{Summary}, weight: 0.9},
	classCall:    {types: []EventType{ToolCall}, weight: 0.8},
	classOutput:  {types: []EventType{ToolOutput}, weight: 0.6},
	classQuiet:   {types: []EventType{Reasoning, Notice}, weight: 0.8},
	classOther:   {weight: 0.8},
}

// classOf is the class number of events of type t.
func classOf(t EventType) int {
	for i, c := range ftsClasses {
		for _, ct := range c.types {
			if ct == t {
				return i
			}
		}
	}
	return classOther
}

// ftsRowid is the ev_fts rowid of an event's search body, whose length field is ftsLen (ftsLenOf).
func ftsRowid(eventRowid int64, t EventType, ftsLen int) int64 {
	return ftsrank.Rowid(eventRowid, classOf(t), ftsLen, true)
}

// ftsLenOf is the length field of a search body's ev_fts rowid (and of its events row): its length in
// tokens, or ftsrank.LenUnknown.
func ftsLenOf(body string) int {
	n, ok := ftsrank.TokenCount(body)
	if !ok || n > ftsrank.LenUnknown {
		return ftsrank.LenUnknown
	}
	return n
}

// ftsRowidSQL is the SQL twin of ftsRowid for the events row e.
func ftsRowidSQL(e string) string {
	// SQLite's <<, >>, & and | share one precedence, left to right: every shift in parentheses.
	return "((" + e + ".rowid << " + strconv.Itoa(ftsrank.ClassBits+ftsrank.LenBits) + ") | (" + e + ".fts_len << " + strconv.Itoa(ftsrank.ClassBits) + ") | " + classSQL(e) + ")"
}

// classSQL is an SQL expression of the class number of the events row e (the SQL twin of classOf).
func classSQL(e string) string {
	var b strings.Builder
	b.WriteString("(CASE " + e + ".type")
	for i, c := range ftsClasses {
		for _, t := range c.types {
			fmt.Fprintf(&b, " WHEN '%s' THEN %d", t, i)
		}
	}
	fmt.Fprintf(&b, " ELSE %d END)", classOther)
	return b.String()
}

// Index is the local history index: one SQLite database (index.db, mode 0600) in a directory of mode
// 0700. It is safe for use by several goroutines; several processes serialise their writes through
// SQLite's locking.
type Index struct {
	db    *sql.DB
	dir   string
	stmts sync.Map    // SQL text → *sql.Stmt (stmt)
	hits  hitCounts   // per FTS5 query, its phrases' document counts at a generation (Search)
	mmap  int         // the connections' mmap_size (Open, OpenOneShot)
	file  os.FileInfo // index.db as it was when opened (Replaced)
	imp   importLock  // the import lock's hold (LockImport)
	// refused are the remembered refusals of the import running (refused.go), nil outside an import.
	refused refusedNow
}

// mmapSize is the index's PRAGMA mmap_size (bytes) in a long-lived process (an MCP server): searches
// read its pages through the map, the rest through SQLite's page cache (cache_size, 64 MiB), so a
// server's resident pages of the index stay bounded. An import writes with importMmap instead
// (ImportProgress); a one-shot process maps it all (OpenOneShot).
const mmapSize = 256 << 20

// oneShotMmapSize is the mmap_size of an index opened by OpenOneShot: the whole file, up to SQLite's
// own cap (SQLITE_MAX_MMAP_SIZE, 2 GiB less 64 KiB on 64-bit Linux, which also fits a 32-bit int;
// where SQLite's cap is lower, it cuts the value to it). Every
// page a search reads is then one page fault on the map (the kernel maps the cached pages around it
// too), not a pread into a page-cache buffer of fresh memory (bench/README.md "Seventh round").
const oneShotMmapSize = 1<<31 - 1<<16

// indexPageSize is the page size (bytes, PRAGMA page_size) of an index file this ctx creates; an index
// created with another keeps it (SQLite reads it from the file). Larger pages than SQLite's default of
// 4096 make a first import write fewer WAL frames (two system calls each), checkpoint fewer pages and
// split fewer B-tree pages and overflow chains of long event texts (bench/README.md "Thirteenth round",
// branch import13).
const indexPageSize = 16384

// importMmap is the mmap_size of an import's connection (a variable for the benchmarks): 0, its pages
// are read into SQLite's page cache (cache_size, 64 MiB) and not kept mapped.
var importMmap = 0

// Open opens (creating when missing) the index in dir, for a long-lived process (an MCP server): up to
// mmapSize of it is memory-mapped.
func Open(ctx context.Context, dir string) (*Index, error) {
	return open(ctx, dir, mmapSize)
}

// OpenOneShot is Open for a process that runs a few statements and exits (a CLI command): the whole
// index is memory-mapped (up to SQLite's cap), which a search reads with fewer system calls and page
// faults; the mapped pages it touches are released when it exits. An import on such an index still
// writes without the map.
func OpenOneShot(ctx context.Context, dir string) (*Index, error) {
	return open(ctx, dir, oneShotMmapSize)
}

func open(ctx context.Context, dir string, mmap int) (*Index, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open history index: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open history index: %w", err)
	}
	path := filepath.Join(dir, "index.db")
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open history index: %s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open history index: %w", err)
	}
	// The file's identity before SQLite opens it: should the file be replaced in between, Replaced
	// says so at its first call (one reopen too many, never a replaced file read as current).
	file, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("open history index: %w", err)
	}
	if file.Size() == 0 {
		if err := createIndexFile(ctx, path); err != nil {
			return nil, fmt.Errorf("open history index: %w", err)
		}
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(0)&_pragma=cache_size(-65536)&_pragma=mmap_size(" + strconv.Itoa(mmap) + ")&_txlock=immediate"
	db := sql.OpenDB(&ftsrank.Connector{DSN: dsn})
	if err := ensureSchema(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open history index: %w", err)
	}
	return &Index{db: db, dir: dir, mmap: mmap, file: file}, nil
}

// createIndexFile writes the first page of the empty database file at path: indexPageSize pages, WAL
// mode. Its own connection, closed before the index's pool opens the file: a connection whose page size
// changes after its cache_size was set keeps a cache of as many pages as the old size gave (SQLite's
// sqlite3PcacheSetPageSize), four times the bytes at 16 KiB; the pool's connections read the page size
// from the file before their cache_size. Should another process create the file meanwhile, its page size
// stays (SQLite changes it only in an empty database).
func createIndexFile(ctx context.Context, path string) error {
	// The driver runs _journal_mode after the _pragma list: page_size comes first, as it must.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=page_size("+strconv.Itoa(indexPageSize)+")&_journal_mode=WAL")
	if err != nil {
		return fmt.Errorf("create the index file: %w", err)
	}
	defer db.Close()
	// The connection's pragmas (the journal mode's write of the first page) run when it opens.
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("create the index file: %w", err)
	}
	return nil
}

// Replaced reports whether dir/index.db is no longer the file this Index opened: removed, or replaced
// by another file (an index rebuilt by `ctx history import`: removed and imported again, as the import
// does with a damaged one; docs/history.md "A damaged index"). A long-lived reader (an MCP server) asks
// before each use and opens the index again when it was: its open file would go on answering from the
// deleted one. It costs one stat; a file rewritten in place (same inode) is not replaced.
func (ix *Index) Replaced() bool {
	fi, err := os.Stat(filepath.Join(ix.dir, "index.db"))
	return err != nil || !os.SameFile(fi, ix.file)
}

// ensureSchema creates the schema of an index whose PRAGMA user_version is not schemaVersion (a new
// index, or one an older ctx built: its tables are dropped first and its generation bumped, so the next
// import rebuilds it and cursors of the old one go stale). An index at schemaVersion costs one read here.
// A version above schemaVersion (a newer ctx) is an error.
func ensureSchema(ctx context.Context, db *sql.DB) error {
	version := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (int, error) {
		var v int
		err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
		return v, err
	}
	v, err := version(db)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v == schemaVersion {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	if v, err = version(tx); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case v == schemaVersion: // another process created it meanwhile
		return nil
	case v > schemaVersion:
		return fmt.Errorf("%w (schema %d, this ctx reads %d)", ErrNewerIndex, v, schemaVersion)
	case v == 5 || v == 6:
		if err := addStatColumns(ctx, tx); err != nil {
			return err
		}
	}
	switch {
	case v == 5:
		// Version 6 adds the map from event to root group, built from the rows, which stay (the generation
		// too: the same events and hits), and sources_session and conflicts (schema's CREATE ... IF NOT
		// EXISTS). A session of several files is numbered once across them by its next write: its sources
		// are marked to be read again (parser_rev 0, as rereadOthers does) by the next import.
		// Built anew: a map already there (a version 6 index marked 5 by hand) is dropped first.
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS ev_group; DROP TABLE IF EXISTS ev_roots;`+schema+groupSchema+migrateGroups+
			`UPDATE sources SET parser_rev = 0 WHERE session_id IN (SELECT session_id FROM sources WHERE session_id <> '' GROUP BY session_id HAVING count(*) > 1);`); err != nil {
			return fmt.Errorf("build the event groups: %w", err)
		}
	case v < 5:
		for _, t := range oldTables {
			if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+t); err != nil {
				return fmt.Errorf("drop old table %s: %w", t, err)
			}
		}
		if _, err := tx.ExecContext(ctx, schema+schemaAdded+ftsSchema+groupSchema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) SELECT 'generation', '1' WHERE EXISTS (SELECT 1 FROM meta WHERE key='generation')
		ON CONFLICT(key) DO UPDATE SET value = `+nextGenerationSQL, time.Now().UnixMilli()); err != nil {
			return fmt.Errorf("bump generation: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return nil
}

// addStatColumns brings the sources of a version 5 or 6 index to version 7 in tx: the columns ctime and ino
// (0: the next look at the file records them) and sources_stamp with them. A table that has them already
// (an index marked older by hand) keeps them.
func addStatColumns(ctx context.Context, tx *sql.Tx) error {
	for _, col := range []string{"ctime", "ino"} {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('sources') WHERE name = ?`, col).Scan(&n); err != nil {
			return fmt.Errorf("add sources.%s: %w", col, err)
		}
		if n > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `ALTER TABLE sources ADD COLUMN `+col+` INTEGER NOT NULL DEFAULT 0`); err != nil {
			return fmt.Errorf("add sources.%s: %w", col, err)
		}
	}
	if _, err := tx.ExecContext(ctx, migrateStat); err != nil {
		return fmt.Errorf("index sources' stat: %w", err)
	}
	return nil
}

// Close closes the database.
func (ix *Index) Close() error {
	ix.stmts.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	return ix.db.Close()
}

// Dir is the index directory.
func (ix *Index) Dir() string { return ix.dir }

// Generation is the index's generation: moved by every import that changed the index (0 for an empty
// index), to at least the time of that import in Unix milliseconds (bumpGeneration), so it never goes
// back, not even across an index removed and rebuilt: a cursor of an earlier index is stale.
//
// The generations of one index are increasing and those of a rebuilt index are above its
// predecessor's, as long as the clock does not go back and the predecessor did not change more than
// once per millisecond on average since the clock passed its first generation.
func (ix *Index) Generation(ctx context.Context) (int64, error) {
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='generation'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read generation: %w", err)
	}
	return strconv.ParseInt(v, 10, 64)
}

// nextGenerationSQL is the next generation of the meta row being updated (value), given the time of the
// change in Unix milliseconds as the statement's first parameter: one more than the last, and at least
// that time. Generations of a new index thus start at the time of its first change, above those of an
// index it replaces (Generation).
const nextGenerationSQL = `CAST(max(CAST(value AS INTEGER) + 1, ?1) AS TEXT)`

// bumpGeneration moves the generation (Generation) in the transaction tx.
func bumpGeneration(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('generation', CAST(?1 AS TEXT))
		ON CONFLICT(key) DO UPDATE SET value = `+nextGenerationSQL, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("bump generation: %w", err)
	}
	return nil
}

// SourceResult is what importing one source did.
type SourceResult struct {
	Source    Source         `json:"source"`
	SessionID string         `json:"ctx_session_id,omitempty"`
	Action    string         `json:"action"` // "unchanged", "appended", "imported", "failed", "foreign"
	Events    int            `json:"events"` // events added
	Unknown   map[string]int `json:"unknown,omitempty"`
	Skipped   int            `json:"skipped"`
	BadLines  int            `json:"bad_lines"`
	Errors    []string       `json:"errors,omitempty"`
	Truncated bool           `json:"truncated,omitempty"` // the source was read only up to a limit (docs/limits.md)
	Err       string         `json:"error,omitempty"`     // set when Action is "failed"
	// Conflicts counts the source's records that another file of the session holds with other content:
	// the index keeps the content it had (docs/history.md "A session of several files").
	Conflicts int `json:"conflicts,omitempty"`

	// refused is set when the source is refused as a decompression bomb, now or as remembered
	// (refused.go): the import remembers it.
	refused *refusal
}

// An import writes parsed sources in transactions of at most this many sources or bytes of text: each
// transaction is atomic (an interrupted import leaves every source as it was before it or fully written).
// (Variables for the tests.)
var (
	batchMaxSources = 512
	batchMaxBytes   = 32 << 20
)

// testHookPrepared, when set (by the tests), is called by ImportProgress after a source is parsed, before
// it is written.
var testHookPrepared func()

// testHookWritten, when set (by the tests), is called inside writeBatch's transaction after each source
// is written.
var testHookWritten func()

// ImportStats sums an Import.
type ImportStats struct {
	Sources   int `json:"sources"`
	Unchanged int `json:"unchanged"`
	Appended  int `json:"appended"`
	Imported  int `json:"imported"`
	Failed    int `json:"failed"`
	// Foreign counts the files of a root the user named that hold no record of the provider's format,
	// only unknown records or bad lines: not imported (no session is made of them).
	Foreign   int            `json:"foreign"`
	Removed   int            `json:"removed"`   // sources whose files are gone, forgotten (PruneMissing)
	Truncated int            `json:"truncated"` // sources read only up to a limit (docs/limits.md)
	Reread    int            `json:"reread"`    // sources read again whole: another file of their session lost records they hold
	Conflicts int            `json:"conflicts"` // records another file of their session holds with other content (kept as indexed)
	Events    int            `json:"events"`
	BadLines  int            `json:"bad_lines"`
	Unknown   map[string]int `json:"unknown"`
	Results   []SourceResult `json:"results"`
	// DiscoveryErrors are the roots whose walk failed (set by the command that discovered the sources):
	// their new or grown sources were not imported.
	DiscoveryErrors []DiscoveryError `json:"discovery_errors,omitempty"`
}

// Import imports every source. A source that fails (unreadable, not the format it claims) is reported
// in its result and does not stop the others; the error is only for the index itself or ctx.
func (ix *Index) Import(ctx context.Context, srcs []Source) (ImportStats, error) {
	return ix.ImportProgress(ctx, srcs, nil)
}

// ImportProgress is Import calling progress (when not nil) after each source with the number of sources
// done and the total.
func (ix *Index) ImportProgress(ctx context.Context, srcs []Source, progress func(done, total int)) (ImportStats, error) {
	st := ImportStats{Unknown: map[string]int{}}
	refused, done, err := ix.startImport(ctx)
	if err != nil {
		return st, err
	}
	defer done()
	changed := false
	reread := map[string]bool{} // the keys of sources to read again (writer.reread)
	results := make([]SourceResult, len(srcs))
	var known []*sourceRow            // by source, when read in bulk
	todo := make([]int, 0, len(srcs)) // the sources to read: all but the append-only logs lstat finds unchanged
	repack := false                   // pack the source snapshot after the import (snapshot.go)
	if len(srcs) >= bulkStateMin {
		var err error
		if known, repack, err = ix.loadKnown(ctx, srcs); err != nil {
			return st, err
		}
		same := statUnchanged(ctx, srcs, known)
		for i, s := range srcs {
			if same[i] {
				results[i] = SourceResult{Source: s, Action: "unchanged", SessionID: known[i].sessionID}
			} else {
				todo = append(todo, i)
			}
		}
		if progress != nil && len(todo) < len(srcs) {
			progress(len(srcs)-len(todo), len(srcs))
		}
	} else {
		for i := range srcs {
			todo = append(todo, i)
		}
	}
	sub := make([]Source, len(todo))
	var subKnown []*sourceRow
	if known != nil {
		subKnown = make([]*sourceRow, len(todo))
	}
	for j, i := range todo {
		sub[j] = srcs[i]
		if known != nil {
			subKnown[j] = known[i]
		}
	}
	// first: the index holds no event, so this import ends with a merge of its whole full-text index
	// (mergeFTS) and its transactions write with a first import's FTS5 merge policy (setFTSConfig).
	first := false
	if len(todo) > 0 && firstImportPolicy {
		if err := ix.db.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM events)`).Scan(&first); err != nil {
			return st, fmt.Errorf("import: %w", err)
		}
	}
	next, stop := ix.prepareAhead(ctx, sub, subKnown)
	defer stop()
	// The import's transactions run on one connection that reads the index without the memory map
	// (importMmap): the pages of the B-trees and FTS5 segments it reads would otherwise stay mapped in
	// the process, up to its mmap_size, and its peak RSS grow with the index (bench/README.md "Fourth round").
	var conn *sql.Conn
	defer func() {
		if conn != nil {
			conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA mmap_size=%d`, ix.mmap)) //nolint:errcheck // the pool's other connections keep theirs; this one is closed on failure
			conn.Close()
		}
	}()
	// Each parsed source is written as soon as it is ready, into a transaction left open until it holds
	// batchMaxSources sources or batchMaxBytes of text: the parsed events are not kept once written.
	var tx *batchTx
	defer func() {
		if tx != nil {
			tx.rollback()
		}
	}()
	for j, i := range todo {
		r, p, err := next(j)
		if err != nil {
			return st, err
		}
		results[i] = r
		if p != nil && testHookPrepared != nil {
			testHookPrepared()
		}
		if p != nil {
			if conn == nil {
				if conn, err = ix.db.Conn(ctx); err != nil {
					return st, fmt.Errorf("import: %w", err)
				}
				if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA mmap_size=%d`, importMmap)); err != nil {
					return st, fmt.Errorf("import: %w", err)
				}
			}
			if tx == nil {
				if tx, err = ix.beginBatch(ctx, conn, first); err != nil {
					return st, err
				}
			}
			if err := tx.write(ctx, p, &results[i]); err != nil {
				return st, err
			}
			if tx.bytes >= batchMaxBytes || tx.sources >= batchMaxSources {
				err := tx.commit(ctx)
				maps.Copy(reread, tx.w.reread)
				tx = nil
				if err != nil {
					return st, err
				}
			}
		}
		if progress != nil {
			progress(len(srcs)-len(todo)+j+1, len(srcs))
		}
	}
	if tx != nil {
		err := tx.commit(ctx)
		maps.Copy(reread, tx.w.reread)
		tx = nil
		if err != nil {
			return st, err
		}
	}
	// The sources of sessions that lost records another of their files holds (writer.rereadOthers) are
	// read again whole, after the others (one of them may come later in srcs).
	if len(reread) > 0 {
		if err := ix.reread(ctx, srcs, results, reread, &st); err != nil {
			return st, err
		}
	}
	if first && conn != nil {
		have, err := ftsConfig(ctx, conn)
		if err == nil {
			err = restoreFTSMerge(ctx, conn, have)
		}
		if err != nil {
			return st, fmt.Errorf("import: %w", err)
		}
	}
	if err := ix.saveRefused(ctx, refused, results); err != nil {
		return st, err
	}
	st.Results = results
	for _, r := range results {
		st.Sources++
		switch r.Action {
		case "unchanged":
			st.Unchanged++
		case "appended":
			st.Appended++
			changed = true
		case "imported":
			st.Imported++
			changed = true
		case "failed":
			st.Failed++
		case "foreign":
			st.Foreign++
		}
		st.Events += r.Events
		st.Conflicts += r.Conflicts
		st.BadLines += r.BadLines
		if r.Truncated {
			st.Truncated++
		}
		for k, v := range r.Unknown {
			st.Unknown[k] += v
		}
	}
	if changed {
		if err := ix.relink(ctx); err != nil {
			return st, err
		}
		var err error
		if conn != nil {
			err = ix.mergeFTS(ctx, conn, st.Events)
		} else {
			err = ix.mergeFTS(ctx, ix.db, st.Events)
		}
		if err != nil {
			return st, err
		}
	}
	if known != nil && (repack || conn != nil) {
		// The snapshot is a cache: when it cannot be packed, the next refresh reads sources.
		if repack || ix.snapshotStale(ctx, len(srcs)) {
			if conn != nil {
				packSnapshot(ctx, conn) //nolint:errcheck // see above
			} else {
				packSnapshot(ctx, ix.db) //nolint:errcheck // see above
			}
		}
	}
	return st, nil
}

// mergeShare: an import that added at least 1/mergeShare of the index's events merges the full-text
// index's segments into one (mergeFTS).
const mergeShare = 4

// mergeFTS merges ev_fts's segments into one (FTS5's 'optimize') when the import that added added events
// made at least 1/mergeShare of the index (a first import always). A search's lookup of a word descends
// the B-tree of every segment: a first import of 300,000 events leaves some twenty, and a process that
// searches once faults in the pages of each (bench/README.md "Tenth round", branch search10). Merging
// rewrites the whole full-text index, so it is done only when the import was a large share of it (its
// cost is then a fraction of the import's); between merges FTS5's automerge keeps the count low. The
// rows, their ids and every score stay as they were.
func (ix *Index) mergeFTS(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, added int) error {
	if added <= 0 {
		return nil
	}
	var last int64
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) FROM events`).Scan(&last); err != nil {
		return fmt.Errorf("merge the full-text index: %w", err)
	}
	if int64(added)*mergeShare < last {
		return nil
	}
	return optimizeFTS(ctx, db)
}

// optimizeFTS merges ev_fts's segments into one (FTS5's 'optimize'): mergeFTS, and finishFirstImport.
func optimizeFTS(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}) error {
	if _, err := db.ExecContext(ctx, `INSERT INTO ev_fts(ev_fts) VALUES('optimize')`); err != nil {
		return fmt.Errorf("merge the full-text index: %w", err)
	}
	return nil
}

// finishFirstImport ends a first import killed or canceled after it wrote events but before its end
// (under the import lock): ev_fts still records the first import's merge policy (automerge 0, see
// setFTSConfig), which only a first import sets and its end restores. The default policy is restored and
// the full-text index merged into one segment, as the first import's end would have, even when the
// import that starts has nothing to write (docs/history.md "Incremental import"). An empty index is left alone:
// its next import is a first one.
func (ix *Index) finishFirstImport(ctx context.Context) error {
	have, err := ftsConfig(ctx, ix.db)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if a, ok := have["automerge"]; !ok || a != 0 {
		return nil
	}
	var empty bool
	if err := ix.db.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM events)`).Scan(&empty); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if empty {
		return nil
	}
	if err := restoreFTSMerge(ctx, ix.db, have); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if err := optimizeFTS(ctx, ix.db); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// reread imports again the sources of srcs whose keys are in keys (their recorded state was reset by
// writer.rereadOthers, so each is read whole), in one transaction, and updates their results: the events
// added by both reads, the second's conflicts. A source of keys not in srcs is read by the next import
// that has it.
func (ix *Index) reread(ctx context.Context, srcs []Source, results []SourceResult, keys map[string]bool, st *ImportStats) error {
	var (
		batch []*pending
		res   []*SourceResult
		again []int // the indices in srcs read again
		added []int // the events their first read added
	)
	for i := range srcs {
		if !keys[srcs[i].key()] || results[i].Action == "failed" {
			continue
		}
		r, p, err := ix.prepare(ctx, srcs[i])
		if err != nil {
			return err
		}
		again, added = append(again, i), append(added, results[i].Events)
		results[i] = r
		if p != nil {
			batch = append(batch, p)
			res = append(res, &results[i])
		}
	}
	if err := ix.writeBatch(ctx, batch, res); err != nil {
		return err
	}
	for k, i := range again {
		results[i].Events += added[k]
	}
	st.Reread += len(again)
	return nil
}

// loadKnown is loadSources from the source snapshot when there is a valid one (snapshot.go); repack
// says it is missing or holds too many changed rows.
func (ix *Index) loadKnown(ctx context.Context, srcs []Source) (known []*sourceRow, repack bool, err error) {
	if data, dirty, ok := ix.readSnapshot(ctx); ok {
		keys, order := sortedKeys(srcs)
		if known, ok := loadSnapshot(data, dirty, keys, order); ok {
			return known, len(dirty) > snapRepackLimit(len(srcs)), nil
		}
	}
	known, err = ix.loadSources(ctx, srcs)
	return known, true, err
}

// snapRepackLimit is the number of rows changed since the snapshot was packed above which an import of
// n sources packs it again.
func snapRepackLimit(n int) int { return max(snapRepackMin, n/16) }

// snapshotStale reports whether more rows changed since the snapshot was packed than an import of n
// sources tolerates (an error counts as stale).
func (ix *Index) snapshotStale(ctx context.Context, n int) bool {
	var dirty int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sources_dirty`).Scan(&dirty); err != nil {
		return true
	}
	return dirty > snapRepackLimit(n)
}

// prepareAhead reads and parses the sources on up to GOMAXPROCS goroutines while the caller writes
// (SQLite takes one writer): next(i) returns source i's prepare, in order (from known[i], source i's
// recorded state, when known is not nil). At most prepareLookahead
// parsed sources wait in memory. The caller calls next for i = 0, 1, … in order, then stop (which ends
// the goroutines when the caller stopped early).
func (ix *Index) prepareAhead(ctx context.Context, srcs []Source, known []*sourceRow) (next func(i int) (SourceResult, *pending, error), stop func()) {
	type prepared struct {
		r   SourceResult
		p   *pending
		err error
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	slots := make([]chan prepared, len(srcs))
	for i := range slots {
		slots[i] = make(chan prepared, 1)
	}
	sem := make(chan struct{}, prepareLookahead)
	done := make(chan struct{})
	work := make(chan int)
	go func() {
		defer close(work)
		for i := range srcs {
			select {
			case sem <- struct{}{}:
			case <-done:
				return
			}
			select {
			case work <- i:
			case <-done:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range work {
				var (
					r   SourceResult
					p   *pending
					err error
				)
				if known != nil {
					prev := known[i]
					if prev != nil && prev.partial {
						prev, err = ix.loadSource(ctx, srcs[i].key())
					}
					if err == nil {
						r, p, err = ix.prepareFrom(ctx, srcs[i], prev)
					}
				} else {
					r, p, err = ix.prepare(ctx, srcs[i])
				}
				slots[i] <- prepared{r, p, err}
			}
		})
	}
	var once sync.Once
	stop = func() {
		once.Do(func() { close(done) })
		wg.Wait() // no prepare outlives the import
	}
	next = func(i int) (SourceResult, *pending, error) {
		v := <-slots[i]
		<-sem
		return v.r, v.p, v.err
	}
	return next, stop
}

// bulkStateMin is the number of sources from which an import reads every source's state in one query
// (a variable for the tests).
var bulkStateMin = 64

// prepareLookahead bounds the parsed sources waiting to be written (memory: docs/history.md).
const prepareLookahead = 4

type sourceRow struct {
	format, fingerprint, contentHash, checkHash, state, sessionID string
	rev, size, mtime, offset                                      int64
	// ctime and ino are the file's ctime (Unix nanoseconds) and inode when it was recorded (Linux; 0
	// elsewhere, and in a row an index of schema 6 recorded).
	ctime, ino int64
	// partial: only format, rev, size, mtime, ctime, ino, offset and sessionID were read (loadSources);
	// loadSource reads the rest.
	partial bool
}

// statUnchanged reports, per source, whether it is an append-only log that lstat finds as it was
// recorded in known[i] (same parser, format, size, mtime, ctime and inode): what prepareFrom would call unchanged after
// opening it, found with one system call and without the parsing goroutines (a refresh of 20,000
// sources: bench/README.md). Anything else (not recorded, changed, not a regular file, another format)
// is false and goes through prepareFrom.
func statUnchanged(ctx context.Context, srcs []Source, known []*sourceRow) []bool {
	same := make([]bool, len(srcs))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(srcs)/1024))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// A contiguous share of the sources: discovery lists a directory's files together, so the
			// statter resolves each directory once for them.
			var st statter
			defer st.close()
			for i := w * len(srcs) / workers; i < (w+1)*len(srcs)/workers; i++ {
				if i&1023 == 0 && ctx.Err() != nil {
					return
				}
				s := srcs[i]
				prev := known[i]
				if prev == nil || !appendOnly(s.Format) || prev.rev != parserRev || prev.format != s.Format {
					continue
				}
				fs := s.stat
				if !fs.known || s.Session != "" {
					fs = st.lstat(s.Path)
				}
				same[i] = fs.ok && fs.regular && prev.sameStat(fs)
			}
		})
	}
	wg.Wait()
	return same
}

// sameStat reports whether fs is the stat r recorded: size, mtime, ctime and inode, as git's index tells
// an unchanged file (docs/history.md "Incremental import"). A write that keeps the size and sets the
// mtime back (touch -r) still moves the ctime, which no program sets; a file replaced by a rename
// has another inode.
func (r *sourceRow) sameStat(fs fileStat) bool {
	return fs.size == r.size && fs.mtime == r.mtime && fs.ctime == r.ctime && fs.ino == r.ino
}

func (ix *Index) loadSource(ctx context.Context, path string) (*sourceRow, error) {
	var r sourceRow
	err := ix.db.QueryRowContext(ctx, `SELECT format, parser_rev, size, mtime, ctime, ino, fingerprint, content_hash, offset, check_hash, state, session_id FROM sources WHERE path=?`, path).
		Scan(&r.format, &r.rev, &r.size, &r.mtime, &r.ctime, &r.ino, &r.fingerprint, &r.contentHash, &r.offset, &r.checkHash, &r.state, &r.sessionID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read source state: %w", err)
	}
	return &r, nil
}

// ImportSource imports one source incrementally (docs/history.md "Incremental import"): unchanged size
// and mtime is a no-op; an append-only log that only grew is parsed from its last offset; anything else
// is parsed whole and replaces the session's events. Each source is written in one transaction.
func (ix *Index) ImportSource(ctx context.Context, src Source) (SourceResult, error) {
	refused, done, err := ix.startImport(ctx)
	if err != nil {
		return SourceResult{Source: src}, err
	}
	defer done()
	res, p, err := ix.prepare(ctx, src)
	if err == nil {
		err = ix.saveRefused(ctx, refused, []SourceResult{res})
	}
	if err != nil || p == nil {
		return res, err
	}
	if err := ix.writeBatch(ctx, []*pending{p}, []*SourceResult{&res}); err != nil {
		return res, err
	}
	return res, ix.relink(ctx)
}

// prepare reads and parses a source. It returns a nil pending when there is nothing to write (the source
// is unchanged, or failed: see the result).
func (ix *Index) prepare(ctx context.Context, src Source) (SourceResult, *pending, error) {
	prev, err := ix.loadSource(ctx, src.key())
	if err != nil {
		return SourceResult{Source: src}, nil, err
	}
	return ix.prepareFrom(ctx, src, prev)
}

// loadSources reads the recorded state of the sources srcs in one query (an import of many sources
// asks once instead of once per source): out[i] is srcs[i]'s, nil when it was never imported. The rows
// come in key order (the covering index sources_stamp) and are matched with the sources sorted by key,
// so a row of a source not in srcs costs no allocation and no map is built (a refresh of 20,000 sources:
// bench/README.md "Fourth round").
func (ix *Index) loadSources(ctx context.Context, srcs []Source) ([]*sourceRow, error) {
	keys, order := sortedKeys(srcs)
	out := make([]*sourceRow, len(srcs))
	// The columns that tell an unchanged source; the parser state and hashes of the others are read
	// when they are prepared (a refresh reads 20,000 rows and needs none of them).
	rows, err := ix.db.QueryContext(ctx, `SELECT path, format, parser_rev, size, mtime, ctime, ino, offset, session_id FROM sources ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("read source state: %w", err)
	}
	defer rows.Close()
	var (
		key, format, session                 sql.RawBytes // reused: a row is copied only when it is a source's
		rev, size, mtime, ctime, ino, offset int64
	)
	j := 0 // the first of order whose key is not below the rows read
	for j < len(order) && rows.Next() {
		if err := rows.Scan(&key, &format, &rev, &size, &mtime, &ctime, &ino, &offset, &session); err != nil {
			return nil, fmt.Errorf("read source state: %w", err)
		}
		for j < len(order) && keys[order[j]] < string(key) {
			j++
		}
		if j == len(order) || keys[order[j]] != string(key) {
			continue
		}
		r := sourceRow{partial: true, format: string(format), rev: rev, size: size, mtime: mtime, ctime: ctime, ino: ino, offset: offset, sessionID: string(session)}
		for ; j < len(order) && keys[order[j]] == string(key); j++ {
			cp := r
			out[order[j]] = &cp
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read source state: %w", err)
	}
	return out, nil
}

// prepareFrom is prepare with the source's recorded state already read (nil: never imported). prev is
// not modified.
func (ix *Index) prepareFrom(ctx context.Context, src Source, prev *sourceRow) (SourceResult, *pending, error) {
	res := SourceResult{Source: src}
	seen := prev // the recorded state as read (prev is copied below before it is changed)
	fail := func(err error) (SourceResult, *pending, error) {
		if ctx.Err() != nil {
			return res, nil, ctx.Err()
		}
		res.Action, res.Err = "failed", err.Error()
		return res, nil, nil
	}
	if prev != nil {
		cp := *prev
		prev = &cp
	}
	// A file the index holds as another provider's source (a --path given the wrong --provider) is not
	// read as src.Provider's: its recorded session keeps its events, whatever the other parser would make
	// of it (Claude Code's JSONL read as gemini-cli or cursor gives events).
	if held := heldAsOther(src, prev); held != "" {
		res.Action, res.Err = "foreign", fmt.Sprintf("held as %s's session %s, not read as %s's", held, prev.sessionID, src.Provider)
		return res, nil, nil
	}
	var err error
	reset := prev != nil && (prev.rev != parserRev || prev.format != src.Format)
	if reset {
		prev.offset, prev.fingerprint, prev.contentHash = 0, "", "" // forces a whole re-import
	}
	var (
		pr          *parseResult
		st          parseState
		appended    bool
		size, mtime int64
		fs          fileStat // the source file's stat (an append-only log's)
		fingerprint string
		contentHash string
		checkHash   string
	)
	if appendOnly(src.Format) {
		f, fi, err := openRegular(src.Path)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		fs = statOf(fi)
		size, mtime = fs.size, fs.mtime
		// Unchanged also when nothing of it was consumed (an empty file, or a first line not yet whole):
		// its stat is recorded as well, and it is not read again until it moves.
		if prev != nil && !reset && prev.sameStat(fs) {
			res.Action, res.SessionID = "unchanged", prev.sessionID
			return res, nil, nil
		}
		start := int64(0)
		if prev != nil && prev.offset > 0 && size >= prev.offset {
			if h, err := checkPrefix(f, prev.offset); err == nil && h == prev.checkHash {
				if unmarshal([]byte(prev.state), &st) == nil {
					start, appended = prev.offset, true
				}
			}
		}
		if !appended {
			st = parseState{}
		}
		cut := size > maxJSONLBytes
		parse := func() error {
			st.File = sourceName(src)
			if _, err := f.Seek(start, io.SeekStart); err != nil {
				return fmt.Errorf("seek %s: %w", src.Path, err)
			}
			st.ParentNative = firstNonEmpty(st.ParentNative, src.ParentNative)
			var rd io.Reader = f
			if cut {
				// Read up to the bound only (docs/limits.md): the rest is not imported.
				rd = io.LimitReader(f, max(0, maxJSONLBytes-start))
			}
			pr, err = parseJSONL(ctx, rd, start, &st, lineParserFor(src.Format))
			return err
		}
		kept := st.NativeID
		if err := parse(); err != nil {
			return fail(err)
		}
		if appended && src.Provider == ClaudeCode && kept != boundNativeID(claudeNativeID(src, &st)) {
			// The appended lines name the parent of a sibling subagent file whose first lines did not: its
			// session is another, read whole into it.
			st, start, appended = parseState{}, 0, false
			if err := parse(); err != nil {
				return fail(err)
			}
		}
		if cut {
			pr.Truncated = true
			pr.Errors = append(pr.Errors, fmt.Sprintf("%d bytes, more than the limit of %d MiB of one transcript file: the rest is not imported (docs/limits.md)",
				size, maxJSONLBytes>>20))
		}
		if appended && pr.Offset == start && len(pr.Events) == 0 {
			// Same bytes (only touched) or nothing complete yet: record the new stat only (by the writer: a
			// parsing goroutine does not write while the import's transaction is open).
			res.Action, res.SessionID = "unchanged", prev.sessionID
			return res, &pending{src: src, seen: seen, touch: true, size: size, mtime: mtime, ctime: fs.ctime, ino: fs.ino, fingerprint: prev.fingerprint}, nil
		}
		if checkHash, err = checkPrefix(f, pr.Offset); err != nil {
			return fail(err)
		}
	} else if src.Format == FormatOpenCodeDB {
		if src.Session == "" {
			if src.listErr != "" { // discovery could not list its sessions: say why
				return fail(errors.New(src.listErr))
			}
			if _, err := openCodeDBSessions(ctx, src.Path); err != nil {
				return fail(err)
			}
			return fail(fmt.Errorf("%s: an OpenCode database source needs a session", src.Path))
		}
		bctx, cancel, explain := boundDB(ctx, src.Path)
		defer cancel()
		db, err := openProviderDB(bctx, src.Path)
		if err != nil {
			return fail(explain(err))
		}
		defer db.Close()
		if fingerprint, err = openCodeDBFingerprint(bctx, db, src.Session); err != nil {
			return fail(explain(db.changedOr(err)))
		}
		if fi, err := os.Stat(src.Path); err == nil {
			size, mtime = fi.Size(), fi.ModTime().UnixNano()
		}
		if prev != nil && prev.fingerprint == fingerprint {
			res.Action, res.SessionID = "unchanged", prev.sessionID
			return res, nil, nil
		}
		contentHash = fingerprint
		if pr, err = parseOpenCodeDB(bctx, db, src.Session, &st); err != nil {
			return fail(explain(db.changedOr(err)))
		}
		if err := db.unchanged(); err != nil {
			return fail(err)
		}
	} else {
		files := []string{src.Path}
		if src.Format == FormatOpenCode {
			if files, err = openCodeFiles(ctx, src.Path); err != nil {
				return fail(err)
			}
		}
		fingerprint, size, mtime, err = fingerprintFiles(files)
		if err != nil {
			return fail(err)
		}
		if prev != nil && prev.fingerprint == fingerprint {
			res.Action, res.SessionID = "unchanged", prev.sessionID
			return res, nil, nil
		}
		if r, ok := ix.refusedAs(src.key(), fingerprint); ok {
			// Refused before and unchanged since: not read again (refused.go).
			res.refused = &r
			return fail(fmt.Errorf("%s (unchanged since it was refused on %s: not read again)", r.Err, time.UnixMilli(r.At).UTC().Format(time.RFC3339)))
		}
		if contentHash, err = hashFiles(files); err != nil {
			return fail(err)
		}
		if prev != nil && prev.contentHash == contentHash {
			res.Action, res.SessionID = "unchanged", prev.sessionID
			return res, &pending{src: src, seen: seen, touch: true, size: size, mtime: mtime, fingerprint: fingerprint}, nil
		}
		st.ParentNative, st.File = src.ParentNative, sourceName(src)
		if pr, err = parseWhole(ctx, src, &st); err != nil {
			if errors.Is(err, errZstdRatio) {
				res.refused = &refusal{Fingerprint: fingerprint, Err: err.Error()}
			}
			return fail(err)
		}
	}
	if foreign(src, prev, appended, size, pr) {
		res.Action, res.Err = "foreign", fmt.Sprintf("holds no %s records (%s)", src.Provider, pr.summary())
		return res, nil, nil
	}
	if src.Provider == ClaudeCode {
		st.NativeID = claudeNativeID(src, &st)
	}
	if st.NativeID == "" {
		st.NativeID = nativeFromPath(src)
	}
	if st.NativeID == "" {
		return fail(fmt.Errorf("%s: no session id in the file or its name", src.Path))
	}
	// An over-long id is kept as its head and hash.
	st.NativeID, st.ParentNative, st.RecordSession = boundNativeID(st.NativeID), boundNativeID(st.ParentNative), boundNativeID(st.RecordSession)
	res.Unknown, res.Skipped, res.BadLines, res.Errors, res.Truncated = pr.Unknown, pr.Skipped, pr.BadLines, pr.Errors, pr.Truncated
	sessionID := SessionID(src.Provider, st.NativeID)
	res.SessionID = sessionID
	if len(res.Unknown) == 0 {
		res.Unknown = nil
	}
	stateJSON, err := json.Marshal(st)
	if err != nil {
		return res, nil, fmt.Errorf("encode parser state: %w", err)
	}
	unknownJSON, _ := json.Marshal(pr.Unknown)
	encoded := make([]encodedEvent, len(pr.Events))
	for i := range pr.Events {
		encoded[i] = encodeEvent(&pr.Events[i])
	}

	return res, &pending{src: src, prev: prev, seen: seen, appended: appended, sessionID: sessionID, st: st, pr: pr,
		size: size, mtime: mtime, ctime: fs.ctime, ino: fs.ino, fingerprint: fingerprint, contentHash: contentHash, checkHash: checkHash,
		stateJSON: string(stateJSON), unknownJSON: string(unknownJSON), encoded: encoded}, nil
}

// foreign says that src, a file of a root the user named that the index does not hold yet, read whole
// (size bytes; pr: its parse), is not of its provider's format: nothing in it was a record the parser
// knows (no event, nothing skipped as a known record). Another provider's files parse so (their records
// unknown, or JSON without the fields the parser reads). An empty file is not foreign (a session just
// started); a file of the provider's format with no event yet is read again by the next import.
// (A file the index holds as another provider's source is foreign before it is read: heldAsOther.)
func foreign(src Source, prev *sourceRow, appended bool, size int64, pr *parseResult) bool {
	return src.explicit && prev == nil && !appended && size > 0 && len(pr.Events) == 0 && pr.Skipped == 0
}

// heldAsOther is the provider whose source the index holds src's file as (prev: its row), when src, under
// a root the user named, is another provider's; "" otherwise.
func heldAsOther(src Source, prev *sourceRow) Provider {
	if !src.explicit || prev == nil {
		return ""
	}
	if held := formatProvider(prev.format); held != "" && held != src.Provider {
		return held
	}
	return ""
}

// summary is what a parse found that is not an event: its unknown records and bad lines.
func (pr *parseResult) summary() string {
	n := 0
	for _, v := range pr.Unknown {
		n += v
	}
	return fmt.Sprintf("no event; %d records of unknown types, %d bad lines", n, pr.BadLines)
}

// pending is a parsed source waiting to be written, or (touch) an unchanged source whose recorded size,
// mtime and fingerprint move.
type pending struct {
	touch                                                       bool
	src                                                         Source
	prev                                                        *sourceRow
	seen                                                        *sourceRow // the recorded state the parse started from (writer.moved)
	appended                                                    bool
	sessionID                                                   string
	st                                                          parseState
	pr                                                          *parseResult
	size, mtime, ctime, ino                                     int64 // ctime and ino: an append-only log's (sourceRow)
	fingerprint, contentHash, checkHash, stateJSON, unknownJSON string
	encoded                                                     []encodedEvent // of pr.Events, in order
}

func (p *pending) textBytes() int {
	n := 0
	for _, e := range p.pr.Events {
		n += len(e.Text) + 256
		if e.Tool != nil {
			n += len(e.Tool.Input) + len(e.Tool.Output)
		}
	}
	for _, e := range p.encoded {
		n += len(e.tool) + len(e.files) + len(e.facts) + len(e.body)
	}
	return n
}

// writeBatch writes parsed sources in one transaction (all or none) and sets each result's event count
// and action.
func (ix *Index) writeBatch(ctx context.Context, batch []*pending, results []*SourceResult) error {
	if len(batch) == 0 {
		return nil
	}
	tx, err := ix.beginBatch(ctx, ix.db, false)
	if err != nil {
		return err
	}
	for i, p := range batch {
		if err := tx.write(ctx, p, results[i]); err != nil {
			tx.rollback()
			return err
		}
	}
	return tx.commit(ctx)
}

// ftsHashSize is FTS5's hashsize for ev_fts (bytes): how much of a transaction's postings it keeps in
// memory before writing them as a segment (FTS5's default is 1 MiB). Each flush writes one segment, which
// FTS5 then merges with others: with 1 MiB a 30k-event import flushed dozens of segments and spent a
// quarter of its FTS5 time writing and merging them (bench/README.md "Third round"). Writing also
// flushes at each commit, so a transaction's text (batchMaxBytes) bounds what is held as well.
const ftsHashSize = 8 << 20

// FTS5's merge policy (https://sqlite.org/fts5.html "The 'automerge' Configuration Option", "The
// 'crisismerge' Configuration Option"). Outside a first import ev_fts keeps FTS5's defaults
// (ftsAutomerge, ftsCrisismerge): each flush of a transaction's postings writes a segment, and FTS5
// merges them as they pile up. A first import (an empty index) merges its whole full-text index into one
// segment at its end anyway (mergeFTS), so merging its segments while it writes them is work the final
// merge does again: it writes with automerge off and FTS5's crisis merge at ftsFirstCrisismerge
// segments of a level (which bounds what a search during the import walks), and the default policy is
// restored before the final merge, or, when an import was killed before its end, by the start of the
// next import (finishFirstImport) and the first transaction of any later write. The rows, their ids and every score stay as they were (bench/README.md
// "Thirteenth round", branch import13).
// firstImportPolicy: a first import writes with its own FTS5 merge policy (a variable for the tests,
// which compare the index it gives with FTS5's default policy's).
var firstImportPolicy = true

const (
	ftsAutomerge        = 4  // FTS5's default
	ftsCrisismerge      = 16 // FTS5's default
	ftsFirstCrisismerge = 64
)

// setFTSConfig records ftsHashSize in ev_fts's configuration when it is not there yet (an index built
// before the setting existed gets it at its next import), and FTS5's merge policy: a first import's
// (first) or the default one (ftsAutomerge, ftsCrisismerge). A policy is written only when the recorded
// one differs, so an index that never had a first import's policy keeps FTS5's implicit defaults.
func setFTSConfig(ctx context.Context, tx *sql.Tx, first bool) error {
	have, err := ftsConfig(ctx, tx)
	if err != nil {
		return err
	}
	set := func(k string, v int64) error {
		if got, ok := have[k]; ok && got == v {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ev_fts(ev_fts, rank) VALUES(?, ?)`, k, v); err != nil {
			return fmt.Errorf("set FTS5 %s: %w", k, err)
		}
		return nil
	}
	if err := set("hashsize", ftsHashSize); err != nil {
		return err
	}
	if first {
		if err := set("automerge", 0); err != nil {
			return err
		}
		return set("crisismerge", ftsFirstCrisismerge)
	}
	return restoreFTSMerge(ctx, tx, have)
}

// ftsConfig reads ev_fts's recorded hashsize, automerge and crisismerge (a key FTS5 never recorded is
// missing: its default applies).
func ftsConfig(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT k, v FROM ev_fts_config WHERE k IN ('hashsize', 'automerge', 'crisismerge')`)
	if err != nil {
		return nil, fmt.Errorf("read FTS5 configuration: %w", err)
	}
	defer rows.Close()
	have := map[string]int64{}
	for rows.Next() {
		var (
			k string
			v int64
		)
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("read FTS5 configuration: %w", err)
		}
		have[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read FTS5 configuration: %w", err)
	}
	return have, nil
}

// restoreFTSMerge sets FTS5's default merge policy on ev_fts when have (the recorded automerge and
// crisismerge, read by the caller) holds another.
func restoreFTSMerge(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, have map[string]int64) error {
	for _, kv := range []struct {
		k string
		v int64
	}{{"automerge", ftsAutomerge}, {"crisismerge", ftsCrisismerge}} {
		if got, ok := have[kv.k]; !ok || got == kv.v {
			continue
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO ev_fts(ev_fts, rank) VALUES(?, ?)`, kv.k, kv.v); err != nil {
			return fmt.Errorf("set FTS5 %s: %w", kv.k, err)
		}
	}
	return nil
}

// batchTx is an import transaction: sources are written into it one by one, then it commits (all or
// none).
type batchTx struct {
	ix      *Index
	tx      *sql.Tx
	w       *writer
	sources int // sources written
	bytes   int // their textBytes
	changed bool
}

// beginBatch starts an import transaction on db (the index's pool, or one connection of it).
func (ix *Index) beginBatch(ctx context.Context, db interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}, first bool) (*batchTx, error) {
	// The transaction and its statements run under ctx without its cancellation (writer.sctx); the
	// writer checks ctx itself between sources and every 256 events.
	sctx := context.WithoutCancel(ctx)
	tx, err := db.BeginTx(sctx, nil)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if err := setFTSConfig(sctx, tx, first); err != nil {
		tx.Rollback() //nolint:errcheck // the error is the setting's
		return nil, fmt.Errorf("import: %w", err)
	}
	w, err := prepareWriter(sctx, tx)
	if err != nil {
		tx.Rollback() //nolint:errcheck // the error is the prepare's
		return nil, fmt.Errorf("import: %w", err)
	}
	return &batchTx{ix: ix, tx: tx, w: w}, nil
}

// write writes one parsed source and sets its result's event count and action.
func (b *batchTx) write(ctx context.Context, p *pending, res *SourceResult) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	b.sources++
	if p.touch {
		if _, moved, err := b.w.moved(p); err != nil {
			return err
		} else if moved {
			// Another import wrote this source since its state was read: its row is left as that import
			// recorded it (docs/history.md "Concurrent imports").
			res.Action, res.Events = "unchanged", 0
			return nil
		}
		// Same content: only the recorded stat and fingerprint move.
		if _, err := b.tx.ExecContext(b.w.sctx, `UPDATE sources SET fingerprint=?, size=?, mtime=?, ctime=?, ino=? WHERE path=?`,
			p.fingerprint, p.size, p.mtime, p.ctime, p.ino, p.src.key()); err != nil {
			return fmt.Errorf("update source state: %w", err)
		}
		return nil
	}
	if cur, stale, err := b.w.moved(p); err != nil {
		return err
	} else if stale {
		// Another import wrote this source after it was read (two imports at once): read it again against
		// what that import recorded, under this transaction's write lock, so that nothing is added twice
		// and what it added is not counted again (docs/history.md "Incremental import").
		r, np, err := b.ix.prepareFrom(ctx, p.src, cur)
		if err != nil {
			return err
		}
		*res = r
		if np == nil {
			return nil
		}
		b.sources--
		return b.write(ctx, np, res)
	}
	b.bytes += p.textBytes()
	conflicts := b.w.conflicts
	n, err := b.w.writeSource(ctx, p)
	if err != nil {
		return err
	}
	b.changed = true
	res.Events = n
	res.Conflicts = b.w.conflicts - conflicts
	if testHookWritten != nil {
		testHookWritten()
	}
	if p.appended {
		res.Action = "appended"
	} else {
		res.Action = "imported"
	}
	return nil
}

// commit bumps the generation (when a source's events changed) and commits.
func (b *batchTx) commit(ctx context.Context) error {
	defer b.w.close()
	defer b.tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if b.changed {
		if err := bumpGeneration(b.w.sctx, b.tx); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		// changed_at: when the generation last moved (Freshness), in Unix milliseconds
		if _, err := b.tx.ExecContext(b.w.sctx, `INSERT INTO meta(key, value) VALUES('changed_at', ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(time.Now().UnixMilli(), 10)); err != nil {
			return fmt.Errorf("import: record its time: %w", err)
		}
	}
	if err := b.tx.Commit(); err != nil {
		return fmt.Errorf("import: commit: %w", err)
	}
	return nil
}

func (b *batchTx) rollback() {
	b.w.close()
	b.tx.Rollback() //nolint:errcheck // nothing to report: the transaction is abandoned
}

// writer holds the statements of one import transaction, prepared once for all its sources. They run
// under sctx, the import's context without its cancellation: modernc.org/sqlite watches the context of
// every statement run under a cancellable one with a goroutine, a channel and a progress handler, which
// cost a whole-process first import 3–5 % of its CPU (bench/README.md "Seventh round"); the writer
// checks the import's context itself, between sources and every 256 events.
type writer struct {
	tx                                               *sql.Tx
	sctx                                             context.Context
	has, ins, fts, ef, ec, count, session, sourceRow *sql.Stmt
	hasSrc, hasOther                                 *sql.Stmt // events of the session from this source, from others
	noSession                                        *sql.Stmt // deletes the row of a session without events
	otherSrc                                         *sql.Stmt // another source of the session is recorded
	delConflicts                                     *sql.Stmt // forgets a source's recorded conflicts (prepared once: every source of an import runs it)
	state                                            *sql.Stmt // the source's recorded state (moved)
	// reread holds the keys of the sources whose recorded state this transaction reset (rereadOthers):
	// they hold records of a session that lost events another of its files gave it, and are read again
	// whole by this import when it has them, else by the next (docs/history.md "A session of several files").
	reread map[string]bool
	// conflicts counts the records of the sources written that another file of their session holds with
	// other content (the text already indexed is kept; docs/history.md "A session of several files").
	conflicts                      int
	grpRow, rootN, rootIns, grpIns *sql.Stmt // the map ev_group (groupOf, insertEvents)
}

func prepareWriter(ctx context.Context, tx *sql.Tx) (*writer, error) {
	w := &writer{tx: tx, sctx: context.WithoutCancel(ctx), reread: map[string]bool{}}
	for _, s := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&w.has, `SELECT 1 FROM events WHERE session_id=? LIMIT 1`},
		{&w.hasSrc, `SELECT 1 FROM events WHERE session_id=? AND src=? LIMIT 1`},
		{&w.hasOther, `SELECT 1 FROM events WHERE session_id=? AND src<>? LIMIT 1`},
		{&w.noSession, `DELETE FROM sessions WHERE id=?`},
		{&w.otherSrc, `SELECT 1 FROM sources WHERE session_id=? AND path<>? LIMIT 1`},
		{&w.delConflicts, `DELETE FROM conflicts WHERE src=?`},
		{&w.state, `SELECT format, parser_rev, size, mtime, ctime, ino, fingerprint, content_hash, offset, check_hash, state, session_id FROM sources WHERE path=?`},
		{&w.ins, `INSERT INTO events(id, session_id, seq, native_key, at, type, role, text, tool, files, facts, fts_len, src)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING`},
		{&w.fts, `INSERT INTO ev_fts(rowid, body) VALUES(?,?)`},
		{&w.ef, `INSERT INTO event_files(event, path, op) VALUES(?,?,?)`},
		{&w.ec, `INSERT INTO event_commits(event, oid) VALUES(?,?)`},
		{&w.count, `SELECT count(*) FROM events WHERE session_id=?`},
		{&w.grpRow, `SELECT root_id, scope FROM sessions WHERE id=?`},
		{&w.rootN, `SELECT n FROM ev_roots WHERE key=?`},
		{&w.rootIns, `INSERT INTO ev_roots(key) VALUES(?)`},
		{&w.grpIns, `INSERT INTO ev_group(ev, grp) VALUES(?,?)`},
		{&w.session, `INSERT OR REPLACE INTO sessions(id, provider, native_id, parent_id, root_id, scope, cwd, repo_url,
		branch, commit_id, model, cli_version, title, started_at, ended_at, source_format, source_path, event_count)
		VALUES(?,?,?,?,COALESCE((SELECT root_id FROM sessions WHERE id=?),''),?,?,?,?,?,?,?,?,?,?,?,?,?)`},
		{&w.sourceRow, `INSERT OR REPLACE INTO sources(path, provider, format, parser_rev, size, mtime, ctime, ino, fingerprint,
		content_hash, offset, check_hash, state, session_id, unknown, bad_lines, imported_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`},
	} {
		st, err := tx.PrepareContext(ctx, s.sql)
		if err != nil {
			w.close()
			return nil, err
		}
		*s.dst = st
	}
	return w, nil
}

func (w *writer) close() {
	for _, st := range []*sql.Stmt{w.has, w.hasSrc, w.hasOther, w.ins, w.fts, w.ef, w.ec, w.count, w.session, w.sourceRow, w.noSession,
		w.otherSrc, w.delConflicts, w.state, w.grpRow, w.rootN, w.rootIns, w.grpIns} {
		if st != nil {
			st.Close()
		}
	}
}

// moved reads p's source row in this transaction and reports whether it is no longer the one p was
// parsed from (p.seen; nil: not recorded): another import wrote it since (docs/history.md "Concurrent
// imports"). cur is the row read, nil when there is none. Every column of the recorded state is compared:
// a row another import wrote always differs from p.seen in one of them (it records the file as it read
// it), and one a touch moved differs in its stat or fingerprint.
func (w *writer) moved(p *pending) (cur *sourceRow, moved bool, err error) {
	var r sourceRow
	err = w.state.QueryRowContext(w.sctx, p.src.key()).Scan(&r.format, &r.rev, &r.size, &r.mtime, &r.ctime, &r.ino, &r.fingerprint, &r.contentHash,
		&r.offset, &r.checkHash, &r.state, &r.sessionID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, p.seen != nil, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("import %s: read source state: %w", p.src.Path, err)
	}
	o := p.seen
	return &r, o == nil || r.format != o.format || r.rev != o.rev || r.size != o.size || r.mtime != o.mtime || r.ctime != o.ctime || r.ino != o.ino || r.fingerprint != o.fingerprint ||
		r.contentHash != o.contentHash || r.offset != o.offset || r.checkHash != o.checkHash, nil
}

// writeSource writes a parsed source and returns the number of events it added: those inserted that the
// source did not hold before (a source read again whole is deleted and inserted again: only its new
// events count, docs/history.md "Incremental import").
func (w *writer) writeSource(ctx context.Context, p *pending) (int, error) {
	src := p.src
	key := src.key()
	others := false // the session holds events of other sources (docs/history.md "Identity")
	multi, err := w.otherSources(p.sessionID, key)
	if err != nil {
		return 0, err
	}
	var lost map[string]bool    // the events this source held before, while another file's records are kept
	var dropped map[string]bool // the events this source held before, deleted to be written again
	if !p.appended {
		if p.prev != nil && p.prev.sessionID != "" && p.prev.sessionID != p.sessionID {
			if err := w.dropSource(ctx, p.prev.sessionID, key, true); err != nil {
				return 0, err
			}
		}
		if multi {
			if lost, err = w.heldBy(p.sessionID, key); err != nil {
				return 0, err
			}
		}
		if _, err := w.delConflicts.ExecContext(w.sctx, key); err != nil {
			return 0, fmt.Errorf("import %s: %w", src.Path, err)
		}
		if others, dropped, err = w.dropSourceEventsIDs(ctx, p.sessionID, key, true); err != nil {
			return 0, err
		}
	}
	grp, err := w.groupOf(p.sessionID, sessionScope(src, &p.st))
	if err != nil {
		return 0, fmt.Errorf("import %s: %w", src.Path, err)
	}
	n, added, err := w.insertEventsNew(ctx, p.sessionID, key, p.st.Meta.CWD, grp, p.pr.Events, p.encoded, dropped)
	if err != nil {
		return 0, fmt.Errorf("import %s: %w", src.Path, err)
	}
	if multi {
		// An event this source no longer holds may be held by another file of the session, whose import
		// kept this source's copy: that file is read again whole (docs/history.md "A session of several files").
		for i := range p.pr.Events {
			delete(lost, p.pr.Events[i].ID)
		}
		if len(lost) > 0 {
			if err := w.rereadOthers(p.sessionID, key); err != nil {
				return 0, err
			}
		}
		if err := w.renumber(p.sessionID); err != nil {
			return 0, fmt.Errorf("import %s: %w", src.Path, err)
		}
	}
	count := int64(-1) // the session's events, counted when earlier ones or other sources' were kept
	if !p.appended && !others {
		count = int64(n) // the session's events were deleted above: it holds the n just inserted
	}
	if err := w.upsertSession(ctx, src, p.sessionID, &p.st, count, others || p.appended); err != nil {
		return 0, fmt.Errorf("import %s: %w", src.Path, err)
	}
	_, err = w.sourceRow.ExecContext(w.sctx,
		key, string(src.Provider), src.Format, parserRev, p.size, p.mtime, p.ctime, p.ino, p.fingerprint, p.contentHash, p.pr.Offset, p.checkHash,
		p.stateJSON, p.sessionID, p.unknownJSON, p.pr.BadLines, time.Now().UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("import %s: record source: %w", src.Path, err)
	}
	return added, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func lineParserFor(format string) lineParser {
	switch format {
	case FormatClaude:
		return parseClaudeLine
	case FormatCodex, FormatCodexZstd:
		return parseCodexLine
	case FormatGeminiJSONL:
		return parseGeminiLine
	case FormatCursor:
		return parseCursorLine
	case FormatCopilot:
		return parseCopilotLine
	}
	return func(b *builder, _ []byte) error { return fmt.Errorf("no line parser for %s", format) }
}

// parseWhole parses a source that is re-read whole: a Gemini JSON document, a zstd rollout, an OpenCode
// session.
func parseWhole(ctx context.Context, src Source, st *parseState) (*parseResult, error) {
	switch src.Format {
	case FormatGeminiJSON:
		data, err := readRegular(src.Path, maxJSONDocBytes)
		if err != nil {
			return nil, err
		}
		b := newBuilder(st)
		if err := parseGeminiJSON(b, trimBOM(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", src.Path, err)
		}
		return b.res, nil
	case FormatCodexZstd:
		f, fi, err := openRegular(src.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		dec, err := zstd.NewReader(f, zstd.WithDecoderMaxMemory(zstdDecoderMemory), zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.Path, err)
		}
		defer dec.Close()
		bound := max(zstdRatioFloor, maxZstdRatio*fi.Size())
		dr := &damageReader{r: dec}
		cr := &cappedReader{r: &ratioReader{r: dr, n: bound}, n: maxZstdBytes}
		pr, err := parseJSONL(ctx, cr, 0, st, parseCodexLine)
		if errors.Is(err, errZstdRatio) {
			return nil, fmt.Errorf("%s: not imported: it decompresses to more than %d bytes, the limit for %d compressed bytes (%d× its size, at least %d MiB; docs/limits.md): %w",
				src.Path, bound, fi.Size(), maxZstdRatio, zstdRatioFloor>>20, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.Path, err)
		}
		if cr.cut {
			pr.Truncated = true
			pr.Errors = append(pr.Errors, fmt.Sprintf("decompressed to more than the limit of %d MiB: the rest is not imported (docs/limits.md)", maxZstdBytes>>20))
		}
		if dr.err != nil && dr.n == 0 {
			return nil, fmt.Errorf("%s: not zstd data: %w", src.Path, dr.err) // nothing of it could be read
		}
		if dr.err != nil {
			// A rollout cut short (a copy interrupted, a full disk) or damaged: its readable lines are
			// imported, as a rollout over the bound is.
			pr.Truncated = true
			pr.Errors = append(pr.Errors, fmt.Sprintf("the compressed data is cut short or damaged after %d decompressed bytes (%v): the rest is not imported", dr.n, dr.err))
		}
		return pr, nil
	case FormatOpenCode:
		return parseOpenCode(ctx, src.Path, st)
	}
	return nil, fmt.Errorf("%s: unknown format %q", src.Path, src.Format)
}

// sourceName names a source file among the files of its session without a path of this machine: its
// file name, without the ".zst" of a compressed copy (a rollout and its copy are one file). It prefixes
// the keys of events keyed by their line (docs/history.md "Identity"), so that two files of one session
// (a resumed Codex rollout) do not give the same ids, and the ids are the same on every machine.
func sourceName(src Source) string {
	return nameID(strings.TrimSuffix(filepath.Base(src.Path), ".zst"))
}

// nativeFromPath is the fallback native id: the file name without its extensions (Claude and Cursor name
// files after the session; Codex rollouts end in the session UUID; Copilot keeps events.jsonl in a
// directory named after the session), as nameID writes a name that is not valid UTF-8.
func nativeFromPath(src Source) string {
	base := filepath.Base(src.Path)
	stem := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, ".zst"), ".jsonl"), ".json")
	if src.Provider == CopilotCLI && base == "events.jsonl" {
		return nameID(filepath.Base(filepath.Dir(src.Path)))
	}
	if src.Provider == Codex && strings.HasPrefix(stem, "rollout-") && len(stem) >= 36 {
		return nameID(stem[len(stem)-36:])
	}
	return nameID(stem)
}

// claudeNativeID is the native id of a Claude Code source, and sets st's parent and scope from its layout
// (docs/history.md "Identity"): the file name without .jsonl (nativeFromPath), but for a subagent's
// transcript whose parent is known, "<parent's native id>/<file name>". Claude names a subagent's file
// after the agent only (agent-<id>.jsonl; the older sibling layout's ids are 7 or 8 hex digits), and the
// same name under two parents is two sessions: the newer layout's folder (<parent>/subagents/) names the
// parent, the older sibling layout's records do (sessionId, the first one read, when it is at most 256
// bytes without "/" or a control character; an agent-* file whose records name no other session has no
// known parent and keeps its file name). "/" is in no file name, so
// such an id is no primary session's. The parent and the file are the same on every machine and at every
// read of the file, so is the id.
func claudeNativeID(src Source, st *parseState) string {
	stem := nativeFromPath(src)
	if st.ParentNative == "" && strings.HasPrefix(filepath.Base(src.Path), "agent-") {
		st.Subagent = true
		if r := st.RecordSession; r != "" && r != stem && len(r) <= 256 && !strings.ContainsFunc(r, func(c rune) bool { return c == '/' || isControl(c) }) {
			st.ParentNative = r // the legacy sibling layout names the parent in sessionId
		}
	}
	if st.ParentNative == "" || st.ParentNative == stem {
		return stem
	}
	return st.ParentNative + "/" + stem
}

// checkPrefix hashes the first n bytes of f whole: SHA-256 of "<n>\x00" and the bytes. It is computed only
// when a file's size or mtime moved (an unchanged stat reads nothing), so an edit anywhere before the
// offset, of any length, is seen and the file re-imported whole (docs/history.md "Incremental import"). For
// n ≤ 64 KiB it equals the sampled hash earlier versions recorded (their first 64 KiB and the 4 KiB before
// n), so a short file recorded by them is still appended to; a longer one is parsed whole once.
func checkPrefix(f *os.File, n int64) (string, error) {
	h := sha256.New()
	h.Write(strconv.AppendInt(nil, n, 10))
	h.Write([]byte{0})
	buf := checkBufs.Get().(*[]byte)
	defer checkBufs.Put(buf)
	got, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, n), *buf)
	if err == nil && got != n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkBufs are checkPrefix's read buffers (one per import goroutine at a time).
var checkBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func fingerprintFiles(files []string) (fp string, size, mtime int64, err error) {
	h := sha256.New()
	for _, p := range files {
		fi, err := os.Lstat(p)
		if err != nil {
			return "", 0, 0, fmt.Errorf("stat %s: %w", p, err)
		}
		fs := statOf(fi)
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", filepath.Base(p), fi.Size(), fi.ModTime().UnixNano())
		if fs.ctime != 0 || fs.ino != 0 {
			// ctime and inode too (Linux): an edit that keeps the size and sets the mtime back moves them.
			fmt.Fprintf(h, "c%d\x00i%d\x00", fs.ctime, fs.ino)
		}
		size += fi.Size()
		mtime = max(mtime, fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), size, mtime, nil
}

func hashFiles(files []string) (string, error) {
	h := sha256.New()
	for _, p := range files {
		f, _, err := openRegular(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00", filepath.Base(p))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", p, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// dropSourceEvents deletes the events the source key gave the session id and reports whether the
// session still holds events of other sources; when it holds none, its row is deleted too.
func (w *writer) dropSourceEvents(ctx context.Context, id, key string) (others bool, err error) {
	others, _, err = w.dropSourceEventsIDs(ctx, id, key, false)
	return others, err
}

// dropSourceEventsIDs is dropSourceEvents returning, when ids is set, the ids of the events it deleted
// (nil when none): an event the write then inserts again was not added by it.
func (w *writer) dropSourceEventsIDs(ctx context.Context, id, key string, ids bool) (others bool, dropped map[string]bool, err error) {
	// Only when there is something to delete: a DELETE on the FTS table flushes its pending writes, which
	// costs a fresh import its batching.
	var one int
	err = w.has.QueryRowContext(w.sctx, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = w.noSession.ExecContext(w.sctx, id) // prepared once: a first import runs it for every source
		return false, nil, err
	}
	if err != nil {
		return false, nil, fmt.Errorf("delete session %s: %w", id, err)
	}
	err = w.hasSrc.QueryRowContext(w.sctx, id, key).Scan(&one)
	switch {
	case err == nil:
		for _, q := range []string{
			`DELETE FROM ev_fts WHERE rowid IN (SELECT ` + ftsRowidSQL("events") + ` FROM events WHERE session_id=? AND src=?)`,
			`DELETE FROM event_files WHERE event IN (SELECT rowid FROM events WHERE session_id=? AND src=?)`,
			`DELETE FROM event_commits WHERE event IN (SELECT rowid FROM events WHERE session_id=? AND src=?)`,
		} {
			if _, err := w.tx.ExecContext(w.sctx, q, id, key); err != nil {
				return false, nil, fmt.Errorf("delete session %s: %w", id, err)
			}
		}
		if dropped, err = w.deleteEvents(id, key, ids); err != nil {
			return false, nil, fmt.Errorf("delete session %s: %w", id, err)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return false, nil, fmt.Errorf("delete session %s: %w", id, err)
	}
	err = w.hasOther.QueryRowContext(w.sctx, id, key).Scan(&one)
	if err == nil {
		return true, dropped, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, nil, fmt.Errorf("delete session %s: %w", id, err)
	}
	if _, err := w.noSession.ExecContext(w.sctx, id); err != nil {
		return false, nil, fmt.Errorf("delete session %s: %w", id, err)
	}
	return false, dropped, nil
}

// deleteEvents deletes the session id's events of the source key, returning their ids when ids is set.
func (w *writer) deleteEvents(id, key string, ids bool) (map[string]bool, error) {
	if !ids {
		_, err := w.tx.ExecContext(w.sctx, `DELETE FROM events WHERE session_id=? AND src=?`, id, key)
		return nil, err
	}
	rows, err := w.tx.QueryContext(w.sctx, `DELETE FROM events WHERE session_id=? AND src=? RETURNING id`, id, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, err
		}
		out[e] = true
	}
	return out, rows.Err()
}

// otherSources reports whether a source other than key is recorded for the session id.
func (w *writer) otherSources(id, key string) (bool, error) {
	var one int
	err := w.otherSrc.QueryRowContext(w.sctx, id, key).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sources of session %s: %w", id, err)
	}
	return true, nil
}

// heldBy returns the ids of the session's events whose record the source key gave.
func (w *writer) heldBy(id, key string) (map[string]bool, error) {
	rows, err := w.tx.QueryContext(w.sctx, `SELECT id FROM events WHERE session_id=? AND src=?`, id, key)
	if err != nil {
		return nil, fmt.Errorf("events of session %s: %w", id, err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, fmt.Errorf("events of session %s: %w", id, err)
		}
		ids[e] = true
	}
	return ids, rows.Err()
}

// rereadOthers resets the recorded state of the session's sources but key (parser revision 0: the next
// import of each reads it whole) and records their keys in w.reread. A record two files of a session
// share is stored once, under the file imported first; when that file loses it (deleted, rewritten), the
// others are read again so that the record stays while any file holds it.
func (w *writer) rereadOthers(id, key string) error {
	rows, err := w.tx.QueryContext(w.sctx, `UPDATE sources SET parser_rev=0 WHERE session_id=? AND path<>? RETURNING path`, id, key)
	if err != nil {
		return fmt.Errorf("sources of session %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return fmt.Errorf("sources of session %s: %w", id, err)
		}
		w.reread[k] = true
	}
	return rows.Err()
}

// renumber gives the events of a session of several files one order, their seq 1, 2, ...: file by file,
// each file's events in the order they were read (its rows' order), the files by their first recorded
// time (a file without one last), then by key. A resumed Codex thread's second rollout starts after the
// first (docs/history.md "A session of several files"). Only rows whose seq moves are written.
func (w *writer) renumber(id string) error {
	_, err := w.tx.ExecContext(w.sctx, `WITH f AS (SELECT src, min(CASE WHEN at<>0 THEN at END) AS t0 FROM events WHERE session_id=?1 GROUP BY src),
	r AS (SELECT e.rowid AS rid, row_number() OVER (ORDER BY f.t0 IS NULL, f.t0, e.src, e.rowid) AS n
		FROM events e JOIN f ON f.src=e.src WHERE e.session_id=?1)
	UPDATE events SET seq=r.n FROM r WHERE events.rowid=r.rid AND events.seq<>r.n`, id)
	if err != nil {
		return fmt.Errorf("order session %s: %w", id, err)
	}
	return nil
}

// dropSource deletes the events the source key gave the session id: the session keeps those of its
// other sources (its event count follows, its events numbered again), or goes when it has none left.
// The session's other sources are read again (rereadOthers): they may hold records this one held. Unless
// keepRow, the source's row goes too.
func (w *writer) dropSource(ctx context.Context, id, key string, keepRow bool) error {
	multi, err := w.otherSources(id, key)
	if err != nil {
		return err
	}
	if _, err := w.tx.ExecContext(w.sctx, `DELETE FROM conflicts WHERE src=?`, key); err != nil {
		return fmt.Errorf("forget source %s: %w", key, err)
	}
	others, err := w.dropSourceEvents(ctx, id, key)
	if err != nil {
		return err
	}
	if multi {
		if err := w.rereadOthers(id, key); err != nil {
			return err
		}
	}
	if others {
		if err := w.renumber(id); err != nil {
			return err
		}
		if _, err := w.tx.ExecContext(w.sctx, `UPDATE sessions SET event_count=(SELECT count(*) FROM events WHERE session_id=?) WHERE id=?`, id, id); err != nil {
			return fmt.Errorf("count session %s: %w", id, err)
		}
	}
	if !keepRow {
		if _, err := w.tx.ExecContext(w.sctx, `DELETE FROM sources WHERE path=?`, key); err != nil {
			return fmt.Errorf("forget source %s: %w", key, err)
		}
	}
	return nil
}

// encodedEvent is what an event stores besides its columns, computed while parsing (on the parsing
// goroutines): its tool, files and facts as JSON ("" for none) and its full-text body.
type encodedEvent struct {
	tool, files, facts, body string
	ftsLen                   int // ftsLenOf(body)
}

func encodeEvent(e *Event) encodedEvent {
	var enc encodedEvent
	if e.Tool != nil {
		t := *e.Tool
		if t.Output == e.Text {
			t.Output = "" // stored once, in text; scanEvent restores it
		}
		b, _ := sjson.Marshal(t)
		enc.tool = string(b)
	}
	if len(e.Files) > 0 {
		b, _ := sjson.Marshal(e.Files)
		enc.files = string(b)
	}
	if len(e.Facts) > 0 {
		b, _ := sjson.Marshal(e.Facts)
		enc.facts = string(b)
	}
	enc.body = textproc.SplitCJK(searchBody(e))
	enc.ftsLen = ftsLenOf(enc.body)
	return enc
}

// filePathKey is a touched path as event_files keeps it, for the file filter (docs/history.md "Search"):
// cleaned as CleanFilePath cleans the filter ("./a/../b" is "b"), and a relative one joined to cwd when cwd is absolute (the
// filter takes a relative path from the repository or the directory ctx runs in).
func filePathKey(cwd, p string) string {
	switch {
	case p == "":
		return ""
	case WindowsAbs(p):
		return winClean(p)
	case !filepath.IsAbs(p) && WindowsAbs(cwd):
		return winClean(cwd + `\` + p)
	case !filepath.IsAbs(p) && filepath.IsAbs(cwd):
		return filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// groupOf is the ev_group.grp value of the events the writer is about to insert into session id, whose
// row it will then write with scope: its root group (the root the row has, kept by upsertSession, or its
// own id) numbered in ev_roots (a number given here when the group has none), and the scope's bit. When
// the session's row has another scope, the rows of the events it holds are set to the new value first.
func (w *writer) groupOf(id, scope string) (int64, error) {
	var root, was string
	err := w.grpRow.QueryRowContext(w.sctx, id).Scan(&root, &was)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("group of session %s: %w", id, err)
	}
	key := root
	if key == "" {
		key = id
	}
	var n int64
	err = w.rootN.QueryRowContext(w.sctx, key).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		var r sql.Result
		if r, err = w.rootIns.ExecContext(w.sctx, key); err == nil {
			n, err = r.LastInsertId()
		}
	}
	if err != nil {
		return 0, fmt.Errorf("group of session %s: %w", id, err)
	}
	grp := n << 1
	if scope == "subagent" {
		grp |= 1
	}
	if exists && was != scope {
		if _, err := w.tx.ExecContext(w.sctx, `UPDATE ev_group SET grp=?1 WHERE ev IN (SELECT rowid FROM events WHERE session_id=?2) AND grp<>?1`, grp, id); err != nil {
			return 0, fmt.Errorf("group of session %s: %w", id, err)
		}
	}
	return grp, nil
}

// insertEvents inserts a session's events, each with its row of ev_group (grp: groupOf's); encoded, when
// not nil, holds encodeEvent of each. The paths of their file touches are kept as filePathKey makes them, a
// relative one taken from cwd (the session's working directory) when that is absolute.
func (w *writer) insertEvents(ctx context.Context, sessionID, srcKey, cwd string, grp int64, evs []Event, encoded []encodedEvent) (int, error) {
	n, _, err := w.insertEventsNew(ctx, sessionID, srcKey, cwd, grp, evs, encoded, nil)
	return n, err
}

// insertEventsNew is insertEvents also returning how many of the inserted events are not in before (the
// ids a write deleted first).
func (w *writer) insertEventsNew(ctx context.Context, sessionID, srcKey, cwd string, grp int64, evs []Event, encoded []encodedEvent,
	before map[string]bool) (n, added int, err error) {
	ins, ef, ec := w.ins, w.ef, w.ec
	for i := range evs {
		if i&255 == 0 {
			if err := ctx.Err(); err != nil {
				return n, added, err
			}
		}
		e := &evs[i]
		e.SessionID = sessionID
		e.ID = EventID(sessionID, e.NativeKey)
		var enc encodedEvent
		if encoded != nil {
			enc = encoded[i] // computed on a parsing goroutine
		} else {
			enc = encodeEvent(e)
		}
		tool, files, facts := nullable(enc.tool), nullable(enc.files), nullable(enc.facts)
		at := atMillis(e.At)
		var rowid int64
		for attempt := 0; ; attempt++ {
			r, err := ins.ExecContext(w.sctx, e.ID, sessionID, e.Seq, e.NativeKey, at, string(e.Type), e.Role, e.Text, tool, files, facts, enc.ftsLen, srcKey)
			if err != nil {
				return n, added, fmt.Errorf("insert event: %w", err)
			}
			if c, _ := r.RowsAffected(); c == 1 {
				rowid, _ = r.LastInsertId()
				break
			}
			if attempt == 1 {
				break // the same record twice: keep the first
			}
			// Another file of the session (a shared record, a copy of the transcript) already holds this
			// record: it is the same event, which keeps the content of the file imported first
			// (docs/history.md "A session of several files"); only a record id reused within one file is
			// keyed by its position too.
			var (
				src, oTool, oFiles, oFacts sql.NullString
				oAt                        int64
				oType, oRole, oText        string
			)
			if err := w.tx.QueryRowContext(w.sctx, `SELECT src, at, type, role, text, tool, files, facts FROM events WHERE id = ?`, e.ID).
				Scan(&src, &oAt, &oType, &oRole, &oText, &oTool, &oFiles, &oFacts); err != nil {
				return n, added, fmt.Errorf("insert event: %w", err)
			}
			if src.String != srcKey {
				if oAt != at || oType != string(e.Type) || oRole != e.Role || oText != e.Text ||
					oTool.String != enc.tool || oFiles.String != enc.files || oFacts.String != enc.facts {
					// The two files disagree: the record keeps the text already indexed, and the
					// disagreement is counted (the import's report, ctx status).
					w.conflicts++
					if _, err := w.tx.ExecContext(w.sctx, `INSERT OR IGNORE INTO conflicts(src, event) VALUES(?,?)`, srcKey, e.ID); err != nil {
						return n, added, fmt.Errorf("record conflict: %w", err)
					}
				}
				break
			}
			// The provider reused a record id within the session: key this one by its position too.
			e.NativeKey += "@" + strconv.FormatInt(e.Seq, 10)
			e.ID = EventID(sessionID, e.NativeKey)
		}
		if rowid == 0 {
			continue
		}
		if _, err := w.fts.ExecContext(w.sctx, ftsRowid(rowid, e.Type, enc.ftsLen), enc.body); err != nil {
			return n, added, fmt.Errorf("index event: %w", err)
		}
		if _, err := w.grpIns.ExecContext(w.sctx, rowid, grp); err != nil {
			return n, added, fmt.Errorf("index event group: %w", err)
		}
		for _, f := range e.Files {
			if _, err := ef.ExecContext(w.sctx, rowid, filePathKey(cwd, f.Path), string(f.Op)); err != nil {
				return n, added, fmt.Errorf("index event files: %w", err)
			}
		}
		for _, f := range e.Facts {
			if f.Kind != "commit" {
				continue
			}
			if _, err := ec.ExecContext(w.sctx, rowid, strings.ToLower(f.Value)); err != nil {
				return n, added, fmt.Errorf("index event commits: %w", err)
			}
		}
		n++
		if !before[e.ID] {
			added++
		}
	}
	return n, added, nil
}

// searchBody is the text the full-text index sees for an event: its text, the tool name and input,
// the touched paths and the facts, plus the parts of camelCase identifiers (docs/history.md "Search").
func searchBody(e *Event) string {
	parts := make([]string, 0, 4+len(e.Files)+len(e.Facts))
	parts = append(parts, e.Text)
	if e.Tool != nil {
		parts = append(parts, e.Tool.Name)
		if e.Type == ToolCall && !strings.Contains(e.Text, e.Tool.Input) {
			parts = append(parts, e.Tool.Input)
		}
	}
	for _, f := range e.Files {
		parts = append(parts, f.Path)
	}
	for _, f := range e.Facts {
		if f.Kind != "command" {
			parts = append(parts, f.Value)
		}
	}
	// Terminal escape sequences (a tool's coloured output: ESC [ 1;33m panicked) are not text: left in,
	// "33mpanicked" was the word indexed and "panicked" found nothing.
	for i, p := range parts {
		parts[i] = termesc.Strip(p)
	}
	// The identifier parts of each part (a word never spans two: they are joined by a newline).
	xp := splitBufs.Get().(*[]byte)
	extra := (*xp)[:0]
	n := len(parts) - 1
	for _, p := range parts {
		extra = textproc.AppendSplitIdentifiers(extra, p)
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n + len(extra))
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	if len(extra) > 0 {
		b.WriteByte('\n')
		b.Write(extra[:len(extra)-1]) // without the last part's space
	}
	if cap(extra) <= 1<<20 {
		*xp = extra
		splitBufs.Put(xp)
	}
	return b.String()
}

// splitBufs hold searchBody's identifier parts while the body is assembled.
var splitBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// sessionParent is the id of the parent session a source's parse state names, or "".
func sessionParent(src Source, st *parseState) string {
	if st.ParentNative != "" && st.ParentNative != st.NativeID {
		return SessionID(src.Provider, st.ParentNative)
	}
	return ""
}

// sessionScope is the scope of the session a source's parse state describes: subagent or primary.
func sessionScope(src Source, st *parseState) string {
	if st.Subagent || sessionParent(src, st) != "" {
		return "subagent"
	}
	return "primary"
}

// upsertSession writes a session's row; count is its number of events, or -1 to count them. merge: the
// session keeps other events (earlier reads, other sources), whose times its start and end span too.
func (w *writer) upsertSession(ctx context.Context, src Source, id string, st *parseState, count int64, merge bool) error {
	parent := sessionParent(src, st)
	scope := sessionScope(src, st)
	if count < 0 {
		if err := w.count.QueryRowContext(w.sctx, id).Scan(&count); err != nil {
			return err
		}
	}
	m := st.Meta
	started, ended := atMillis(m.StartedAt), atMillis(m.EndedAt)
	if merge {
		var s0, e0 int64
		err := w.tx.QueryRowContext(w.sctx, `SELECT started_at, ended_at FROM sessions WHERE id=?`, id).Scan(&s0, &e0)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if s0 != 0 && (started == 0 || s0 < started) {
			started = s0
		}
		if e0 != 0 && (ended == 0 || e0 > ended) {
			ended = e0
		}
	}
	_, err := w.session.ExecContext(w.sctx,
		id, string(src.Provider), st.NativeID, parent, id, scope, ClipSessionField(m.CWD), ClipSessionField(m.RepoURL),
		ClipSessionField(m.Branch), ClipSessionField(m.Commit), ClipSessionField(m.Model), ClipSessionField(m.CLIVersion),
		ClipSessionField(m.Title), started, ended, src.Format, src.Path, count)
	return err
}

// relink recomputes every session's root: the top of its parent chain among the imported sessions (a
// parent not imported yet is the root as far as this index knows; a chain that loops: chainTops).
func (ix *Index) relink(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT id, parent_id, root_id FROM sessions`)
	if err != nil {
		return fmt.Errorf("link sessions: %w", err)
	}
	parent := map[string]string{}
	root := map[string]string{}
	for rows.Next() {
		var id, p, r string
		if err := rows.Scan(&id, &p, &r); err != nil {
			rows.Close()
			return fmt.Errorf("link sessions: %w", err)
		}
		parent[id], root[id] = p, r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("link sessions: %w", err)
	}
	tops := chainTops(parent)
	changes := map[string]string{}
	for id := range parent {
		want := tops[id]
		if want == id {
			want = "" // a root
		}
		if root[id] != want {
			changes[id] = want
		}
	}
	if len(changes) == 0 {
		return nil
	}
	ids := make([]string, 0, len(changes))
	for id := range changes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	sctx := context.WithoutCancel(ctx) // as the writer's statements (writer.sctx)
	tx, err := ix.db.BeginTx(sctx, nil)
	if err != nil {
		return fmt.Errorf("link sessions: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	for i, id := range ids {
		if i&255 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("link sessions: %w", err)
			}
		}
		if _, err := tx.ExecContext(sctx, `UPDATE sessions SET root_id=? WHERE id=?`, changes[id], id); err != nil {
			return fmt.Errorf("link sessions: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("link sessions: %w", err)
	}
	return nil
}

// chainTops returns the top of every session's parent chain (parent: each imported session's parent, ""
// for none): the last id of the chain, a parent that is not imported included. A chain that loops (A's
// parent B, B's parent A: possible in damaged or hostile transcripts) has as its top the smallest id of
// the loop, for every member of the loop and every session below one, in any import order (a
// walk of at most 64 hops gave A itself, B itself, and A's child C the root B). docs/history.md
// "Sessions".
func chainTops(parent map[string]string) map[string]string {
	tops := make(map[string]string, len(parent))
	var path []string
	at := map[string]int{} // the index in path of each id on it
	for id := range parent {
		if _, done := tops[id]; done {
			continue
		}
		path = path[:0]
		top := ""
		clear(at)
		for cur := id; ; {
			if t, done := tops[cur]; done {
				top = t
				break
			}
			if i, seen := at[cur]; seen { // a loop: path[i:]
				top = slices.Min(path[i:])
				break
			}
			at[cur] = len(path)
			path = append(path, cur)
			next := parent[cur]
			if next == "" {
				top = cur
				break
			}
			cur = next
		}
		for _, p := range path {
			tops[p] = top
		}
	}
	return tops
}

// PruneMissing forgets the sources under the directories roots (absolute, clean) whose files are gone,
// and the sessions of an OpenCode database under them that the database no longer lists: their events
// leave their sessions (a session with none left goes), their rows leave sources (docs/history.md
// "Incremental import"). A source whose file cannot be lstat'ed for another reason, or whose database
// cannot be read, is kept. The other sources of a session that lost a source are marked to be read again
// whole (writer.rereadOthers): run it before the import that walked the roots, which then restores the
// records those files hold. It returns how many sources it forgot; the generation moves when it forgot
// any.
func (ix *Index) PruneMissing(ctx context.Context, roots []string) (int, error) {
	return ix.PruneMissingFound(ctx, roots, nil)
}

// eachRecorded calls fn with the key, format and session id of every row of sources: from the source
// snapshot and the rows changed since it was packed when there is a valid one (snapshot.go; one blob
// instead of a scan of 20,000 rows), else from sources.
func (ix *Index) eachRecorded(ctx context.Context, fn func(key, format, session string)) error {
	if data, dirty, ok := ix.readSnapshot(ctx); ok {
		if eachSnapshot(data, dirty, fn) {
			return nil
		}
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT path, format, session_id FROM sources`)
	if err != nil {
		return fmt.Errorf("read sources: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, format, session string
		if err := rows.Scan(&key, &format, &session); err != nil {
			return fmt.Errorf("read sources: %w", err)
		}
		fn(key, format, session)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read sources: %w", err)
	}
	return nil
}

// PruneMissingFound is PruneMissing given the sources the walk of roots just found (Discover): a source
// whose file discovery lstat'ed successfully is there and is not lstat'ed again by its full path (one
// stat per file for a refresh with nothing new, instead of two: bench/README.md "Twelfth round"). Only
// the recorded sources the walk did not find are lstat'ed. A file deleted between the walk and this call
// is forgotten by the next import (this one reports it failed).
func (ix *Index) PruneMissingFound(ctx context.Context, roots []string, found []Source) (int, error) {
	if len(roots) == 0 {
		return 0, nil
	}
	unlock, err := ix.LockImport(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	present := make(map[string]bool, len(found))
	for _, s := range found {
		if s.stat.known && s.stat.ok {
			present[s.Path] = true
		}
	}
	type gone struct{ key, session string }
	var drop []gone
	dbs := map[string][]gone{} // an OpenCode database's recorded sessions, by the database's path
	err = ix.eachRecorded(ctx, func(key, format, session string) {
		if format == FormatShared {
			return
		}
		file := key
		if format == FormatOpenCodeDB {
			if i := strings.LastIndexByte(key, '#'); i > 0 {
				file = key[:i]
			}
		}
		if !underAny(file, roots) {
			return
		}
		if present[file] {
			if file != key {
				dbs[file] = append(dbs[file], gone{key, session})
			}
			return
		}
		if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
			drop = append(drop, gone{key, session})
		} else if err == nil && file != key {
			dbs[file] = append(dbs[file], gone{key, session})
		}
	})
	if err != nil {
		return 0, err
	}
	// A session deleted from a database that is still there: the database lists its sessions (one that
	// cannot be read keeps them all).
	for _, file := range slices.Sorted(maps.Keys(dbs)) {
		listed, err := openCodeDBSessions(ctx, file)
		if err != nil {
			continue
		}
		have := make(map[string]bool, len(listed))
		for _, s := range listed {
			have[s.key()] = true
		}
		for _, g := range dbs[file] {
			if !have[g.key] {
				drop = append(drop, g)
			}
		}
	}
	if len(drop) == 0 {
		return 0, nil
	}
	tx, err := ix.beginBatch(ctx, ix.db, false)
	if err != nil {
		return 0, err
	}
	for _, g := range drop {
		if err := tx.w.dropSource(ctx, g.session, g.key, false); err != nil {
			tx.rollback()
			return 0, err
		}
	}
	tx.changed = true
	if err := tx.commit(ctx); err != nil {
		return 0, err
	}
	return len(drop), ix.relink(ctx)
}
