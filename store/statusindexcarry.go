package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"

	"github.com/ctx-dev/ctx/gitstore"
)

// A refresh that rewrites a big checkout record (a pull of many changes) keeps the status index up to it,
// as `git checkout` and `git merge` write the index they read (docs/architecture.md "The status index",
// "Carried by a refresh"): from the index of the record it read (this process's last hand-edit scan, or
// StatusIndexFile), whose entries also serve as the record's instead of parsing RecordFile, and the
// changes it made. The next hand-edit scan then finds an index of the record on disk instead of parsing
// the record and building one.

// indexHandoff is the status index this process's last hand-edit scan compared against, for the refresh
// that follows it (a pull: scan, merge, refresh); the refresh drops it (a long-lived server would
// otherwise keep the entries of 10,000 files).
type indexHandoff struct {
	mu sync.Mutex
	x  *statusIndex
}

// put keeps x, an index whose stat data stand against its stamp (not prechecked); x is not changed after.
func (h *indexHandoff) put(x *statusIndex) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.x = x
}

// get returns the index kept when it is the one of the record key names; nil otherwise.
func (h *indexHandoff) get(key indexKey) *statusIndex {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.x != nil && h.x.key == key {
		return h.x
	}
	return nil
}

// drop forgets the index kept.
func (h *indexHandoff) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.x = nil
}

// onIndexCarried, when set (tests), is called with the number of paths a refresh changed each time it
// writes the status index of the record it wrote.
var onIndexCarried func(paths int)

// carryIndex: a variable for tests, which compare a refresh through the index with one that parses the
// record.
var carryIndex = true

// recordStats returns the stat data of RecordFile and RecordLogFile (zero for a missing log), taken
// before they are read, for the key of the index of the bytes read then (keyOf); ok false when there is
// no record or either cannot be stat'ed.
func recordStats(fsys *checkoutFS) (recSt, logSt FileStat, ok bool) {
	fi, err := fsys.lstat(RecordFile)
	if err != nil || !fi.Mode().IsRegular() {
		return FileStat{}, FileStat{}, false
	}
	recSt = *statOf(fi)
	li, err := fsys.lstat(RecordLogFile)
	switch {
	case err == nil && li.Mode().IsRegular():
		logSt = *statOf(li)
	case errors.Is(err, fs.ErrNotExist):
	default:
		return FileStat{}, FileStat{}, false
	}
	return recSt, logSt, true
}

// baseIndex returns the status index of the record whose bytes and stat data give key: the one this
// process's last scan kept, else StatusIndexFile when it is of that record; nil when neither is. An index
// whose entries the record cannot be rebuilt from exactly (a blob name or scope an older or damaged record
// holds that the index keeps in another form) is not used.
func (s *Store) baseIndex(key indexKey) *statusIndex {
	if !carryIndex {
		return nil
	}
	x := s.scanned.get(key)
	if x == nil {
		if x = s.readStatusIndex(); x == nil || x.key != key {
			return nil
		}
	}
	if x.prechecked {
		return nil
	}
	for i := range x.entries {
		if x.entries[i].blob.IsZero() || scopeByte(x.entries[i].scope) == 255 {
			return nil
		}
	}
	return x
}

// recordFiles returns the checkout record's entries as the index holds them, for Record.LoadAllWith: the
// scope and blob of every file, and its stat data where they stand against the index's stamp (a file the
// index holds no trusted stat data for is read by the refresh, as one of a record without them).
func (x *statusIndex) recordFiles() map[string]RecordEntry {
	m := make(map[string]RecordEntry, len(x.entries))
	stats := make([]FileStat, len(x.entries))
	for i := range x.entries {
		e := &x.entries[i]
		re := RecordEntry{Scope: e.scope, Blob: e.blob.String()}
		if e.hasStat && x.trusted(e.st) {
			stats[i] = e.st
			re.Stat = &stats[i]
		}
		m[e.path] = re
	}
	return m
}

// carriedIndex returns the status index of the record rec a refresh wrote, from base, the index of the
// record it read, and changed, the paths it put or removed (sorted here). stamp is the new index's: the
// file system's time taken before the record was written (indexWriter), after the files; key is the
// written record's. An entry of a changed path takes the record's blob and scope, and its stat data
// (those of the file the refresh wrote or found holding the blob) when older than stamp, as an index
// built from the record trusts those older than it (indexFromRecord); every other entry keeps base's, and
// its stat data when they stood against base's stamp. A folder holding a changed path is listed again by
// the next scan (a name in it may have become, or stopped being, a file of the record); the others keep
// what base knew of them when it trusted their stat data.
func carriedIndex(base *statusIndex, rec *Record, changed []string, stamp int64, key indexKey) *statusIndex {
	nx := &statusIndex{stamp: stamp, key: key, commits: map[Scope]string{}, incomplete: rec.Incomplete, clean: rec.Clean,
		countsOK: base.countsOK, countTips: base.countTips, countsPub: base.countsPub, countNames: base.countNames,
		countVals: base.countVals}
	for sc, c := range rec.Commits {
		if c != "" {
			nx.commits[sc] = c
		}
	}
	trusted := func(st FileStat) bool { return st.Mtime < stamp && st.Ctime < stamp }
	slices.Sort(changed)
	dirty := map[string]bool{}
	nx.entries = make([]indexEntry, 0, len(base.entries)+len(changed))
	keep := func(e indexEntry) {
		if e.hasStat && !base.trusted(e.st) {
			e.hasStat, e.st = false, FileStat{}
		}
		nx.entries = append(nx.entries, e)
	}
	i := 0
	for _, p := range changed {
		dirty[path.Dir(p)] = true
		for i < len(base.entries) && base.entries[i].path < p {
			keep(base.entries[i])
			i++
		}
		if i < len(base.entries) && base.entries[i].path == p {
			i++
		}
		f, ok := rec.Files[p]
		if !ok {
			continue // removed
		}
		e := indexEntry{path: p, scope: f.Scope, blob: gitstore.NewHash(f.Blob),
			noFile: checkPath(p) != nil || join(path.Dir(p), path.Base(p)) != p}
		if f.Stat != nil && trusted(*f.Stat) {
			e.hasStat, e.st = true, *f.Stat
		}
		nx.entries = append(nx.entries, e)
	}
	for ; i < len(base.entries); i++ {
		keep(base.entries[i])
	}
	for _, d := range base.dirs {
		if !dirty[d.path] && base.trusted(d.st) {
			nx.dirs = append(nx.dirs, d)
		}
	}
	return nx
}

// writeCarriedIndex writes the status index of the record rec a refresh has just written (carriedIndex)
// through iw, created before the write; a failure is a warning (the next scan builds the index from the
// record, as without this).
func (s *Store) writeCarriedIndex(ctx context.Context, fsys *checkoutFS, iw *indexWriter, base *statusIndex, rec *Record, changed []string) {
	recSt, logSt, ok := recordStats(fsys)
	if !ok {
		iw.discard()
		return
	}
	raw, logRaw := rec.Bytes()
	nx := carriedIndex(base, rec, changed, iw.stamp, keyOf(raw, logRaw, recSt, logSt))
	if err := iw.commit(s, nx); err != nil {
		warn(ctx, fmt.Sprintf("write the status index: %v", err))
		return
	}
	if onIndexCarried != nil {
		onIndexCarried(len(changed))
	}
}
