package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
)

// ErrNewerIndex is the error of opening an index whose schema is newer than this ctx reads (written by a
// newer ctx): it is left as it is (docs/history.md "The index").
var ErrNewerIndex = errors.New("the index was built by a newer ctx")

// IsDamaged reports whether err (anywhere in its chain) is SQLite's SQLITE_CORRUPT ("database disk image
// is malformed") or SQLITE_NOTADB ("file is not a database"): the index file is damaged, by a crash of
// the disk or a hand edit. The index only caches the transcripts, so the remedy is to rebuild it
// (RemoveIndex, then an import); docs/history.md "A damaged index".
func IsDamaged(err error) bool {
	var de *damagedError
	if errors.As(err, &de) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary result code of an extended one
	case 11, 26: // SQLITE_CORRUPT, SQLITE_NOTADB
		return true
	}
	return false
}

// RemoveIndex removes the index database of dir (index.db and SQLite's -wal and -shm files beside it);
// files that are not there are no error. The directory and anything else in it stay.
func RemoveIndex(dir string) error {
	for _, name := range []string{"index.db", "index.db-wal", "index.db-shm", damagedMarker} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// damagedMarker is the file beside index.db that says a read of the index met SQLITE_CORRUPT (noteDamaged):
// a damaged data page is seen only by the reads that reach it, not when the index is opened, so the next
// import checks the index (CheckNoted) and status reports it (Inspect). It holds the error's text.
const damagedMarker = "index.damaged"

// noteDamaged records, when *err is a damaged-index error, that the index of ix is damaged (the marker
// file; best effort). For a deferred call in the index's reading methods.
func (ix *Index) noteDamaged(err *error) {
	if err == nil || !IsDamaged(*err) || ix.dir == "" {
		return
	}
	NoteDamaged(ix.dir, *err)
}

// NoteDamaged records in dir that a read of its index failed with the damaged-index error cause (the
// marker damagedMarker, written once; best effort: a read-only directory keeps nothing). Callers that hit
// the error outside the Index's own methods (a reader's statement) call it.
func NoteDamaged(dir string, cause error) {
	p := filepath.Join(dir, damagedMarker)
	if _, err := os.Lstat(p); err == nil {
		return
	}
	msg := strings.ReplaceAll(cause.Error(), "\n", " ")
	_ = os.WriteFile(p, []byte(msg+"\n"), 0o600) //nolint:errcheck // best effort: the read's error is reported anyway
}

// DamageNoted returns the error a read of dir's index recorded (NoteDamaged), "" when none did.
func DamageNoted(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, damagedMarker))
	if err != nil {
		return ""
	}
	if m := strings.TrimSpace(string(b)); m != "" {
		return m
	}
	return "a read of the index failed: database disk image is malformed"
}

// CheckNoted checks the index of dir when a read recorded damage (NoteDamaged): PRAGMA quick_check over a
// read-only connection. It returns an error that IsDamaged when the check finds the index damaged (the
// caller rebuilds it: RemoveIndex, then an import), and removes the marker when the index is whole after
// all; with no marker it reads nothing (an import with nothing new stays cheap).
func CheckNoted(ctx context.Context, dir string) error {
	noted := DamageNoted(dir)
	if noted == "" {
		return nil
	}
	path := filepath.Join(dir, "index.db")
	if _, err := os.Lstat(path); err != nil {
		return nil // no index: nothing to check (RemoveIndex takes the marker with it)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		return fmt.Errorf("check the agent history index: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		if IsDamaged(err) {
			return fmt.Errorf("check the agent history index (%s): %w", noted, err)
		}
		return fmt.Errorf("check the agent history index: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("check the agent history index (%s): %w", noted, err)
		}
		if line != "ok" && len(problems) < 3 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check the agent history index (%s): %w", noted, err)
	}
	if len(problems) > 0 {
		return &damagedError{msg: fmt.Sprintf("the agent history index is damaged (%s; quick_check: %s)", noted, strings.Join(problems, "; "))}
	}
	_ = os.Remove(filepath.Join(dir, damagedMarker)) //nolint:errcheck // whole after all: the next check would say so again
	return nil
}

// ErrDamaged is a damaged index as an error that IsDamaged (for a remedy's wording).
var ErrDamaged error = &damagedError{msg: "the agent history index is damaged"}

// damagedError is a damaged index found by a check rather than by SQLite's error code.
type damagedError struct{ msg string }

func (e *damagedError) Error() string { return e.msg }
