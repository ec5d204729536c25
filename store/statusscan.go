package store

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// onCheckoutList, when set (tests), is called with every folder of the checked-out tree a hand-edit scan
// lists.
var onCheckoutList func(dir string)

// onIndexRebuild, when set (tests), is called whenever a scan builds the status index from the whole
// checkout record (no index, a damaged one, or a record the index cannot be brought up to by its log).
var onIndexRebuild func()

// errNeedRefresh is scanCheckout's answer when the checked-out tree does not mirror the tips it was given.
var errNeedRefresh = errors.New("the checked-out tree does not mirror the context refs")

// scanOptions are what ctx status asks of a hand-edit scan besides the hand edits.
type scanOptions struct {
	tips map[Scope]gitstore.Hash // the tips of the context refs (for mirror and counts)
	// mirror: first check that the record mirrors tips (no refresh journal, not incomplete, the same
	// commits) and return errNeedRefresh without scanning when it does not.
	mirror bool
	// counts, when set, computes the entry counts at tips; it is called only when the index does not hold
	// them for these tips (and this caller's public-only view), and the index keeps its answer.
	counts func() (map[string]int, error)
	// handoff keeps the index compared against for the refresh that follows (indexHandoff).
	handoff bool
}

// scanCheckout lists the hand edits of the checked-out tree (HandEdits) and returns the status index it
// compared against (nil when the tree was never checked out).
//
// It stats only what could have changed, as git does with its index (docs/architecture.md "The status
// index"): one lstat per file of the record, compared with the stat data the index keeps (a file is read
// only when they differ or are racily clean), and one stat per folder, listed only when its stat data
// changed (a file added, removed or renamed in it).
func (s *Store) scanCheckout(ctx context.Context, o scanOptions) ([]HandEdit, *statusIndex, error) {
	tips := o.tips
	if !o.mirror {
		tips = nil
	}
	root := s.CheckoutRoot()
	if root == "" {
		return nil, nil, nil
	}
	// A link or tracked files at .context are the user's branch's (docs/security.md): never scanned.
	exists, err := s.checkCheckoutDir(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !exists {
		// Removed as a whole after it was checked out here: not the deletion of every entry
		// (CheckoutMissingError); never checked out: nothing to scan.
		if err := s.checkoutMissing(false); err != nil {
			return nil, nil, err
		}
		if tips != nil {
			return nil, nil, errNeedRefresh
		}
		return nil, nil, nil
	}
	// The lock serialises the scan with refreshes; it does not remove the hooks' stamp, since a scan
	// changes nothing of .context/ (a recovered journal does: recoverRefresh takes it then).
	unlock, err := s.repo.LockCheckout(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("hand edits: %w", err)
	}
	defer unlock()
	fsys, err := openCheckout(root)
	if err != nil {
		return nil, nil, err
	}
	defer fsys.Close()
	var rec *Record
	_, jerr := os.Lstat(s.journalPath())
	// Temporary files left by killed writes (sweepLeftovers; those of .context/ the walk below passes are
	// removed after it): ctx's own, invisible to the scan, which changes nothing it reports.
	s.sweepLeftovers(fsys, jerr == nil)
	if jerr == nil {
		if tips != nil {
			return nil, nil, errNeedRefresh
		}
		if err := os.Remove(s.GitPath(HookStampFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("hand edits: remove the hook stamp: %w", err)
		}
		found := false
		if rec, found, err = s.recoverRefresh(fsys); err != nil || !found {
			return nil, nil, err
		}
	}
	// A .context/ without ctx's IgnoreFile (checked out by an older ctx, or the file edited) is refreshed,
	// which writes it: git must not see the files of the store (docs/security.md "Private entries on disk").
	if tips != nil && !fsys.ignoredByStat() {
		return nil, nil, errNeedRefresh
	}
	recFI, err := fsys.lstat(RecordFile)
	if errors.Is(err, fs.ErrNotExist) {
		if tips != nil {
			return nil, nil, errNeedRefresh
		}
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read checkout record: %w", err)
	}
	recSt, logSt := *statOf(recFI), FileStat{}
	if li, err := fsys.lstat(RecordLogFile); err == nil {
		logSt = *statOf(li)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read checkout record: %w", err)
	}
	old := s.readStatusIndex()
	x := old
	keyRacy := false
	// A refresh (after a write, a pull, a hook) that appended its changes to RecordLogFile left RecordFile
	// as the index knew it: the index takes the new lines' entries instead of being built again.
	extended := false
	if rec == nil && x != nil && x.key.recStat == recSt && x.trusted(recSt) && x.key.logStat != logSt {
		if nx := s.extendIndex(fsys, x, recSt, logSt); nx != nil {
			x, extended = nx, true
		}
	}
	// The record's files are read only when their stat data changed or are racily clean.
	if !extended && (rec != nil || x == nil || x.key.recStat != recSt || x.key.logStat != logSt || !x.trusted(recSt) || !x.trusted(logSt)) {
		recBytes, err := fsys.readFile(RecordFile)
		if err != nil {
			return nil, nil, fmt.Errorf("read checkout record: %w", err)
		}
		logBytes, err := fsys.readFile(RecordLogFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("read checkout record: %w", err)
		}
		key := keyOf(recBytes, logBytes, recSt, logSt)
		keyRacy = x != nil && x.key == key
		if x == nil || x.key != key {
			if rec == nil {
				if rec, err = s.parsed.Parse(filepath.Join(root, RecordFile), recBytes, logBytes); err != nil {
					return nil, nil, err
				}
			}
			// A file is trusted by the record's stat data only when it is older than the record: one
			// modified in the same clock tick as the record was written could have changed after its stat
			// data were taken (git's "racily clean" entries, gitformat-index(5)); those are read. The
			// entries of RecordLogFile are newer than RecordFile, so their files are read (until an index
			// holds them).
			if onIndexRebuild != nil {
				onIndexRebuild()
			}
			x = indexFromRecord(rec, key, recSt.Mtime)
			if old != nil {
				x.carry(old)
			}
		}
	}
	if tips != nil && (x.incomplete || !sameCommits(x.commits, tipStrings(tips))) {
		return nil, nil, errNeedRefresh
	}
	countsDirty := false
	if o.counts != nil {
		tt, pub := tipArray(o.tips), PublicOnly(ctx)
		if !x.countsOK || x.countTips != tt || x.countsPub != pub {
			m, err := o.counts()
			if err != nil {
				return nil, nil, err
			}
			x.countsOK, x.countTips, x.countsPub, x.countNames, x.countVals = true, tt, pub, nil, nil
			for _, n := range slices.Sorted(maps.Keys(m)) {
				x.countNames = append(x.countNames, n)
				x.countVals = append(x.countVals, m[n])
			}
			countsDirty = true
		}
	}
	w := s.newIndexWriter()
	sc := &scan{ctx: ctx, fsys: fsys, x: x, rebuilt: x != old, seen: make([]bool, len(x.entries)),
		byDir: entriesByDir(x.entries), oldDirs: map[string]*indexDir{}, newStamp: -1 << 63}
	if w != nil {
		sc.newStamp = w.stamp
	}
	for i := range x.dirs {
		sc.oldDirs[x.dirs[i].path] = &x.dirs[i]
	}
	if err := sc.visit(".", fsys.root); err != nil {
		if w != nil {
			w.discard()
		}
		return nil, nil, fmt.Errorf("scan %s: %w", root, err)
	}
	for _, p := range sc.temps {
		_ = fsys.removeTemp(p) // best effort: the next scan tries again
	}
	var deleted map[string]indexEntry
	for i, e := range x.entries {
		if !sc.seen[i] {
			sc.out = append(sc.out, HandEdit{Path: e.path, Change: ChangeDeleted, Scope: e.scope})
			if e.scope != Public {
				if deleted == nil {
					deleted = map[string]indexEntry{}
				}
				deleted[e.path] = e
			}
		}
	}
	if deleted != nil {
		// A private file renamed by hand stays private (renamescope.go).
		s.keepRenamedScopes(ctx, sc.out, deleted, sc.added)
	}
	sort.Slice(sc.out, func(i, j int) bool { return sc.out[i].Path < sc.out[j].Path })
	sort.Slice(sc.dirs, func(i, j int) bool { return sc.dirs[i].path < sc.dirs[j].path })
	// A racily clean key checked by its checksums is trusted by its stat data once the index is newer.
	keyRacy = keyRacy && recSt.Mtime < sc.newStamp && recSt.Ctime < sc.newStamp && logSt.Mtime < sc.newStamp && logSt.Ctime < sc.newStamp
	if len(sc.dirs) != len(x.dirs) || countsDirty || keyRacy {
		sc.dirty = true // a folder removed, new counts
	}
	x.dirs = sc.dirs
	if w != nil {
		if sc.dirty || sc.rebuilt {
			if err := w.commit(s, x); err != nil {
				warn(ctx, fmt.Sprintf("write the status index: %v", err))
			} else {
				x.prechecked = false // what was written: its stat data stand against its stamp now
			}
		} else {
			w.discard()
		}
	}
	if o.handoff && !x.prechecked {
		// For a refresh that follows (a pull), instead of reading the index again (statusindexcarry.go).
		s.scanned.put(x)
	}
	return sc.out, x, nil
}

// entriesByDir maps each folder to the indices of the entries (sorted by path) of the files in it. A path
// that is not a store path (a record of an older ctx may hold anything) names no file: it is in no
// folder, never seen, so it is listed as deleted. The entries of a folder come in runs (its files sort
// together, between those of its sub-folders): the map is looked up once a run, and each folder's list
// is made at its size.
func entriesByDir(entries []indexEntry) map[string][]int {
	type run struct {
		dir    string
		lo, hi int
	}
	var runs []run
	for i := range entries {
		if entries[i].noFile {
			continue
		}
		d := dirName(entries[i].path)
		if n := len(runs); n > 0 && runs[n-1].hi == i && runs[n-1].dir == d {
			runs[n-1].hi++
		} else {
			runs = append(runs, run{dir: d, lo: i, hi: i + 1})
		}
	}
	sizes := map[string]int{}
	for _, r := range runs {
		sizes[r.dir] += r.hi - r.lo
	}
	out := make(map[string][]int, len(sizes))
	for _, r := range runs {
		l, ok := out[r.dir]
		if !ok {
			l = make([]int, 0, sizes[r.dir])
		}
		for i := r.lo; i < r.hi; i++ {
			l = append(l, i)
		}
		out[r.dir] = l
	}
	return out
}

// tipArray is tips in the order of Scopes.
func tipArray(tips map[Scope]gitstore.Hash) [3]gitstore.Hash {
	var out [3]gitstore.Hash
	for i, sc := range Scopes {
		out[i] = tips[sc]
	}
	return out
}

// counts returns the entry counts the index holds (valid when countsOK).
func (x *statusIndex) counts() map[string]int {
	out := make(map[string]int, len(x.countNames))
	for i, n := range x.countNames {
		out[n] = x.countVals[i]
	}
	return out
}

// tipStrings is tips as a checkout record names them (scope -> commit; absent: no ref).
func tipStrings(tips map[Scope]gitstore.Hash) map[Scope]string {
	out := map[Scope]string{}
	for sc, h := range tips {
		if !h.IsZero() {
			out[sc] = h.String()
		}
	}
	return out
}

// scan is one hand-edit scan of the checked-out tree.
type scan struct {
	ctx      context.Context
	fsys     *checkoutFS
	x        *statusIndex
	rebuilt  bool  // x was built from the record (no index, or another record)
	newStamp int64 // the stamp of the index this scan writes
	seen     []bool
	byDir    map[string][]int     // folder -> indices of its record entries
	oldDirs  map[string]*indexDir // the folders as the index knew them
	dirs     []indexDir           // the folders as found
	dirty    bool                 // the index is worth writing again
	out      []HandEdit
	checks   []fileCheck // checkFiles' answers for one batch, reused
	// added holds the content of the files added by hand that name no scope (keepRenamedScopes).
	added map[string][]byte
	// temps are the temporary files of writes seen (slash paths): leftovers, removed after the scan.
	temps []string
}

// join is the slash path of name in folder dir.
func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// visit scans the folder dir of .context/, opened as r.
func (sc *scan) visit(dir string, r *os.Root) error {
	if err := sc.ctx.Err(); err != nil {
		return err
	}
	f, err := r.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st := *statOf(fi)
	recorded := sc.byDir[dir]
	var extras []string
	if old := sc.oldDirs[dir]; old != nil && old.st == st && (sc.x.prechecked || sc.x.trusted(st)) {
		extras = old.extras
	} else {
		// Listed: the names that are not files of the record.
		if onCheckoutList != nil {
			onCheckoutList(dir)
		}
		names, err := f.Readdirnames(-1)
		if err != nil {
			return err
		}
		known := make(map[string]bool, len(recorded))
		for _, i := range recorded {
			known[path.Base(sc.x.entries[i].path)] = true
		}
		for _, n := range names {
			if !known[n] {
				extras = append(extras, n)
			}
		}
		slices.Sort(extras)
		if st.Mtime < sc.newStamp && st.Ctime < sc.newStamp {
			sc.dirty = true
		}
	}
	sc.dirs = append(sc.dirs, indexDir{path: dir, st: st, extras: extras})
	// The files are stat'ed (and read when their stat data do not stand for them) a batch at a time, on
	// several goroutines in a big folder (statuspreload.go), then compared with the record in order.
	for lo := 0; lo < len(recorded); lo += statPreloadBatch {
		batch := recorded[lo:min(lo+statPreloadBatch, len(recorded))]
		if cap(sc.checks) < len(batch) {
			sc.checks = make([]fileCheck, min(len(recorded), statPreloadBatch))
		}
		checks := sc.checks[:len(batch)]
		sc.checkFiles(r, f, batch, checks)
		for k, i := range batch {
			if err := sc.recordedFile(dir, r, i, &checks[k]); err != nil {
				return err
			}
		}
	}
	for _, n := range extras {
		if err := sc.other(dir, r, f, n); err != nil {
			return err
		}
	}
	return nil
}

// recordedFile compares the file of record entry i, in folder dir opened as r, with the record, from what
// checkFile found of it (c).
func (sc *scan) recordedFile(dir string, r *os.Root, i int, c *fileCheck) error {
	e := &sc.x.entries[i]
	if c.read {
		if c.err != nil {
			return c.err
		}
	} else {
		if errors.Is(c.err, fs.ErrNotExist) {
			return nil // deleted
		}
		if c.err != nil {
			return c.err
		}
	}
	switch c.typ {
	case 0: // a regular file
	case fs.ModeDir:
		// A folder where the record has a file: the file is deleted, what is in the folder is added.
		return sc.subdir(dir, r, baseName(e.path))
	default: // a symbolic link (never followed), a device, a pipe
		sc.seen[i] = true
		sc.out = append(sc.out, HandEdit{Path: e.path, Change: ChangeModified, Scope: e.scope})
		return nil
	}
	sc.seen[i] = true
	if !c.read {
		return nil // unchanged since ctx wrote or read it
	}
	if c.blob != e.blob {
		sc.out = append(sc.out, HandEdit{Path: e.path, Change: ChangeModified, Scope: e.scope})
		return nil
	}
	// The content is the record's: its stat data, taken before the read, stand for it from now on (they
	// are trusted once older than an index's stamp).
	st := c.st
	if !e.hasStat || e.st != st || st.Mtime < sc.newStamp && st.Ctime < sc.newStamp {
		e.hasStat, e.st = true, st
		sc.dirty = true
	}
	return nil
}

// other looks at a name of folder dir that is not a file of the record.
func (sc *scan) other(dir string, r *os.Root, f *os.File, name string) error {
	if dir == "." && (name == RecordFile || name == RecordLogFile || name == IgnoreFile) || isTemp(name) || isLitter(name) {
		if _, ok := atomicfile.TempTarget(name); ok {
			// A write's temporary file: with the checkout lock held, a leftover of a killed one (findLeftovers).
			sc.temps = append(sc.temps, join(dir, name))
		}
		return nil
	}
	p := join(dir, name)
	typ, st, err := lstatIn(r, f, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	switch typ {
	case fs.ModeDir:
		return sc.subdir(dir, r, name)
	case 0:
		if st.Size > maxFileBytes {
			// Not read: ctx commit refuses it from its size, whatever its scope.
			sc.out = append(sc.out, HandEdit{Path: p, Change: ChangeAdded, Scope: Public})
			return nil
		}
		data, err := sc.fsys.readFile(p)
		if err != nil {
			return err
		}
		sc.out = append(sc.out, HandEdit{Path: p, Change: ChangeAdded, Scope: scopeFromContent(data)})
		if _, ok := explicitScope(data); !ok {
			if sc.added == nil {
				sc.added = map[string][]byte{}
			}
			sc.added[p] = data
		}
	default: // a symbolic link (never followed), a device, a pipe
		sc.out = append(sc.out, HandEdit{Path: p, Change: ChangeAdded, Scope: Public})
	}
	return nil
}

// subdir scans the folder name of dir (r), which an lstat found a folder.
func (sc *scan) subdir(dir string, r *os.Root, name string) error {
	sub, err := r.OpenRoot(name)
	if err != nil {
		return err
	}
	defer sub.Close()
	// OpenRoot follows a symbolic link that stays inside r: the folder must still be the one the lstat saw.
	fi, err := r.Lstat(name)
	if err != nil {
		return err
	}
	si, err := sub.Stat(".")
	if err != nil {
		return err
	}
	if !fi.IsDir() || !os.SameFile(fi, si) {
		return fmt.Errorf("%s: %w", join(dir, name), errLink)
	}
	return sc.visit(join(dir, name), sub)
}

// recordHeadMax is how much of RecordFile extendIndex reads for its Gen: the small fields come first
// (Record), well within it.
const recordHeadMax = 8 << 10

// extendIndex returns the index x brought up to the checkout record after refreshes appended lines to
// RecordLogFile (docs/architecture.md "The status index"): RecordFile is the one x was built from (the
// caller checked its stat data, trusted), RecordLogFile still begins with the bytes x was built with, and
// every line after them ends in a newline. The entries those lines name take their scope and blob, and no
// stat data (the scan reads the files once, then keeps their stat data); an entry they remove goes; a
// folder holding a changed path is listed again (a name in it may have become, or stopped being, a file
// of the record). What x knew of every other file and folder stands, checked against its own stamp. It
// returns nil when the index must be built again from the record: the log is not an extension of x's,
// or RecordFile's Gen cannot be read.
func (s *Store) extendIndex(fsys *checkoutFS, x *statusIndex, recSt, logSt FileStat) *statusIndex {
	logBytes, err := fsys.readFile(RecordLogFile)
	if err != nil || int64(len(logBytes)) < x.key.logLen || logSt.Size != int64(len(logBytes)) {
		return nil
	}
	prefix, suffix := logBytes[:x.key.logLen], logBytes[x.key.logLen:]
	if crc32.Checksum(prefix, castagnoli) != x.key.logSum || len(suffix) > 0 && suffix[len(suffix)-1] != '\n' {
		return nil
	}
	gen, ok := s.recordGen(fsys)
	if !ok {
		return nil
	}
	nx := &statusIndex{stamp: x.stamp, key: x.key, commits: maps.Clone(x.commits), incomplete: x.incomplete, clean: x.clean,
		countsOK: x.countsOK, countTips: x.countTips, countsPub: x.countsPub, countNames: x.countNames, countVals: x.countVals}
	nx.key.logStat, nx.key.logLen, nx.key.logSum = logSt, int64(len(logBytes)), crc32.Checksum(logBytes, castagnoli)
	changed := map[string]*RecordEntry{}
	for _, l := range logLines(suffix, gen) {
		nx.commits = map[Scope]string{}
		for sc, c := range l.Commits {
			if c != "" {
				nx.commits[sc] = c
			}
		}
		nx.incomplete, nx.clean = l.Incomplete, l.Clean
		for p, e := range l.Files {
			changed[p] = e
		}
	}
	dirty := map[string]bool{}
	nx.entries = make([]indexEntry, 0, len(x.entries)+len(changed))
	for _, e := range x.entries {
		if _, ok := changed[e.path]; !ok {
			nx.entries = append(nx.entries, e)
		}
	}
	for p, e := range changed {
		dirty[path.Dir(p)] = true
		if e != nil {
			nx.entries = append(nx.entries, indexEntry{path: p, scope: e.Scope, blob: gitstore.NewHash(e.Blob),
				noFile: checkPath(p) != nil || join(path.Dir(p), path.Base(p)) != p})
		}
	}
	if len(changed) > 0 {
		sort.Slice(nx.entries, func(i, j int) bool { return nx.entries[i].path < nx.entries[j].path })
	}
	for _, d := range x.dirs {
		if !dirty[d.path] {
			nx.dirs = append(nx.dirs, d)
		}
	}
	if onIndexExtend != nil {
		onIndexExtend(len(changed))
	}
	return nx
}

// onIndexExtend, when set (tests), is called with the number of paths each time extendIndex brings the
// status index up to the record's log.
var onIndexExtend func(paths int)

// recordGen reads the Gen of RecordFile from its first bytes.
func (s *Store) recordGen(fsys *checkoutFS) (string, bool) {
	if err := fsys.noLinks(RecordFile); err != nil {
		return "", false
	}
	f, err := fsys.root.Open(RecordFile)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b := make([]byte, recordHeadMax)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", false
	}
	rec, _, ok := parseRecordHead(b[:n])
	if !ok || rec.Gen == "" {
		return "", false
	}
	return rec.Gen, true
}
