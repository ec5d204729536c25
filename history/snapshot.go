package history

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The source snapshot (docs/history.md "Refresh"): the columns of sources that tell an unchanged source
// (loadSources), every row packed in key order into one blob, as git's index keeps each file's stat
// data in one file. A refresh with nothing new reads that one row and the few rows changed since it was
// packed instead of stepping through 20,000 rows of sources (most of the SQLite part of such a refresh).
//
// Triggers on sources record in sources_dirty the key of every row inserted, updated or deleted since
// the snapshot was packed, in the same transaction as the change, whichever ctx wrote it; a reader
// takes those rows from sources. The snapshot is valid only while its triggers exist: dropping sources
// (a schema rebuild) drops them, and they are created again only in the transaction that packs a new
// snapshot. These tables and triggers are created in place the first time a snapshot is packed: an
// index without them is read as before (schemaVersion unchanged).
const snapSchema = `
CREATE TABLE IF NOT EXISTS sources_snap(id INTEGER PRIMARY KEY CHECK (id = 1), data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS sources_dirty(path TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS sources_dirty_ins AFTER INSERT ON sources BEGIN
	INSERT OR IGNORE INTO sources_dirty(path) VALUES (new.path); END;
CREATE TRIGGER IF NOT EXISTS sources_dirty_upd AFTER UPDATE ON sources BEGIN
	INSERT OR IGNORE INTO sources_dirty(path) VALUES (old.path);
	INSERT OR IGNORE INTO sources_dirty(path) VALUES (new.path); END;
CREATE TRIGGER IF NOT EXISTS sources_dirty_del AFTER DELETE ON sources BEGIN
	INSERT OR IGNORE INTO sources_dirty(path) VALUES (old.path); END;
`

// snapVersion is the first byte of a packed snapshot: a snapshot of another version is not read. 2: each
// row holds the ctime and inode (schema 7).
const snapVersion = 2

// snapRepackMin: a refresh packs the snapshot again when it is missing or when more than
// max(snapRepackMin, rows/16) rows changed since it was packed (the changed rows are read one by one).
var snapRepackMin = 256

// readSnapshot reads the snapshot and the rows changed since it was packed, in one statement (one read
// transaction). ok is false when there is no valid snapshot (never packed, its triggers dropped, a
// version this ctx does not read, or an index without the tables): the caller reads sources instead.
// dirty maps each changed key to its row (nil: the row was deleted).
func (ix *Index) readSnapshot(ctx context.Context) (data []byte, dirty map[string]*sourceRow, ok bool) {
	rows, err := ix.db.QueryContext(ctx, `SELECT 0, data, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM sources_snap
		WHERE id = 1 AND (SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ('sources_dirty_ins', 'sources_dirty_upd', 'sources_dirty_del')) = 3
	UNION ALL
	SELECT 1, d.path, s.format, s.parser_rev, s.size, s.mtime, s.ctime, s.ino, s.offset, s.session_id FROM sources_dirty d LEFT JOIN sources s ON s.path = d.path`)
	if err != nil {
		return nil, nil, false // no such table: an index whose snapshot was never packed
	}
	defer rows.Close()
	dirty = map[string]*sourceRow{}
	for rows.Next() {
		var (
			kind                                 int
			key                                  []byte
			format, session                      sql.NullString
			rev, size, mtime, ctime, ino, offset sql.NullInt64
		)
		if err := rows.Scan(&kind, &key, &format, &rev, &size, &mtime, &ctime, &ino, &offset, &session); err != nil {
			return nil, nil, false
		}
		if kind == 0 {
			data = key
			continue
		}
		if !format.Valid {
			dirty[string(key)] = nil
			continue
		}
		dirty[string(key)] = &sourceRow{partial: true, format: format.String, rev: rev.Int64, size: size.Int64,
			mtime: mtime.Int64, ctime: ctime.Int64, ino: ino.Int64, offset: offset.Int64, sessionID: session.String}
	}
	if rows.Err() != nil || len(data) == 0 || data[0] != snapVersion {
		return nil, nil, false
	}
	return data, dirty, true
}

// snapRow is one decoded entry of a packed snapshot.
type snapRow struct {
	key                                  []byte // into the decoder's buffer: valid until the next entry
	format, session                      []byte // into the snapshot
	rev, size, mtime, ctime, ino, offset int64
}

// snapDecoder walks the rows of a packed snapshot (after its version and row count): per row, the length of the prefix it shares with the previous
// key and the rest of its key, the format, the parser revision, size, mtime, ctime, inode and offset (varints) and
// the session id; strings as a uvarint length and the bytes.
type snapDecoder struct {
	data        []byte
	key         []byte
	err         error
	count, seen uint64 // the rows the snapshot says it holds, the rows next decoded
}

// newSnapDecoder is the decoder of the rows of the packed snapshot data (its version byte first), having
// read their count; ok is false when that cannot be read.
func newSnapDecoder(data []byte) (d *snapDecoder, ok bool) {
	d = &snapDecoder{data: data[1:]}
	d.count = d.uvarint()
	return d, d.err == nil
}

// end decodes the rows left and reports whether the snapshot was read whole: no malformed row, and the
// number of rows it says. A snapshot is read only whole.
func (d *snapDecoder) end() bool {
	var r snapRow
	for d.next(&r) {
	}
	return d.err == nil && d.seen == d.count
}

func (d *snapDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.data)
	if !d.skip(n) {
		return 0
	}
	return v
}

func (d *snapDecoder) varint() int64 {
	v, n := binary.Varint(d.data)
	if !d.skip(n) {
		return 0
	}
	return v
}

// skip drops the n bytes a varint read took; n <= 0 (binary.Uvarint's "no varint here") is the
// decoder's error and ends the data.
func (d *snapDecoder) skip(n int) bool {
	if n <= 0 {
		d.err = errors.New("source snapshot: bad varint")
		d.data = nil
		return false
	}
	d.data = d.data[n:]
	return true
}

func (d *snapDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.data)) {
		d.err = errors.New("source snapshot: truncated")
		d.data = nil
		return nil
	}
	b := d.data[:n:n]
	d.data = d.data[n:]
	return b
}

// next decodes the next row into r; false at the end or on a malformed snapshot (d.err).
func (d *snapDecoder) next(r *snapRow) bool {
	if len(d.data) == 0 || d.err != nil {
		return false
	}
	shared := d.uvarint()
	if d.err == nil && shared > uint64(len(d.key)) {
		d.err = errors.New("source snapshot: bad prefix")
	}
	if d.err != nil {
		return false
	}
	rest := d.bytes()
	d.key = append(d.key[:shared], rest...)
	r.key = d.key
	r.format = d.bytes()
	r.rev, r.size, r.mtime, r.ctime, r.ino, r.offset = d.varint(), d.varint(), d.varint(), d.varint(), d.varint(), d.varint()
	r.session = d.bytes()
	if d.err != nil {
		return false
	}
	d.seen++
	return true
}

// snapEncoder packs rows given in increasing key order.
type snapEncoder struct {
	buf  []byte
	prev string
	n    int
}

func (e *snapEncoder) str(s string) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *snapEncoder) add(key, format string, rev, size, mtime, ctime, ino, offset int64, session string) {
	shared := 0
	for shared < len(key) && shared < len(e.prev) && key[shared] == e.prev[shared] {
		shared++
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(shared))
	e.str(key[shared:])
	e.str(format)
	e.buf = binary.AppendVarint(e.buf, rev)
	e.buf = binary.AppendVarint(e.buf, size)
	e.buf = binary.AppendVarint(e.buf, mtime)
	e.buf = binary.AppendVarint(e.buf, ctime)
	e.buf = binary.AppendVarint(e.buf, ino)
	e.buf = binary.AppendVarint(e.buf, offset)
	e.str(session)
	e.prev = key
	e.n++
}

// bytes returns the packed snapshot: the version, the number of rows (uvarint), the rows.
func (e *snapEncoder) bytes() []byte {
	out := binary.AppendUvarint([]byte{snapVersion}, uint64(e.n))
	return append(out, e.buf...)
}

// loadSnapshot is loadSources from the snapshot: out[i] is srcs[i]'s recorded state (nil: never
// imported); keys and order are srcs' keys and their order by key. ok is false when the snapshot is
// malformed (the caller reads sources).
func loadSnapshot(data []byte, dirty map[string]*sourceRow, keys []string, order []int) (out []*sourceRow, ok bool) {
	out = make([]*sourceRow, len(keys))
	d, ok := newSnapDecoder(data)
	if !ok {
		return nil, false
	}
	var r snapRow
	have := d.next(&r)
	// The rows of the sources found, allocated together; a format string is shared by the rows that
	// have it (there are a handful).
	rows := make([]sourceRow, 0, len(keys))
	var formats []string
	format := func(b []byte) string {
		for _, f := range formats {
			if f == string(b) {
				return f
			}
		}
		formats = append(formats, string(b))
		return formats[len(formats)-1]
	}
	for j := 0; j < len(order); {
		key := keys[order[j]]
		var row *sourceRow
		dr, isDirty := dirty[key]
		if isDirty {
			row = dr
		} else {
			for have && string(r.key) < key {
				have = d.next(&r)
			}
			if d.err != nil {
				return nil, false
			}
			if have && string(r.key) == key {
				rows = append(rows, sourceRow{partial: true, format: format(r.format), rev: r.rev, size: r.size, mtime: r.mtime, ctime: r.ctime, ino: r.ino,
					offset: r.offset, sessionID: string(r.session)})
				row = &rows[len(rows)-1]
			}
		}
		// A source named twice gets a row of its own (prepareFrom must not see another's changes).
		for first := true; j < len(order) && keys[order[j]] == key; j++ {
			switch {
			case row == nil:
			case first && !isDirty:
				out[order[j]] = row
			default:
				cp := *row
				out[order[j]] = &cp
			}
			first = false
		}
	}
	if !d.end() {
		return nil, false
	}
	return out, true
}

// eachSnapshot calls fn with the key, format and session id of every row the snapshot and the rows
// changed since it was packed (dirty; readSnapshot) hold, the rows of sources. It returns false, having
// called fn for no row, when the snapshot is malformed (the caller reads sources).
func eachSnapshot(data []byte, dirty map[string]*sourceRow, fn func(key, format, session string)) bool {
	d, ok := newSnapDecoder(data)
	if !ok {
		return false
	}
	type rec struct{ key, format, session string }
	var out []rec
	var r snapRow
	for d.next(&r) {
		if _, isDirty := dirty[string(r.key)]; isDirty {
			continue
		}
		out = append(out, rec{string(r.key), string(r.format), string(r.session)})
	}
	if !d.end() {
		return false
	}
	for _, o := range out {
		fn(o.key, o.format, o.session)
	}
	for key, row := range dirty {
		if row != nil {
			fn(key, row.format, row.sessionID)
		}
	}
	return true
}

// packSnapshot packs every row of sources into the snapshot, in one write transaction on db (the
// import's connection, whose memory map is off, or the index's pool) that also creates the tables and
// triggers when missing and empties sources_dirty.
func packSnapshot(ctx context.Context, db interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pack source snapshot: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	if _, err := tx.ExecContext(ctx, snapSchema); err != nil {
		return fmt.Errorf("pack source snapshot: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT path, format, parser_rev, size, mtime, ctime, ino, offset, session_id FROM sources ORDER BY path`)
	if err != nil {
		return fmt.Errorf("pack source snapshot: %w", err)
	}
	var enc snapEncoder
	for rows.Next() {
		var (
			key, format, session                 string
			rev, size, mtime, ctime, ino, offset int64
		)
		if err := rows.Scan(&key, &format, &rev, &size, &mtime, &ctime, &ino, &offset, &session); err != nil {
			rows.Close()
			return fmt.Errorf("pack source snapshot: %w", err)
		}
		enc.add(key, format, rev, size, mtime, ctime, ino, offset, session)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pack source snapshot: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO sources_snap(id, data) VALUES (1, ?)`, enc.bytes()); err != nil {
		return fmt.Errorf("pack source snapshot: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sources_dirty`); err != nil {
		return fmt.Errorf("pack source snapshot: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("pack source snapshot: %w", err)
	}
	return nil
}

// sortedKeys returns srcs' keys and the indexes of srcs in key order.
func sortedKeys(srcs []Source) (keys []string, order []int) {
	keys = make([]string, len(srcs))
	order = make([]int, len(srcs))
	for i, s := range srcs {
		keys[i], order[i] = s.key(), i
	}
	sort.Slice(order, func(a, b int) bool { return strings.Compare(keys[order[a]], keys[order[b]]) < 0 })
	return keys, order
}
