package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// SchemaVersion is the index schema this ctx reads and writes (PRAGMA user_version of index.db). An index
// of an older version is rebuilt by the next Open (an import); one of a newer version is refused
// (docs/history.md "The index").
const SchemaVersion = schemaVersion

// IndexState is what Inspect finds of the index in a directory, without opening it for use.
type IndexState struct {
	Path          string // the index file, dir/index.db
	Exists        bool   // index.db is a regular file
	SchemaVersion int    // its PRAGMA user_version (0 when missing, or empty)
	// Damaged is set when the file is not a readable SQLite database (IsDamaged); Err holds other failures
	// to read it. Either leaves the fields below zero.
	Damaged bool
	Err     error
	// Generation is meta.generation; ChangedAt the time of the import that last moved it (zero when no
	// import recorded one).
	Generation int64
	ChangedAt  time.Time
}

// Current is whether the index can be read as it is: it exists and has this ctx's schema.
func (st IndexState) Current() bool {
	return st.Exists && !st.Damaged && st.Err == nil && st.SchemaVersion == schemaVersion
}

// Inspect reads the schema version, the generation and the time of the last change of the index in dir
// through a read-only connection: unlike Open it never creates the index, never rebuilds one of an older
// schema, and writes nothing (the MCP status tool and `ctx status` use it: docs/mcp.md "status"). A
// missing index is Exists false and no error.
func Inspect(ctx context.Context, dir string) IndexState {
	st := IndexState{Path: filepath.Join(dir, "index.db")}
	fi, err := os.Lstat(st.Path)
	if errors.Is(err, os.ErrNotExist) {
		return st
	}
	if err != nil {
		st.Err = err
		return st
	}
	if !fi.Mode().IsRegular() {
		st.Err = fmt.Errorf("%s is not a regular file", st.Path)
		return st
	}
	st.Exists = true
	if DamageNoted(dir) != "" { // a read met a damaged page (NoteDamaged): the next import checks and rebuilds
		st.Damaged = true
		return st
	}
	db, err := sql.Open("sqlite", "file:"+st.Path+"?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		st.Err = err
		return st
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	fail := func(err error) IndexState {
		if IsDamaged(err) {
			st.Damaged = true
		} else {
			st.Err = err
		}
		return st
	}
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&st.SchemaVersion); err != nil {
		return fail(err)
	}
	if st.SchemaVersion == 0 {
		return st // created, never given a schema (Open does it)
	}
	gen, changed, err := readMetaTimes(ctx, db)
	if err != nil {
		return fail(err)
	}
	st.Generation, st.ChangedAt = gen, changed
	return st
}

// Freshness is the index's generation and the time of the import that last moved it (zero when none
// recorded one: an index of a ctx before changed_at, until its next import that changes something).
func (ix *Index) Freshness(ctx context.Context) (generation int64, changedAt time.Time, err error) {
	return readMetaTimes(ctx, ix.db)
}

// readMetaTimes reads meta.generation and meta.changed_at in one statement (one snapshot).
func readMetaTimes(ctx context.Context, db *sql.DB) (int64, time.Time, error) {
	var gen, changed sql.NullString
	err := db.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key='generation'),
		(SELECT value FROM meta WHERE key='changed_at')`).Scan(&gen, &changed)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read generation: %w", err)
	}
	var g int64
	if gen.Valid {
		if g, err = strconv.ParseInt(gen.String, 10, 64); err != nil {
			return 0, time.Time{}, fmt.Errorf("read generation: %w", err)
		}
	}
	var at time.Time
	if ms, err := strconv.ParseInt(changed.String, 10, 64); changed.Valid && err == nil && ms > 0 {
		at = time.UnixMilli(ms).UTC()
	}
	return g, at, nil
}
