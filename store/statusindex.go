package store

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/ctx-dev/ctx/gitstore"
)

// StatusIndexFile is the status index in the worktree's git dir (under ctx/): what the hand-edit scan
// needs of the checkout record, in binary, with the stat data of every file and folder of .context/ as
// git's index and untracked cache keep them (docs/architecture.md "The status index"). It is a cache:
// it is used only while the checkout record's bytes are the ones it was built from, and a missing or
// damaged index is built again from the record by a full scan.
const StatusIndexFile = "status-index"

// statusIndexMagic starts the file; the version is its last byte.
const statusIndexMagic = "CTXSIDX1"

// Limits on what a status index may declare (a damaged file is refused, not trusted).
const (
	maxIndexEntries = 1 << 24
	maxIndexName    = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// statusIndex is the content of StatusIndexFile.
type statusIndex struct {
	// stamp is the file system's time (nanoseconds since the epoch) taken, from a file created in the git
	// dir, before the scan that wrote this index: stat data whose modification or change time is not
	// older than it are "racily clean" (gitformat-index(5)) and the file or folder is read again.
	stamp int64
	key   indexKey // the checkout record the entries come from

	commits    map[Scope]string // the record's small fields
	incomplete bool
	clean      bool

	// counts are ctx status's entry counts at the tips countTips (ZeroHash: no ref) for a caller that is
	// public-only or not; valid when countsOK.
	countsOK   bool
	countTips  [3]gitstore.Hash
	countsPub  bool
	countNames []string
	countVals  []int

	entries []indexEntry // sorted by path
	dirs    []indexDir   // sorted by path

	// prechecked: the stat data of entries and folders were checked against their own stamps when the
	// index was built (indexFromRecord, carry), and stand as they are (never written: a written index is
	// checked against its stamp).
	prechecked bool
}

// indexKey identifies the bytes of the checkout record's two files: their stat data (zero for a
// missing RecordLogFile), lengths and CRC-32C. While the stat data are unchanged and older than the
// index's stamp the files are not read; when they are racily clean, the checksums decide; when they
// changed, the index is built again from the record.
type indexKey struct {
	recStat, logStat FileStat
	recLen, logLen   int64
	recSum, logSum   uint32
}

// indexEntry is one file of the checkout record.
type indexEntry struct {
	path    string
	scope   Scope
	blob    gitstore.Hash
	hasStat bool
	// noFile: the path is not a store path (a record of an older ctx may hold anything): it names no
	// file of .context/, and is listed as deleted.
	noFile bool
	st     FileStat
}

// indexDir is one folder of .context/ ("." for the folder itself): its stat data when it was last
// listed, and the names in it that are not files of the record (sub-folders, files added by hand, the
// record's own files, temporary files). While its stat data are unchanged, no name was added, removed or
// renamed in it, and it is not listed again (git's untracked cache).
type indexDir struct {
	path   string
	st     FileStat
	extras []string
}

// trusted reports whether stat data taken earlier can stand for the content checked then: older than
// the index's stamp in both modification and change time.
func (x *statusIndex) trusted(st FileStat) bool { return st.Mtime < x.stamp && st.Ctime < x.stamp }

// entry returns the entry of the slash path p.
func (x *statusIndex) entry(p string) (indexEntry, bool) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].path >= p })
	if i < len(x.entries) && x.entries[i].path == p {
		return x.entries[i], true
	}
	return indexEntry{}, false
}

// keyOf computes the key of the record's bytes rec and log, with the stat data of their files.
func keyOf(rec, log []byte, recSt, logSt FileStat) indexKey {
	return indexKey{recStat: recSt, logStat: logSt, recLen: int64(len(rec)), logLen: int64(len(log)),
		recSum: crc32.Checksum(rec, castagnoli), logSum: crc32.Checksum(log, castagnoli)}
}

// indexFromRecord builds the entries of an index from a parsed checkout record: the stat data of an entry
// count only when older than RecordFile (recTime), as HandEdits has always trusted them.
func indexFromRecord(rec *Record, key indexKey, recTime int64) *statusIndex {
	x := &statusIndex{stamp: recTime, key: key, commits: map[Scope]string{}, incomplete: rec.Incomplete, clean: rec.Clean,
		prechecked: true}
	for sc, c := range rec.Commits {
		x.commits[sc] = c
	}
	x.entries = make([]indexEntry, 0, len(rec.Files))
	for p, f := range rec.Files {
		e := indexEntry{path: p, scope: f.Scope, blob: gitstore.NewHash(f.Blob),
			noFile: checkPath(p) != nil || join(path.Dir(p), path.Base(p)) != p}
		if f.Stat != nil && f.Stat.Mtime < recTime && f.Stat.Ctime < recTime {
			e.hasStat, e.st = true, *f.Stat
		}
		x.entries = append(x.entries, e)
	}
	slices.SortFunc(x.entries, func(a, b indexEntry) int { return strings.Compare(a.path, b.path) })
	return x
}

// carry takes into x, an index just built from a new record, what the previous index old knew that still
// holds: the entry counts (per tips), the stat data verified for a file that still has the same blob,
// and the folders whose stat data old trusted, with the names in them that are not files of the new
// record (a write changes the record, not the files a scan verified: the first status after it neither
// reads them nor lists their folders).
func (x *statusIndex) carry(old *statusIndex) {
	if old.countsOK {
		x.countsOK, x.countTips, x.countsPub, x.countNames, x.countVals = true, old.countTips, old.countsPub, old.countNames, old.countVals
	}
	for i := range x.entries {
		e := &x.entries[i]
		if o, ok := old.entry(e.path); ok && !e.hasStat && o.blob == e.blob && o.hasStat && old.trusted(o.st) {
			e.hasStat, e.st = true, o.st
		}
	}
	oldNames := map[string][]string{} // folder -> the names of old's files in it
	for _, e := range old.entries {
		if !e.noFile {
			d := path.Dir(e.path)
			oldNames[d] = append(oldNames[d], path.Base(e.path))
		}
	}
	for _, d := range old.dirs {
		if !old.trusted(d.st) {
			continue
		}
		// The names in the folder, unchanged since old listed it, that are not files of x.
		nd := indexDir{path: d.path, st: d.st}
		for _, n := range append(append([]string(nil), d.extras...), oldNames[d.path]...) {
			if e, ok := x.entry(join(d.path, n)); !ok || e.noFile {
				nd.extras = append(nd.extras, n)
			}
		}
		slices.Sort(nd.extras)
		x.dirs = append(x.dirs, nd)
	}
}

// encode writes the index in its binary form (little-endian; strings with a 32-bit length), ending with
// the CRC-32C of everything before it.
func (x *statusIndex) encode() []byte {
	b := make([]byte, 0, 64+len(x.entries)*80)
	b = append(b, statusIndexMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(x.stamp))
	b = appendKey(b, x.key)
	for _, sc := range Scopes {
		b = appendStr(b, x.commits[sc])
	}
	b = append(b, boolByte(x.incomplete), boolByte(x.clean), boolByte(x.countsOK), boolByte(x.countsPub))
	for _, h := range x.countTips {
		b = append(b, h[:]...)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.countNames)))
	for i, n := range x.countNames {
		b = appendStr(b, n)
		b = binary.LittleEndian.AppendUint64(b, uint64(x.countVals[i]))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.entries)))
	for _, e := range x.entries {
		b = appendStr(b, e.path)
		b = append(b, scopeByte(e.scope), boolByte(e.hasStat)|boolByte(e.noFile)<<1)
		b = append(b, e.blob[:]...)
		b = appendStat(b, e.st)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.dirs)))
	for _, d := range x.dirs {
		b = appendStr(b, d.path)
		b = appendStat(b, d.st)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(d.extras)))
		for _, n := range d.extras {
			b = appendStr(b, n)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func scopeByte(sc Scope) byte {
	for i, s := range Scopes {
		if s == sc {
			return byte(i)
		}
	}
	return 255
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendStat(b []byte, st FileStat) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Size))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Mtime))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Ctime))
	return binary.LittleEndian.AppendUint64(b, st.Ino)
}

func appendKey(b []byte, k indexKey) []byte {
	b = appendStat(b, k.recStat)
	b = appendStat(b, k.logStat)
	b = binary.LittleEndian.AppendUint64(b, uint64(k.recLen))
	b = binary.LittleEndian.AppendUint64(b, uint64(k.logLen))
	b = binary.LittleEndian.AppendUint32(b, k.recSum)
	return binary.LittleEndian.AppendUint32(b, k.logSum)
}

// errIndexDamaged is a status index that is not one this version wrote whole: it is built again.
var errIndexDamaged = errors.New("status index damaged")

// indexReader decodes the binary form; the first error sticks.
type indexReader struct {
	b   []byte
	s   string // the same bytes as a string: names are substrings of it, not copies
	off int    // where b starts in s
	err error
}

func (r *indexReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errIndexDamaged
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	r.off += n
	return out
}

func (r *indexReader) u8() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *indexReader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *indexReader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *indexReader) str() string {
	n := r.u32()
	if n > maxIndexName {
		r.err = errIndexDamaged
		return ""
	}
	start := r.off
	if r.take(int(n)) == nil && n > 0 {
		return ""
	}
	return r.s[start : start+int(n)]
}

func (r *indexReader) stat() FileStat {
	return FileStat{Size: int64(r.u64()), Mtime: int64(r.u64()), Ctime: int64(r.u64()), Ino: r.u64()}
}

func (r *indexReader) count() int {
	n := r.u32()
	if n > maxIndexEntries {
		r.err = errIndexDamaged
		return 0
	}
	return int(n)
}

// decodeIndex parses the binary form; errIndexDamaged when it is not whole and well formed. The index's
// names are substrings of a copy of b.
func decodeIndex(b []byte) (*statusIndex, error) { return decodeIndexIn(b, false) }

// decodeIndexIn is decodeIndex; with owned, the names are substrings of b itself, which the caller hands
// over: it is never written again (readStatusIndex's buffer: no copy of an index of megabytes).
func decodeIndexIn(b []byte, owned bool) (*statusIndex, error) {
	if len(b) < len(statusIndexMagic)+4 || string(b[:len(statusIndexMagic)]) != statusIndexMagic {
		return nil, errIndexDamaged
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errIndexDamaged
	}
	rest := body[len(statusIndexMagic):]
	var str string
	if owned {
		str = unsafe.String(unsafe.SliceData(rest), len(rest))
	} else {
		str = string(rest)
	}
	r := &indexReader{b: rest, s: str}
	x := &statusIndex{stamp: int64(r.u64()), commits: map[Scope]string{}}
	x.key = indexKey{recStat: r.stat(), logStat: r.stat(), recLen: int64(r.u64()), logLen: int64(r.u64()), recSum: r.u32(), logSum: r.u32()}
	for _, sc := range Scopes {
		if c := r.str(); c != "" {
			x.commits[sc] = c
		}
	}
	x.incomplete, x.clean, x.countsOK, x.countsPub = r.u8() == 1, r.u8() == 1, r.u8() == 1, r.u8() == 1
	for i := range x.countTips {
		copy(x.countTips[i][:], r.take(20))
	}
	n := r.count()
	for i := 0; i < n && r.err == nil; i++ {
		x.countNames = append(x.countNames, r.str())
		x.countVals = append(x.countVals, int(r.u64()))
	}
	n = r.count()
	if r.err == nil {
		x.entries = make([]indexEntry, 0, min(n, len(r.b)/60+1))
	}
	for i := 0; i < n && r.err == nil; i++ {
		e := indexEntry{path: r.str()}
		sc := r.u8()
		if int(sc) >= len(Scopes) {
			return nil, errIndexDamaged
		}
		flags := r.u8()
		e.scope, e.hasStat, e.noFile = Scopes[sc], flags&1 != 0, flags&2 != 0
		copy(e.blob[:], r.take(20))
		e.st = r.stat()
		if i > 0 && x.entries[i-1].path >= e.path {
			return nil, errIndexDamaged
		}
		x.entries = append(x.entries, e)
	}
	n = r.count()
	for i := 0; i < n && r.err == nil; i++ {
		d := indexDir{path: r.str(), st: r.stat()}
		m := r.count()
		for j := 0; j < m && r.err == nil; j++ {
			d.extras = append(d.extras, r.str())
		}
		if i > 0 && x.dirs[i-1].path >= d.path {
			return nil, errIndexDamaged
		}
		x.dirs = append(x.dirs, d)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errIndexDamaged
	}
	return x, nil
}

// statusIndexPath is where this worktree's status index lives.
func (s *Store) statusIndexPath() string {
	return filepath.Join(s.repo.GitDir(), "ctx", StatusIndexFile)
}

// readStatusIndex reads the status index; nil when there is none or it is damaged.
func (s *Store) readStatusIndex() *statusIndex {
	b, err := os.ReadFile(s.statusIndexPath())
	if err != nil {
		return nil
	}
	x, err := decodeIndexIn(b, true) // b is not used again
	if err != nil {
		return nil
	}
	return x
}

// indexWriter is the next status index's file, created before a scan so that its modification time is
// the file system's time before any stat data the scan takes (the new index's stamp).
type indexWriter struct {
	f     *os.File
	stamp int64
}

// newIndexWriter creates the temporary file of the next index in the git dir; nil when it cannot
// (the scan still runs, and writes no index).
func (s *Store) newIndexWriter() *indexWriter {
	dir := filepath.Dir(s.statusIndexPath())
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil
	}
	f, err := os.CreateTemp(dir, "."+StatusIndexFile+".tmp*")
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil
	}
	return &indexWriter{f: f, stamp: fi.ModTime().UnixNano()}
}

// commit writes x (with the writer's stamp) and renames it over the index; no fsync: the index is a
// cache the record rebuilds, and a torn file fails its checksum.
func (w *indexWriter) commit(s *Store, x *statusIndex) error {
	x.stamp = w.stamp
	_, err := w.f.Write(x.encode())
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.f.Name(), s.statusIndexPath())
	}
	if err != nil {
		_ = os.Remove(w.f.Name())
	}
	return err
}

// discard removes the unused temporary file.
func (w *indexWriter) discard() {
	_ = w.f.Close()
	_ = os.Remove(w.f.Name())
}
