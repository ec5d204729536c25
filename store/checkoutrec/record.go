// Package checkoutrec is the checkout record of .context/ (RecordFile, RecordLogFile: which commits the
// checked-out tree mirrors and the blob and stat data of every file a refresh wrote) and the stat data it
// keeps, read and written the same way by store and by the lean front (cmd/ctx-front), which answers the
// post-checkout hook on its happy path (docs/architecture.md "The lean front"). Standard library only.
package checkoutrec

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
)

// RecordFile is the checkout record inside the checked-out tree: which commit of each scope it mirrors
// and the blob of every file it wrote, so that hand edits can be told apart from ctx's own writes.
const RecordFile = ".ctx-checkout.json"

// RecordLogFile holds the changes to RecordFile since it was last written whole, one JSON object a line
// (docs/architecture.md "Where things live"): a refresh of a few files of a big store appends a line
// instead of rewriting a record of one line per file of the store, as git's split index keeps its
// changes apart from a shared index (gitformat-index(5) "Split index").
const RecordLogFile = ".ctx-checkout.log"

// IgnoreFile is the .gitignore ctx keeps at the root of the checked-out tree, holding IgnoreContent: its
// "*" ignores every file of .context/, itself too, and, being deeper, wins over any pattern of the
// repository's own .gitignore that would include them again (gitignore(5): "patterns in the higher level
// files are overridden by those in lower level files"). It is rewritten by every refresh that finds it
// missing or changed, never a hand edit, never committed (docs/architecture.md "Where things live").
const IgnoreFile = ".gitignore"

// IgnoreContent is the content of IgnoreFile.
const IgnoreContent = "# Written by ctx: git ignores everything in .context/ (a checkout of the context branch).\n*\n"

// Scope is where an entry lives (store.Scope, docs/format.md): "public", "private" or "ephemeral".
type Scope string

// Record is the content of RecordFile. The small fields come before Files, so that a refresh reads them
// without decoding the files (ReadLazy).
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

	raw    []byte // the bytes of RecordFile the record was read from (Write skips writing the same bytes)
	logRaw []byte // the bytes of RecordLogFile it was read with

	// A record read lazily (ReadLazy) has in Files only the entries looked up or changed: src finds
	// the others in RecordFile's bytes; gone are paths removed since (by the log or this process), and
	// changed what this process changed (what Write appends to the log).
	src     *recordSource
	gone    map[string]bool
	changed map[string]bool
	head    LogLine // the small fields as read (an append that changes nothing is not written)
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

// LogLine is one line of RecordLogFile: the record's small fields after a refresh and the entries it
// changed (null: removed).
type LogLine struct {
	Gen        string                  `json:"gen"`
	Commits    map[Scope]string        `json:"commits"`
	Incomplete bool                    `json:"incomplete,omitempty"`
	Clean      bool                    `json:"clean,omitempty"`
	Files      map[string]*RecordEntry `json:"files"`
}

// Record sizes: a record of at least LazyRecordMin bytes (every record, by default) is read lazily by a
// refresh and its changes are appended to RecordLogFile until the log would pass a quarter of the record
// or MaxRecordLog bytes, when the record is written whole again: each entry is rewritten after at most
// four times its size of appended changes, and every refresh parses at most MaxRecordLog bytes of log
// (about 200 refreshes of one file; a whole rewrite at 10,000 entries costs about as much as parsing 64 KiB
// of log 30 times). A small record gets a small log: at 100 entries (18 KB) a write of one entry appends
// a line of about 300 bytes fifteen times, then rewrites the record, where parsing and rewriting the whole
// record on every write was most of the lean front's refresh (docs/architecture.md "Hand edits"). A
// record below it is parsed whole and written whole (tests set it to exercise both paths).
var LazyRecordMin = 0 // a variable for tests

const MaxRecordLog = 64 << 10

// LazyLookupMax is how many entries a refresh looks up in a lazily read record's bytes (Record.Entry scans
// them, about 0.1 ms at 10,000 entries) before it parses the record whole instead (about 25 ms).
const LazyLookupMax = 100

// ErrCorrupt is a checkout record that is not valid JSON of its shape (cut short, edited by hand):
// a refresh then compares every path, as without a record.
var ErrCorrupt = errors.New("corrupt checkout record")

// Unmarshal decodes the record and its log's lines: encoding/json's, or a decoder that decodes the same
// (store sets segmentio/encoding/json's, about twice as fast: parsing the record was a third of ctx status
// at 10,000 entries; the lean front keeps encoding/json's, which it links already).
var Unmarshal = json.Unmarshal

// Entry returns the entry of p.
func (r *Record) Entry(p string) (RecordEntry, bool) {
	if e, ok := r.Files[p]; ok {
		return e, true
	}
	if r.src == nil || r.gone[p] {
		return RecordEntry{}, false
	}
	if !strings.ContainsAny(p, "./") {
		// A name that could be a field of an entry ("blob"): no store path is one, but look it up in the
		// parsed record rather than guess.
		if r.LoadAll() != nil {
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

// Put records e for p.
func (r *Record) Put(p string, e RecordEntry) {
	r.Files[p] = e
	delete(r.gone, p)
	r.mark(p)
}

// Remove removes p from the record.
func (r *Record) Remove(p string) {
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

// LoadAll makes Files hold every entry (a lazily read record is parsed whole, its changes kept).
func (r *Record) LoadAll() error {
	if r.src == nil {
		return nil
	}
	var whole *Record
	var err error
	if r.src.cache != nil {
		// The record a hand-edit scan of this process parsed already (a pull scans, merges, then refreshes).
		whole, err = r.src.cache.Parse(r.src.name, r.raw, r.logRaw)
	} else {
		whole, err = Parse(r.src.name, r.raw, r.logRaw)
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

// LoadAllWith is LoadAll with the whole record given instead of parsed: whole holds every entry of
// RecordFile's bytes with RecordLogFile's lines applied, as Parse of the record's bytes (Bytes) would
// return them, and becomes the record's (the caller keeps no reference to it). This process's changes are
// kept. A record not read lazily is left as it is.
func (r *Record) LoadAllWith(whole map[string]RecordEntry) {
	if r.src == nil {
		return
	}
	for p := range r.changed {
		if e, ok := r.Files[p]; ok {
			whole[p] = e
		} else {
			delete(whole, p)
		}
	}
	r.Files, r.src, r.gone = whole, nil, nil
}

// Lazy reports whether the record was read lazily and not loaded whole yet (ReadLazy, LoadAll).
func (r *Record) Lazy() bool { return r.src != nil }

// Bytes returns the bytes of RecordFile and RecordLogFile the record was read from, or last written as
// (Write); not to be changed.
func (r *Record) Bytes() (rec, log []byte) { return r.raw, r.logRaw }

// Changed returns the paths this process put or removed since the record was read or last written.
func (r *Record) Changed() []string {
	out := make([]string, 0, len(r.changed))
	for p := range r.changed {
		out = append(out, p)
	}
	return out
}

// recordSource finds entries in the bytes of RecordFile without decoding the others.
type recordSource struct {
	name  string
	files []byte // the bytes of the "files" object, from its '{'
	cache *Cache // the Store's parsed record, which loadAll goes through; nil: parse
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

// Cache keeps the checkout record a Store parsed last with the bytes it was parsed from: one
// command reads the record several times (ctx status: the refresh, the hand-edit scan), and parsing a
// record of 10,000 files took most of ctx status; a copy of the parsed record is much cheaper. The bytes
// are compared whole, so a record rewritten by another process is always parsed again.
type Cache struct {
	mu       sync.Mutex
	raw, log []byte
	rec      *Record
}

// Parse is Parse through the cache. The Record returned is the caller's to change (its maps are
// copies; a RecordEntry's Stat is never changed in place, only replaced).
func (c *Cache) Parse(name string, b, log []byte) (*Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rec == nil || !bytes.Equal(c.raw, b) || !bytes.Equal(c.log, log) {
		rec, err := Parse(name, b, log)
		if err != nil {
			return nil, err
		}
		c.raw, c.log, c.rec = b, log, rec
	}
	return &Record{Commits: maps.Clone(c.rec.Commits), Files: maps.Clone(c.rec.Files), Incomplete: c.rec.Incomplete,
		Clean: c.rec.Clean, Gen: c.rec.Gen, raw: c.raw, logRaw: c.log}, nil
}

// Drop forgets the parsed record.
func (c *Cache) Drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw, c.log, c.rec = nil, nil, nil
}

// ParseCount counts Parse's calls (tests check that one command parses the record once).
var ParseCount atomic.Int64

// Parse parses RecordFile's bytes b whole and applies the lines of RecordLogFile's bytes log
// that carry its Gen (a last line cut short by a crash is ignored).
func Parse(name string, b, log []byte) (*Record, error) {
	ParseCount.Add(1)
	var rec Record
	if err := Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("checkout record %s: %w: %w", name, ErrCorrupt, err)
	}
	if rec.Files == nil {
		rec.Files = map[string]RecordEntry{}
	}
	if rec.Commits == nil {
		rec.Commits = map[Scope]string{}
	}
	rec.raw, rec.logRaw = b, log
	for _, l := range LogLines(log, rec.Gen) {
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

// LogLines returns the complete lines of log that belong to the record writing gen ("" when the record
// has none: no line does).
func LogLines(log []byte, gen string) []LogLine {
	var out []LogLine
	if gen == "" {
		return nil
	}
	for len(log) > 0 {
		i := bytes.IndexByte(log, '\n')
		if i < 0 {
			break // cut short by a crash: its refresh left a journal, which the next refresh applies
		}
		var l LogLine
		// Unmarshal, as for the record: the log reaches 64 KiB, and with encoding/json its lines were half of
		// reading the record in a hook's refresh at 10,000 entries (segmentio's decoder in store).
		if Unmarshal(log[:i], &l) == nil && l.Gen == gen && l.Commits != nil {
			out = append(out, l)
		}
		log = log[i+1:]
	}
	return out
}

// Files is the checked-out tree as the record is read and written through it (store's checkoutFS, which
// refuses symbolic links, or the lean front's): slash paths relative to .context/. WriteFile replaces a
// file atomically; AppendFile appends with one write; Remove of a missing file is no error.
type Files interface {
	ReadFile(p string) ([]byte, error)
	WriteFile(p string, data []byte) error
	AppendFile(p string, data []byte) error
	Remove(p string) error
}

// Read reads the checkout record through fsys and parses it whole (through cache when not nil; name, the
// record's path, is for errors); an empty record (no commits, no files) and found false when there is none.
func Read(fsys Files, name string, cache *Cache) (rec *Record, found bool, err error) {
	b, err := fsys.ReadFile(RecordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Empty(), false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	lb, err := fsys.ReadFile(RecordLogFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	if cache != nil {
		rec, err = cache.Parse(name, b, lb)
	} else {
		rec, err = Parse(name, b, lb)
	}
	return rec, err == nil, err
}

// ReadLazy reads the checkout record for a refresh: the small fields and the log, the entries of
// RecordFile only when looked up (Record.Entry; LoadAll parses it whole through cache when not nil). A
// record below LazyRecordMin bytes, or one written by an older ctx (no Gen), is parsed whole (Read).
func ReadLazy(fsys Files, name string, cache *Cache) (rec *Record, found bool, err error) {
	b, err := fsys.ReadFile(RecordFile)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(b) < LazyRecordMin {
		return Read(fsys, name, cache)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	rec, off, ok := ParseHead(b)
	if !ok {
		return Read(fsys, name, cache)
	}
	lb, err := fsys.ReadFile(RecordLogFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read checkout record: %w", err)
	}
	rec.raw, rec.logRaw = b, lb
	rec.src = &recordSource{name: name, files: b[off:], cache: cache}
	rec.Files, rec.gone = map[string]RecordEntry{}, map[string]bool{}
	for _, l := range LogLines(lb, rec.Gen) {
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
	rec.head = LogLine{Commits: maps.Clone(rec.Commits), Incomplete: rec.Incomplete, Clean: rec.Clean}
	return rec, true, nil
}

// ParseHead decodes the fields of RecordFile's bytes b before "files" and returns the offset of the
// files object; ok false when "files" is not the last field or the record has no Gen (an older ctx wrote
// it: it is parsed whole).
func ParseHead(b []byte) (rec *Record, off int, ok bool) {
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

// Empty is a record of no commits and no files (a tree never checked out, or a record that is corrupt).
func Empty() *Record { return &Record{Commits: map[Scope]string{}, Files: map[string]RecordEntry{}} }

// newGen is a new Record.Gen.
func newGen() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Write writes the record through fsys: a lazily read one whose changes are small appends them to
// RecordLogFile; otherwise RecordFile is written whole as compact JSON (with a new Gen, which voids the
// log's lines, and the log removed), unless it holds these bytes already (a refresh with nothing to do
// writes nothing).
func Write(fsys Files, rec *Record) error {
	if rec.src != nil {
		done, err := appendRecordLog(fsys, rec)
		if done || err != nil {
			return err
		}
		if err := rec.LoadAll(); err != nil {
			return err
		}
	}
	gen := rec.Gen
	if gen == "" || len(rec.logRaw) > 0 {
		rec.Gen = newGen()
	}
	b, err := Encode(rec)
	if err != nil {
		rec.Gen = gen
		return err
	}
	b = append(b, '\n')
	if bytes.Equal(b, rec.raw) && len(rec.logRaw) == 0 {
		return nil
	}
	if err := fsys.WriteFile(RecordFile, b); err != nil {
		rec.Gen = gen
		return fmt.Errorf("write checkout record: %w", err)
	}
	rec.raw = b
	if len(rec.logRaw) > 0 {
		if err := fsys.Remove(RecordLogFile); err != nil {
			return fmt.Errorf("write checkout record: %w", err)
		}
		rec.logRaw = nil
	}
	rec.changed = nil
	return nil
}

// appendRecordLog appends rec's changes to RecordLogFile; done false when the record must be written
// whole instead (the log would pass a quarter of the record, or its last line was cut short).
func appendRecordLog(fsys Files, rec *Record) (done bool, err error) {
	if len(rec.logRaw) > 0 && rec.logRaw[len(rec.logRaw)-1] != '\n' {
		return false, nil
	}
	l := LogLine{Gen: rec.Gen, Commits: rec.Commits, Incomplete: rec.Incomplete, Clean: rec.Clean,
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
	if n := len(rec.logRaw) + len(b); n > len(rec.raw)/4 || n > MaxRecordLog {
		return false, nil
	}
	if err := fsys.AppendFile(RecordLogFile, b); err != nil {
		return false, fmt.Errorf("write checkout record: %w", err)
	}
	rec.logRaw = append(rec.logRaw, b...)
	rec.changed = nil
	return true, nil
}
