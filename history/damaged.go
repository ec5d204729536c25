package history

import (
	"errors"
	"os"
	"path/filepath"

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
	for _, name := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
