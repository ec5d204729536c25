package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	fastjson "github.com/segmentio/encoding/json"
)

// RecordFile is the checkout record inside the checked-out tree: which commit of each scope it mirrors
// and the blob of every file it wrote, so that hand edits can be told apart from ctx's own writes.
const RecordFile = ".ctx-checkout.json"

// RecordLogFile holds the changes to RecordFile since it was last written whole, one JSON object a line
// (docs/architecture.md "Where things live"): a refresh of a few files of a big store appends a line
// instead of rewriting a record of one line per file of the store, as git's split index keeps its
// changes apart from a shared index (gitformat-index(5) "Split index").
const RecordLogFile = ".ctx-checkout.log"

// Record is the content of RecordFile. The small fields come before Files, so that a refresh reads them
// without decoding the files (readRecordLazy).
type Record struct {
	Commits map[Scope]string `json:"commits"`
	// Incomplete says that Files is what is on disk but may not be all of Commits: a refresh was
	// interrupted (a kill, the hook's time limit) and what it had written was recorded afterwards from its
	// journal. The next refresh compares every path instead of the changes since Commits.
	Incomplete bool `json:"incomplete,omitempty"`
	// Clean says that the trees of Commits hold no entry ctx does not check out (no Problem): the next
	// refresh then knows the tips' problems from what changed since (Refreshed.Clean), and the hooks need
	// not walk the whole tree to find none (docs/hooks.md).
	Clean bool `json:"clean,omitempty"`
	// Gen names this writing of RecordFile: the lines of RecordLogFile that apply to it carry the same
	// value, so that lines left by a crash after the record was rewritten whole are ignored.
	Gen   string                 `json:"gen,omitempty"`
	Files map[string]RecordEntry `json:"files"`

	raw    []byte // the bytes of RecordFile the record was read from (writeRecordFS skips writing the same bytes)
	logRaw []byte // the bytes of RecordLogFile it was read with

	// A record read lazily (readRecordLazy) has in Files only the entries looked up or changed: src finds
	// the others in RecordFile's bytes; gone are paths removed since (by the log or this process), and
	// changed what this process changed (what writeRecordFS appends to the log).
	src     *recordSource
	gone    map[string]bool
	changed map[string]bool
	head    recordLine // the small fields as read (an append that changes nothing is not written)
}

// RecordEntry is one file of the checkout record.
type RecordEntry struct {
	Scope Scope  `json:"scope"`
	Blob  string `json:"blob"`
	// Stat is the file's stat data when ctx last knew it held Blob, as git's index keeps it: while the
	// file's stat data are the same (and it is older than the record, see HandEdits), it is not read
	// again. Absent in the journal and in records of older ctx versions: the file is then read.
	Stat *FileStat `json:"stat,omitempty"`
}

// recordLine is one line of RecordLogFile: the record's small fields after a refresh and the entries it
// changed (null: removed).
type recordLine struct {
	Gen        string                  `json:"gen"`
	Commits    map[Scope]string        `json:"commits"`
	Incomplete bool                    `json:"incomplete,omitempty"`
	Clean      bool                    `json:"clean,omitempty"`
	Files      map[string]*RecordEntry `json:"files"`
}

// Record sizes: below lazyRecordMin bytes the record is read and written whole (cheaper than two files);
// above it, changes are appended to RecordLogFile until the log reaches a quarter of the record or
// maxRecordLog bytes, when the record is written whole again: each entry is rewritten after at most four
// times its size of appended changes, and every refresh parses at most maxRecordLog bytes of log (about
// 200 refreshes of one file; a whole rewrite at 10,000 entries costs about as much as parsing 64 KiB of
// log 30 times).
var lazyRecordMin = 256 << 10 // a variable for tests

const maxRecordLog = 64 << 10

// lazyLookupMax is how many entries a refresh looks up in a lazily read record's bytes (Record.entry scans
// them, about 0.1 ms at 10,000 entries) before it parses the record whole instead (about 25 ms).
const lazyLookupMax = 100

// errRecordCorrupt is a checkout record that is not valid JSON of its shape (cut short, edited by hand):
// a refresh then compares every path, as without a record.
var errRecordCorrupt = errors.New("corrupt checkout record")

// entry returns the entry of p.
func (r *Record) entry(p string) (RecordEntry, bool) {
	if e, ok := r.Files[p]; ok {
		return e, true
	}
	if r.src == nil || r.gone[p] {
		return RecordEntry{}, false
	}
	if !strings.ContainsAny(p, "./") {
		// A name that could be a field of an entry ("blob"): no store path is one, but look it up in the
		// parsed record rather than guess.
		if r.loadAll() != nil {
			return RecordEntry{}, false
		}
		e, ok := r.Files[p]
		return e, ok
	}
	e, ok := r.src.lookup(p)
	if ok {
		r.Files[p] = e
	}
	return e, ok
}

// put records e for p.
func (r *Record) put(p string, e RecordEntry) {
	r.Files[p] = e
	delete(r.gone, p)
	r.mark(p)
}

// remove removes p from the record.
func (r *Record) remove(p string) {
	delete(r.Files, p)
	if r.src != nil {
		r.gone[p] = true
	}
	r.mark(p)
}

func (r *Record) mark(p string) {
	if r.changed == nil {
		r.changed = map[string]bool{}
	}
	r.changed[p] = true
}

// loadAll makes Files hold every entry (a lazily read record is parsed whole, its changes kept).
func (r *Record) loadAll() error {
	if r.src == nil {
		return nil
	}
	var whole *Record
	var err error
	if r.src.cache != nil {
		// The record a hand-edit scan of this process parsed already (a pull scans, merges, then refreshes).
		whole, err = r.src.cache.parse(r.src.name, r.raw, r.logRaw)
	} else {
		whole, err = parseRecordLog(r.src.name, r.raw, r.logRaw)
	}
	if err != nil {
		return err
	}
	for p := range r.changed {
		if e, ok := r.Files[p]; ok {
			whole.Files[p] = e
		} else {
			delete(whole.Files, p)
		}
	}
	r.Files, r.src, r.gone = whole.Files, nil, nil
	return nil
}

// recordSource finds entries in the bytes of RecordFile without decoding the others.
type recordSource struct {
	name  string
	files []byte        // the bytes of the "files" object, from its '{'
	cache *parsedRecord // the Store's parsed record, which loadAll goes through; nil: parse
}

// lookup finds p's entry: json.Marshal writes a map's keys escaped one way and sorted, each preceded by
// '{' or ',' and followed by ':', which no string of the record can hold unescaped.
func (src *recordSource) lookup(p string) (RecordEntry, bool) {
	key, err := json.Marshal(p)
	if err != nil {
		return RecordEntry{}, false
	}
	key = append(key, ':')
	rest := src.files
	for {
		i := bytes.Index(rest, key)
		if i < 0 {
			return RecordEntry{}, false
		}
		if i > 0 && (rest[i-1] == '{' || rest[i-1] == ',') {
			var e RecordEntry
			if json.NewDecoder(bytes.NewReader(rest[i+len(key):])).Decode(&e) != nil {
				return RecordEntry{}, false
			}
			return e, true
		}
		rest = rest[i+1:]
	}
}

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
	return s.parsed.parse(filepath.Join(root, RecordFile), b, lb)
}

// parsedRecord keeps the checkout record a Store parsed last with the bytes it was parsed from: one
// command reads the record several times (ctx status: the refresh, the hand-edit scan), and parsing a
// record of 10,000 files took most of ctx status; a copy of the parsed record is much cheaper. The bytes
// are compared whole, so a record rewritten by another process is always parsed again.
type parsedRecord struct {
	mu       sync.Mutex
	raw, log []byte
	rec      *Record
}

// parse is parseRecordLog through the cache. The Record returned is the caller's to change (its maps are
// copies; a RecordEntry's Stat is never changed in place, only replaced).
func (c *parsedRecord) parse(name string, b, log []byte) (*Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rec == nil || !bytes.Equal(c.raw, b) || !bytes.Equal(c.log, log) {
		rec, err := parseRecordLog(name, b, log)
		if err != nil {
			return nil, err
		}
		c.raw, c.log, c.rec = b, log, rec
	}
	return &Record{Commits: maps.Clone(c.rec.Commits), Files: maps.Clone(c.rec.Files), Incomplete: c.rec.Incomplete,
		Clean: c.rec.Clean, Gen: c.rec.Gen, raw: c.raw, logRaw: c.log}, nil
}

// drop forgets the parsed record.
func (c *parsedRecord) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw, c.log, c.rec = nil, nil, nil
}

// recordsParsed counts parseRecord's calls (tests check that one command parses the record once).
var recordsParsed atomic.Int64

// parseRecordLog parses RecordFile's bytes b whole and applies the lines of RecordLogFile's bytes log
// that carry its Gen (a last line cut short by a crash is ignored).
func parseRecordLog(name string, b, log []byte) (*Record, error) {
	recordsParsed.Add(1)
	var rec Record
	// segmentio/encoding/json decodes the same as encoding/json (the history importer uses it too) in
	// about half the time: this parse was a third of ctx status at 10,000 entries (bench/README.md).
	if err := fastjson.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("checkout record %s: %w: %w", name, errRecordCorrupt, err)
	}
	if rec.Files == nil {
		rec.Files = map[string]RecordEntry{}
	}
	if rec.Commits == nil {
		rec.Commits = map[Scope]string{}
	}
	rec.raw, rec.logRaw = b, log
	for _, l := range logLines(log, rec.Gen) {
		rec.Commits, rec.Incomplete, rec.Clean = l.Commits, l.Incomplete, l.Clean
		for p, e := range l.Files {
			if e == nil {
				delete(rec.Files, p)
			} else {
				rec.Files[p] = *e
			}
		}
	}
	return &rec, nil
}

// logLines returns the complete lines of log that belong to the record writing gen ("" when the record
// has none: no line does).
func logLines(log []byte, gen string) []recordLine {
	var out []recordLine
	if gen == "" {
		return nil
	}
	for len(log) > 0 {
		i := bytes.IndexByte(log, '\n')
		if i < 0 {
			break // cut short by a crash: its refresh left a journal, which the next refresh applies
		}
		var l recordLine
		// segmentio's decoder, as for the record: the log reaches 64 KiB, and with encoding/json its lines
		// were half of reading the record in a hook's refresh at 10,000 entries.
		if fastjson.Unmarshal(log[:i], &l) == nil && l.Gen == gen && l.Commits != nil {
			out = append(out, l)
		}
		log = log[i+1:]
	}
	return out
}

// readRecordFS reads the checkout record through the checked-out tree's root; an empty record (no
// commits, no files) when there is none.
func (s *Store) readRecordFS(fsys *checkoutFS) (rec *Record, found bool, err error) {
	b, err := fsys.readFile(RecordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &Record{Commits: map[Scope]string{}, Files: map[string]RecordEntry{}}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	lb, err := fsys.readFile(RecordLogFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	rec, err = s.parsed.parse(filepath.Join(s.CheckoutRoot(), RecordFile), b, lb)
	return rec, err == nil, err
}

// readRecordLazy reads the checkout record for a refresh: the small fields and the log, the entries of
// RecordFile only when looked up (Record.entry). A record below lazyRecordMin bytes, or one written by an
// older ctx (no Gen), is parsed whole.
func (s *Store) readRecordLazy(fsys *checkoutFS) (rec *Record, found bool, err error) {
	b, err := fsys.readFile(RecordFile)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(b) < lazyRecordMin {
		return s.readRecordFS(fsys)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	name := filepath.Join(s.CheckoutRoot(), RecordFile)
	rec, off, ok := parseRecordHead(b)
	if !ok {
		return s.readRecordFS(fsys)
	}
	lb, err := fsys.readFile(RecordLogFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	rec.raw, rec.logRaw = b, lb
	rec.src = &recordSource{name: name, files: b[off:], cache: &s.parsed}
	rec.Files, rec.gone = map[string]RecordEntry{}, map[string]bool{}
	for _, l := range logLines(lb, rec.Gen) {
		rec.Commits, rec.Incomplete, rec.Clean = l.Commits, l.Incomplete, l.Clean
		for p, e := range l.Files {
			if e == nil {
				delete(rec.Files, p)
				rec.gone[p] = true
			} else {
				rec.Files[p] = *e
				delete(rec.gone, p)
			}
		}
	}
	rec.head = recordLine{Commits: maps.Clone(rec.Commits), Incomplete: rec.Incomplete, Clean: rec.Clean}
	return rec, true, nil
}

// parseRecordHead decodes the fields of RecordFile's bytes b before "files" and returns the offset of the
// files object; ok false when "files" is not the last field or the record has no Gen (an older ctx wrote
// it: it is parsed whole).
func parseRecordHead(b []byte) (rec *Record, off int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, 0, false
	}
	rec = &Record{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, 0, false
		}
		key, _ := t.(string)
		var dst any
		switch key {
		case "commits":
			dst = &rec.Commits
		case "incomplete":
			dst = &rec.Incomplete
		case "clean":
			dst = &rec.Clean
		case "gen":
			dst = &rec.Gen
		case "files":
			off = int(dec.InputOffset())
			// The files object, then the record's closing brace and nothing else.
			end := bytes.LastIndexByte(b, '}')
			if rec.Gen == "" || rec.Commits == nil || end < off {
				return nil, 0, false
			}
			return rec, off, true
		default:
			return nil, 0, false
		}
		if err := dec.Decode(dst); err != nil {
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// newGen is a new Record.Gen.
func newGen() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeRecordFS writes the record: a lazily read one whose changes are small appends them to
// RecordLogFile; otherwise RecordFile is written whole as compact JSON (with a new Gen, which voids the
// log's lines, and the log removed), unless it holds these bytes already (a refresh with nothing to do
// writes nothing).
func writeRecordFS(fsys *checkoutFS, rec *Record) error {
	if rec.src != nil {
		done, err := appendRecordLog(fsys, rec)
		if done || err != nil {
			return err
		}
		if err := rec.loadAll(); err != nil {
			return err
		}
	}
	gen := rec.Gen
	if gen == "" || len(rec.logRaw) > 0 {
		rec.Gen = newGen()
	}
	b, err := encodeRecord(rec)
	if err != nil {
		rec.Gen = gen
		return err
	}
	b = append(b, '\n')
	if bytes.Equal(b, rec.raw) && len(rec.logRaw) == 0 {
		return nil
	}
	if err := fsys.writeFile(RecordFile, b); err != nil {
		rec.Gen = gen
		return fmt.Errorf("write checkout record: %w", err)
	}
	rec.raw = b
	if len(rec.logRaw) > 0 {
		if err := fsys.remove(RecordLogFile); err != nil {
			return fmt.Errorf("write checkout record: %w", err)
		}
		rec.logRaw = nil
	}
	rec.changed = nil
	return nil
}

// appendRecordLog appends rec's changes to RecordLogFile; done false when the record must be written
// whole instead (the log would pass a quarter of the record, or its last line was cut short).
func appendRecordLog(fsys *checkoutFS, rec *Record) (done bool, err error) {
	if len(rec.logRaw) > 0 && rec.logRaw[len(rec.logRaw)-1] != '\n' {
		return false, nil
	}
	l := recordLine{Gen: rec.Gen, Commits: rec.Commits, Incomplete: rec.Incomplete, Clean: rec.Clean,
		Files: map[string]*RecordEntry{}}
	if len(rec.changed) == 0 && rec.Incomplete == rec.head.Incomplete && rec.Clean == rec.head.Clean &&
		maps.Equal(rec.Commits, rec.head.Commits) {
		return true, nil // nothing to record
	}
	for p := range rec.changed {
		if e, ok := rec.Files[p]; ok {
			l.Files[p] = &e
		} else {
			l.Files[p] = nil
		}
	}
	b, err := json.Marshal(l)
	if err != nil {
		return false, err
	}
	b = append(b, '\n')
	if n := len(rec.logRaw) + len(b); n > len(rec.raw)/4 || n > maxRecordLog {
		return false, nil
	}
	if err := fsys.appendFile(RecordLogFile, b); err != nil {
		return false, fmt.Errorf("write checkout record: %w", err)
	}
	rec.logRaw = append(rec.logRaw, b...)
	rec.changed = nil
	return true, nil
}
