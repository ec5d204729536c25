package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctx-dev/ctx/store/checkoutrec"
	fastjson "github.com/segmentio/encoding/json"
)

// The checkout record and the stat data it keeps are package checkoutrec's (standard library only), which
// the lean front uses too when it answers the post-checkout hook (docs/architecture.md "The lean front").
type (
	// Record is the content of RecordFile (checkoutrec.Record).
	Record = checkoutrec.Record
	// RecordEntry is one file of the checkout record (checkoutrec.RecordEntry).
	RecordEntry = checkoutrec.RecordEntry
	// FileStat is the stat data of a file of the checked-out tree (checkoutrec.FileStat).
	FileStat = checkoutrec.FileStat
)

const (
	// RecordFile is the checkout record inside the checked-out tree (checkoutrec.RecordFile).
	RecordFile = checkoutrec.RecordFile
	// RecordLogFile holds the changes to RecordFile since it was last written whole (checkoutrec.RecordLogFile).
	RecordLogFile = checkoutrec.RecordLogFile
	// IgnoreFile is the .gitignore ctx keeps in the checked-out tree (checkoutrec.IgnoreFile).
	IgnoreFile = checkoutrec.IgnoreFile
	// IgnoreContent is IgnoreFile's content (checkoutrec.IgnoreContent).
	IgnoreContent = checkoutrec.IgnoreContent
)

// errRecordCorrupt is a checkout record that is not valid JSON of its shape: a refresh then compares every
// path, as without a record.
var errRecordCorrupt = checkoutrec.ErrCorrupt

// lazyLookupMax is checkoutrec.LazyLookupMax.
const lazyLookupMax = checkoutrec.LazyLookupMax

// segmentio/encoding/json decodes the same as encoding/json (the history importer uses it too) in about
// half the time: parsing the record was a third of ctx status at 10,000 entries (bench/README.md).
var _ = func() bool { checkoutrec.Unmarshal = fastjson.Unmarshal; return true }()

// StatOf is the stat data of fi (from os.Stat or os.Lstat).
func StatOf(fi fs.FileInfo) FileStat { return *checkoutrec.StatOf(fi) }

// statOf takes the stat data of fi (an lstat).
func statOf(fi fs.FileInfo) *FileStat { return checkoutrec.StatOf(fi) }

// lstatIn is checkoutrec.LstatIn: an lstat of name in the folder d, opened in r, that never follows a link.
func lstatIn(r *os.Root, d *os.File, name string) (fs.FileMode, FileStat, error) {
	return checkoutrec.LstatIn(r, d, name)
}

// recordFiles is the checked-out tree as checkoutrec reads and writes the record through it.
type recordFiles struct{ c *checkoutFS }

func (f recordFiles) ReadFile(p string) ([]byte, error)      { return f.c.readFile(p) }
func (f recordFiles) WriteFile(p string, data []byte) error  { return f.c.writeFile(p, data) }
func (f recordFiles) AppendFile(p string, data []byte) error { return f.c.appendFile(p, data) }
func (f recordFiles) Remove(p string) error                  { return f.c.remove(p) }

// recordName is the path of RecordFile, for errors.
func (s *Store) recordName() string { return filepath.Join(s.CheckoutRoot(), RecordFile) }

// ReadRecord reads the checkout record; nil when the tree was never checked out.
func (s *Store) ReadRecord() (*Record, error) {
	root := s.CheckoutRoot()
	if root == "" {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(root, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkout record: %w", err)
	}
	lb, err := os.ReadFile(filepath.Join(root, RecordLogFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read checkout record: %w", err)
	}
	return s.parsed.Parse(filepath.Join(root, RecordFile), b, lb)
}

// readRecordFS reads the checkout record through the checked-out tree's root (checkoutrec.Read); an empty
// record when there is none.
func (s *Store) readRecordFS(fsys *checkoutFS) (*Record, bool, error) {
	return checkoutrec.Read(recordFiles{fsys}, s.recordName(), &s.parsed)
}

// readRecordLazy reads the checkout record for a refresh (checkoutrec.ReadLazy): the small fields and the
// log, the entries of RecordFile only when looked up.
func (s *Store) readRecordLazy(fsys *checkoutFS) (*Record, bool, error) {
	return checkoutrec.ReadLazy(recordFiles{fsys}, s.recordName(), &s.parsed)
}

// writeRecordFS writes the record (checkoutrec.Write).
func writeRecordFS(fsys *checkoutFS, rec *Record) error {
	return checkoutrec.Write(recordFiles{fsys}, rec)
}

// logLines is checkoutrec.LogLines: the complete lines of RecordLogFile's bytes that belong to the record
// writing gen.
func logLines(log []byte, gen string) []checkoutrec.LogLine { return checkoutrec.LogLines(log, gen) }

// parseRecordHead is checkoutrec.ParseHead: the fields of RecordFile's bytes before "files".
func parseRecordHead(b []byte) (*Record, int, bool) { return checkoutrec.ParseHead(b) }
