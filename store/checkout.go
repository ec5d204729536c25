package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/merge"
)

// CommonDir is the git common dir of the store's repository (for a linked worktree, the main
// repository's git dir): where ctx keeps what is never pushed (docs/architecture.md "Where things live").
func (s *Store) CommonDir() string { return s.repo.CommonDir() }

// CheckoutRoot is the path of the checked-out tree, "" in a bare repository.
func (s *Store) CheckoutRoot() string {
	if s.repo.Bare() {
		return ""
	}
	return filepath.Join(s.repo.WorkTree(), CheckoutDir)
}

// Refreshed reports what Refresh did.
type Refreshed struct {
	Written, Removed []string // paths updated from the refs
	Kept             []string // paths edited by hand that were not overwritten (ctx status lists them)
	// Skipped are the entries of the refs that changed since the last refresh and that ctx does not check
	// out (Problem): never written, reported once here, and listed by ctx status and ctx doctor.
	Skipped []Problem
	// Clean says that the tips hold no entry ctx does not check out (TreeProblems would return none),
	// known without walking their trees when the previous tips were known clean.
	Clean bool
}

func blobHash(b []byte) gitstore.Hash { return gitstore.BlobHash(b) }

// lockCheckout takes the lock that serialises the refreshes of one worktree (in its git dir).
func (s *Store) lockCheckout(ctx context.Context) (func(), error) {
	unlock, err := s.repo.LockCheckout(ctx)
	if err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	// .context/ may change from here on: the hooks' stamp, which says what it mirrors, no longer holds.
	if err := os.Remove(filepath.Join(s.repo.GitDir(), HookStampFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		unlock()
		return nil, fmt.Errorf("refresh: remove the hook stamp: %w", err)
	}
	return unlock, nil
}

// HookStampFile is the refresh hooks' stamp in the worktree's git dir (docs/hooks.md "A checkout that
// moves nothing"): what .context/ mirrored after the last refresh hook. Whatever takes the checkout lock
// removes it, so the stamp never survives a change of .context/ made by anything else.
const HookStampFile = "ctx-hook-stamp"

// journalPath is the refresh journal of this worktree (in its git dir, outside the checked-out tree).
func (s *Store) journalPath() string {
	return filepath.Join(s.repo.GitDir(), "ctx", "checkout-journal.json")
}

// journal is what a refresh is about to do to the checked-out tree, written before its first change and
// removed once the checkout record says what was done (docs/security.md, "Interrupted refreshes").
type journal struct {
	Write  map[string]RecordEntry `json:"write"`
	Remove []string               `json:"remove"`
}

// refreshInterrupt, when set (tests), is called after each file a refresh writes or removes, with their
// count so far: a panic there is a refresh killed half way.
var refreshInterrupt func(done int)

// EnvKillRefreshAfter, set to N in the environment (end-to-end tests only), makes the process kill itself
// with SIGKILL right after the N-th file a refresh writes or removes: a `kill -9` at a known point.
const EnvKillRefreshAfter = "CTX_TEST_KILL_REFRESH_AFTER"

func init() {
	n, err := strconv.Atoi(os.Getenv(EnvKillRefreshAfter))
	if err != nil || n <= 0 {
		return
	}
	refreshInterrupt = func(done int) {
		if done == n {
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Kill()
			}
			select {} // SIGKILL is on its way
		}
	}
}

// recoverRefresh reads the checkout record and, when a refresh was interrupted (its journal is there),
// records what it had actually written: a file of the journal whose content on disk is the one it was
// to write is ctx's, a file it was to remove and that is gone is gone; anything else is as the record
// said, so a hand edit stays a hand edit and a half-finished refresh never shows up as one. The record is
// marked Incomplete (the next refresh compares every path), then the journal is removed. Called with the
// checkout lock held.
func (s *Store) recoverRefresh(fsys *checkoutFS) (*Record, bool, error) {
	rec, found, err := s.readRecordFS(fsys)
	if err != nil {
		return nil, false, err
	}
	b, err := os.ReadFile(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return rec, found, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read refresh journal: %w", err)
	}
	var j journal
	if json.Unmarshal(b, &j) == nil {
		for p, e := range j.Write {
			if checkPath(p) != nil {
				continue
			}
			if cur, err := fsys.readFile(p); err == nil && blobHash(cur).String() == e.Blob {
				rec.Files[p] = e
			}
			fsys.cleanTemps(p)
		}
		for _, p := range j.Remove {
			if checkPath(p) != nil {
				continue
			}
			if _, err := fsys.lstat(p); errors.Is(err, fs.ErrNotExist) {
				delete(rec.Files, p)
			}
		}
	}
	rec.Incomplete = true
	if err := writeRecordFS(fsys, rec); err != nil {
		return nil, false, err
	}
	if err := os.Remove(s.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("remove refresh journal: %w", err)
	}
	return rec, true, nil
}

// Refresh makes the checked-out tree mirror the tips of the context refs (docs/architecture.md "Where things
// live"): only paths whose blob changed since the recorded commits are written (atomically, by rename) or
// removed; a file edited by hand since the last refresh is never overwritten, it is reported in Kept. A bare
// repository has no checked-out tree (nothing to do). Concurrent refreshes of one worktree are serialised by
// a lock in the worktree's git dir.
//
// Trust (docs/security.md): every entry that changed is checked before anything is written (names with
// git fsck's rules, modes, the store layout of docs/format.md); one ctx does not check out is skipped and
// reported in Skipped, never written. Every file operation goes through an os.Root of .context/ that also
// refuses symbolic links. A journal in the worktree's git dir makes the refresh atomic for readers: a
// refresh killed half way is recorded as what it wrote by the next one (recoverRefresh), never taken for
// hand edits.
func (s *Store) Refresh(ctx context.Context) (*Refreshed, error) { return s.refresh(ctx, nil) }

// refreshOp is one change a refresh makes to the checked-out tree.
type refreshOp struct {
	path   string
	blob   gitstore.Hash // ZeroHash: remove
	scope  Scope
	remove bool
}

// refresh is Refresh; the paths in force are rewritten from the refs even when edited by hand (after
// ctx commit recorded them).
func (s *Store) refresh(ctx context.Context, force map[string]bool) (*Refreshed, error) {
	// The record parsed by this operation's hand-edit scan serves this refresh (a pull: scan, merge,
	// refresh) and no later one: a long-lived server would otherwise keep the last record's bytes and
	// maps for its whole life (about 5 MB at 10,000 entries; bench/README.md "Fourth round").
	defer s.parsed.Drop()
	defer s.scanned.drop()
	return s.refreshWith(ctx, force, false)
}

// refreshWith is refresh; with recreate, a .context/ that was checked out here and is missing now is
// checked out again (Restore), where refresh fails with a *CheckoutMissingError.
func (s *Store) refreshWith(ctx context.Context, force map[string]bool, recreate bool) (*Refreshed, error) {
	root := s.CheckoutRoot()
	out := &Refreshed{}
	if root == "" {
		return out, nil
	}
	// Not initialized: nothing to check out. A branch of the user's under the context branch's name (no
	// manifest.json at its tip) is never checked out as the store: nothing is written to .context/ (the
	// ErrNotContextBranch error).
	publicTip, publicTree, err := s.checkContextTip(ctx)
	if publicTip.IsZero() {
		return out, err
	}
	if err != nil {
		return nil, err
	}
	// The user's branch may have put a link or tracked files at .context (docs/security.md): nothing is
	// written there. A .context/ deleted as a whole is not checked out again behind the user's back.
	exists, err := s.checkCheckoutDir(ctx)
	if err != nil {
		return nil, err
	}
	if !recreate {
		if err := s.checkoutMissing(exists); err != nil {
			return nil, err
		}
	}
	unlock, err := s.lockCheckout(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	fsys, err := openCheckout(root)
	if err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	defer fsys.Close()
	// Before any file of the store is written there: git ignores .context/ whatever the repository's
	// .gitignore says (docs/security.md "Private entries on disk").
	if err := s.ensureIgnored(fsys); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	// After an interrupted refresh (its journal is there) the record is recovered whole; otherwise only
	// the entries of the paths that changed are read from it (readRecordLazy).
	var rec *Record
	var found bool
	trustStat := false // the record's stat data may stand for the files' content (below)
	// The stat data of the record's files before they are read: with the bytes read, the key of the
	// status index of that record (statusindexcarry.go).
	var recSt0, logSt0 FileStat
	statOK := false
	_, jerr := os.Lstat(s.journalPath())
	// Temporary files left by killed writes: those of the git dir's ctx folder, and after an interrupted
	// refresh every one of .context/ (sweepLeftovers).
	s.sweepLeftovers(fsys, jerr == nil)
	if jerr == nil {
		rec, found, err = s.recoverRefresh(fsys)
	} else {
		recSt0, logSt0, statOK = recordStats(fsys)
		rec, found, err = s.readRecordLazy(fsys)
		trustStat = err == nil && found
	}
	if errors.Is(err, errRecordCorrupt) {
		// Every path is compared, as without a record: a file that differs from the ref is kept as a
		// hand edit, never overwritten.
		rec, found, err = &Record{Commits: map[Scope]string{}, Files: map[string]RecordEntry{}}, false, nil
	}
	if err != nil {
		return nil, err
	}
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	trees := map[Scope]gitstore.Hash{}
	oldTrees := map[Scope]gitstore.Hash{}
	// Without a record, or after an interrupted refresh, every path is compared.
	full := !found || rec.Incomplete
	for _, sc := range Scopes {
		if sc == Public && tips[sc] == publicTip {
			trees[sc] = publicTree // read by checkContextTip
		} else if trees[sc], err = s.repo.TreeOf(ctx, tips[sc]); err != nil {
			return nil, err
		}
		if c := rec.Commits[sc]; c != "" && !full {
			if oldTrees[sc], err = s.repo.TreeOf(ctx, gitstore.NewHash(c)); err != nil {
				full = true // the recorded commit is gone (gc): compare every path
			}
		}
	}
	changed := map[string]bool{}
	// What the diff of each scope says of a path of the new tree, so that the new blob of a changed path
	// is not looked up through a folder of 10,000 entries again (readableAt).
	known := map[Scope]*diffKnown{}
	for _, sc := range Scopes {
		old := oldTrees[sc]
		if full {
			old = gitstore.ZeroHash
		}
		added, removed, err := s.repo.DiffItems(ctx, old, trees[sc])
		if err != nil {
			return nil, err
		}
		known[sc] = newDiffKnown(added, removed)
		for _, it := range added {
			if reason, unsafe := itemProblem(it); reason != "" {
				out.Skipped = append(out.Skipped, Problem{Commit: tips[sc].String(), Scope: sc, Path: it.Path(),
					Entry: it.Kind(), Reason: reason, Unsafe: unsafe})
			}
			// A path whose names are all safe is looked at (a gitlink that replaced a file removes the
			// file); a name that is not safe never names a path of .context/.
			if it.Mode != gitstore.ModeDir && namesSafe(it.Names) {
				changed[it.Path()] = true
			}
		}
		for _, it := range removed {
			if namesSafe(it.Names) {
				changed[it.Path()] = true
			}
		}
	}
	if full {
		if err := rec.LoadAll(); err != nil {
			return nil, err
		}
		for p := range rec.Files {
			changed[p] = true
		}
	}
	// A file deleted by hand from .context/ is a hand edit (ctx status lists it, ctx commit records it),
	// not something to restore; only a .context/ without a record (a first checkout, or ctx restore of a
	// removed one) is checked out whole.
	for p := range force {
		changed[p] = true
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		if checkPath(p) == nil && !isIgnoreFile(p) { // a record of an older ctx may hold anything
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	// Each lookup in a lazily read record scans its bytes: for many paths (a pull of a teammate's week)
	// parsing the record once is cheaper.
	// When the status index of the record read is at hand, its entries are the record's (and the refresh
	// writes the index of the record it writes, carriedIndex).
	var base *statusIndex
	if len(paths) > lazyLookupMax {
		if statOK && rec.Lazy() {
			raw, logRaw := rec.Bytes()
			base = s.baseIndex(keyOf(raw, logRaw, recSt0, logSt0))
		}
		if base != nil {
			rec.LoadAllWith(base.recordFiles())
		} else if err := rec.LoadAll(); err != nil {
			return nil, err
		}
	}
	// A file whose stat data are the record's, older than RecordFile (so not "racily clean",
	// gitformat-index(5)), still holds the recorded blob, as HandEdits trusts them (indexFromRecord):
	// it is not read again. Files the last refresh wrote are older than the record it wrote whole; those
	// of a line of RecordLogFile are newer than RecordFile and are read.
	recTime := int64(math.MinInt64)
	if trustStat {
		if fi, err := fsys.lstat(RecordFile); err == nil {
			recTime = fi.ModTime().UnixNano()
		}
	}
	// The folders of .context/ are opened once, checked for symbolic links on the way, for the lstat of
	// each path and then the writes (applyRefresh).
	w := fsys.dirWriter()
	defer w.Close()
	var ops []refreshOp
	// The entries a folder in the way kept from being written (CheckoutBlockedError).
	var blocked *CheckoutBlockedError
	for _, p := range paths {
		newScope, newBlob, err := s.readableAt(ctx, trees, p, known)
		if err != nil {
			return nil, err
		}
		// Stat data before the read: a change after it changes them. A folder on the way that is a link
		// fails here, and the read below keeps the path.
		typ, st, lerr := w.lstat(p)
		before := lerr == nil && typ == 0 // a regular file, through folders without links
		old, had := rec.Entry(p)
		var cur gitstore.Hash // the blob of the file on disk, when onDisk
		onDisk := false
		if had && old.Stat != nil && old.Stat.Mtime < recTime && old.Stat.Ctime < recTime && before &&
			st == *old.Stat {
			cur, onDisk = gitstore.NewHash(old.Blob), true
		} else {
			data, derr := fsys.readFile(p)
			if derr != nil && !errors.Is(derr, fs.ErrNotExist) {
				// A folder on the way that is a link or a file: the entry cannot be written, and the record
				// must not say it was (below).
				if dir, link := fsys.blockedFolder(p); dir != "" && !newBlob.IsZero() {
					if blocked == nil {
						blocked = &CheckoutBlockedError{Dir: filepath.Join(root, filepath.FromSlash(dir)), Link: link}
					}
					blocked.Paths = append(blocked.Paths, p)
					continue
				}
				// A symbolic link, a folder where a file should be: not ctx's to overwrite.
				out.Kept = append(out.Kept, p)
				continue
			}
			if onDisk = derr == nil; onDisk {
				cur = blobHash(data)
			}
		}
		switch {
		case onDisk && !newBlob.IsZero() && cur == newBlob:
			// already what the ref has
		case onDisk && !force[p] && (!had || cur.String() != old.Blob):
			out.Kept = append(out.Kept, p)
			continue
		case newBlob.IsZero():
			if onDisk {
				ops = append(ops, refreshOp{path: p, remove: true})
			}
		default:
			ops = append(ops, refreshOp{path: p, blob: newBlob, scope: newScope})
		}
		if newBlob.IsZero() {
			if had {
				rec.Remove(p)
			}
		} else {
			e := RecordEntry{Scope: newScope, Blob: newBlob.String()}
			if onDisk && before && cur == newBlob {
				e.Stat = &st
			}
			if !had || !sameEntry(e, old) {
				rec.Put(p, e)
			}
		}
	}
	for _, sc := range Scopes {
		rec.Commits[sc] = ""
		if !tips[sc].IsZero() {
			rec.Commits[sc] = tips[sc].String()
		}
	}
	// Entries not written leave the record incomplete: .context/ reads as behind the refs (ctx status,
	// CheckoutView) and the next refresh compares every path, so it writes them once the folder is fixed.
	rec.Incomplete = blocked != nil
	// The tips' problems are those of what changed when the recorded tips had none (or every path was
	// compared); otherwise they are looked for once in the whole trees, and the record remembers the answer.
	switch {
	case full || rec.Clean:
		rec.Clean = len(out.Skipped) == 0
	default:
		ps, err := s.TreeProblems(ctx)
		if err != nil {
			return nil, err
		}
		rec.Clean = len(ps) == 0
	}
	out.Clean = rec.Clean
	if len(ops) > 0 {
		stats, err := s.applyRefresh(ctx, fsys, w, ops, out)
		if err != nil {
			// What was written is recorded now rather than at the next refresh.
			if _, _, rerr := s.recoverRefresh(fsys); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return nil, err
		}
		for _, op := range ops {
			if st := stats[op.path]; st != nil && !op.remove {
				e, _ := rec.Entry(op.path)
				e.Stat = st
				rec.Put(op.path, e)
			}
		}
	}
	// The next index's stamp is taken after the files were written and before the record is: the record
	// is racily clean against it (the next scan checks its bytes), the files written in an earlier clock
	// tick are not.
	var iw *indexWriter
	var changedPaths []string
	if base != nil {
		changedPaths = rec.Changed()
		iw = s.newIndexWriter()
	}
	if err := writeRecordFS(fsys, rec); err != nil {
		if iw != nil {
			iw.discard()
		}
		return nil, fmt.Errorf("refresh: %w", err)
	}
	if iw != nil {
		s.writeCarriedIndex(ctx, fsys, iw, base, rec, changedPaths)
	}
	if err := s.markCheckoutMade(); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	if len(ops) > 0 {
		if err := os.Remove(s.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("refresh: remove journal: %w", err)
		}
	}
	if blocked != nil {
		return out, fmt.Errorf("refresh: %w", blocked)
	}
	return out, nil
}

// sameEntry reports whether two entries record the same blob, scope and stat data.
func sameEntry(a, b RecordEntry) bool {
	if a.Scope != b.Scope || a.Blob != b.Blob || (a.Stat == nil) != (b.Stat == nil) {
		return false
	}
	return a.Stat == nil || *a.Stat == *b.Stat
}

// applyRefresh writes the journal of ops, then does them; it returns the stat data of the files written.
func (s *Store) applyRefresh(ctx context.Context, fsys *checkoutFS, w *dirWriter, ops []refreshOp, out *Refreshed) (map[string]*FileStat, error) {
	j := journal{Write: map[string]RecordEntry{}}
	for _, op := range ops {
		if op.remove {
			j.Remove = append(j.Remove, op.path)
		} else {
			j.Write[op.path] = RecordEntry{Scope: op.scope, Blob: op.blob.String()}
		}
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	// Atomic, not synced: the files it describes are written without fsync (atomicfile.NoSync), so a
	// power loss can leave them old or empty whatever the journal says, and a killed process needs no
	// fsync for the journal to be read back (docs/security.md "Interrupted refreshes").
	if err := writeJournal(s.journalPath(), b); err != nil {
		return nil, fmt.Errorf("refresh: write journal: %w", err)
	}
	stats := make(map[string]*FileStat, len(ops))
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("refresh: %w", err)
		}
		if op.remove {
			if err := w.remove(op.path); err != nil {
				return nil, fmt.Errorf("refresh: remove %s: %w", op.path, err)
			}
			out.Removed = append(out.Removed, op.path)
		} else {
			data, ok := s.made.get(op.blob) // a file the pull's merge made (madeBlobs)
			if ok {
				madeBlobsUsed.Add(1)
			} else {
				var err error
				if data, err = s.repo.ReadBlob(ctx, op.blob); err != nil {
					return nil, err
				}
			}
			fi, err := w.writeFile(op.path, data)
			if err != nil {
				return nil, fmt.Errorf("refresh %s: %w", op.path, err)
			}
			stats[op.path] = fi
			out.Written = append(out.Written, op.path)
		}
		if refreshInterrupt != nil {
			refreshInterrupt(i + 1)
		}
	}
	return stats, nil
}

// readableAt returns the scope and blob of the file at the slash path p in the first scope that has a
// file ctx reads there (a regular file at a place of the layout); ZeroHash when none has.
func (s *Store) readableAt(ctx context.Context, trees map[Scope]gitstore.Hash, p string, known map[Scope]*diffKnown) (Scope, gitstore.Hash, error) {
	if LayoutPath(p) != nil {
		return "", gitstore.ZeroHash, nil
	}
	for _, sc := range Scopes {
		it, ok, decided := known[sc].at(p)
		if !decided {
			var err error
			if it, ok, err = s.repo.Stat(ctx, trees[sc], p); err != nil {
				return "", gitstore.ZeroHash, err
			}
		}
		if ok && it.IsFile() {
			return sc, it.Hash, nil
		}
	}
	return "", gitstore.ZeroHash, nil
}

// diffKnown is what a diff of a scope's trees (DiffItems from the recorded tree to the new one) tells of
// the new tree: the leaves it added (with their mode and blob) and the paths it no longer holds.
type diffKnown struct {
	added map[string]gitstore.Item
	gone  map[string]bool
}

// newDiffKnown indexes DiffItems' results; nil (every path is looked up) when a name is duplicated in
// the new tree, where a path can name an entry that Stat refuses.
func newDiffKnown(added, removed []gitstore.Item) *diffKnown {
	k := &diffKnown{added: make(map[string]gitstore.Item, len(added)), gone: map[string]bool{}}
	for _, it := range added {
		if it.Duplicate {
			return nil
		}
		// A name holding "/" would make its joined path look like a nested one: only entries whose names
		// are all safe say anything of a path.
		if namesSafe(it.Names) {
			k.added[it.Path()] = it
		}
	}
	for _, it := range removed {
		if namesSafe(it.Names) {
			k.gone[it.Path()] = true
		}
	}
	return k
}

// at returns the new tree's entry at p as Stat would (decided), or decided false when the diff does not
// say (p is unchanged in this scope, or no diff is known).
func (k *diffKnown) at(p string) (it gitstore.Item, ok, decided bool) {
	if k == nil {
		return gitstore.Item{}, false, false
	}
	if it, found := k.added[p]; found {
		return it, true, true
	}
	if k.gone[p] {
		return gitstore.Item{}, false, true
	}
	return gitstore.Item{}, false, false
}

// namesSafe reports whether every name passes gitstore.CheckName (so that the joined path names the entry
// and nothing else).
func namesSafe(names []string) bool {
	for _, n := range names {
		if gitstore.CheckName(n) != nil {
			return false
		}
	}
	return true
}

// FileChange is how a file changed: added, modified or deleted (a hand edit, a file of a history event).
type FileChange string

// The file changes.
const (
	ChangeAdded    FileChange = "added"
	ChangeModified FileChange = "modified"
	ChangeDeleted  FileChange = "deleted"
)

// String is the change's name ("modified").
func (c FileChange) String() string { return string(c) }

// HandEdit is a file of the checked-out tree that differs from what ctx last wrote there.
type HandEdit struct {
	Path   string     `json:"path"`
	Change FileChange `json:"change"`
	Scope  Scope      `json:"scope"`
}

// blockedDeletions returns the folder of .context/ (a symbolic link, or a file: link says which) that every
// path of deleted goes through, "" when there is none or the paths are not all under one.
func (s *Store) blockedDeletions(deleted []string) (dir string, link bool) {
	fsys, err := openCheckout(s.CheckoutRoot())
	if err != nil {
		return "", false
	}
	defer func() { _ = fsys.Close() }()
	for i, p := range deleted {
		d, l := fsys.blockedFolder(p)
		if d == "" || (i > 0 && d != dir) {
			return "", false
		}
		dir, link = d, l
	}
	return dir, link
}

// HandEdits lists the files of the checked-out tree edited by hand since the last refresh, sorted by path.
// None when the tree was never checked out. It compares with what ctx actually wrote: a refresh that was
// interrupted is recorded first (recoverRefresh), so its half-written files are never hand edits. A
// symbolic link in .context/ is listed (ctx commit refuses it) and never followed.
func (s *Store) HandEdits(ctx context.Context) ([]HandEdit, error) {
	edits, _, err := s.scanCheckout(ctx, scanOptions{})
	return edits, err
}

// scopeFromContent reads the scope of a file added by hand from its front matter (`scope: private`);
// public otherwise.
func scopeFromContent(b []byte) Scope {
	fm, _, ok := SplitFrontMatter(b)
	if !ok {
		return Public
	}
	m, err := ParseMeta(fm)
	if err != nil {
		return Public
	}
	sc, err := ParseScope(m.String("scope"))
	if err != nil {
		return Public
	}
	return sc
}

// CommitHandEdits records the hand edits of the checked-out tree as one commit per scope touched (ctx
// commit). msg replaces the default summary. Nothing to record is no commit and no error.
//
// Every edited file is validated first (ValidateFile): one that would break readers on every clone is
// refused, with all the problems listed, and nothing is committed. When the context ref has moved since
// the file was checked out (a write of another process or worktree, or a pull), the hand edit is merged
// three-way with the merge layer (base: the version checked out, ours: the file on disk, theirs: the
// ref's version): a newer write is never silently reverted, and an overlapping change becomes a conflict
// record. The checked-out tree then mirrors what was committed.
func (s *Store) CommitHandEdits(ctx context.Context, msg string) (*Committed, []HandEdit, error) {
	return s.commitHandEdits(ctx, msg, false)
}

// commitHandEdits is CommitHandEdits; with auto (the hand edits a pull records on its own) a file deleted
// by hand is not recorded: the whole call fails with a *HandDeletionsError and commits nothing.
func (s *Store) commitHandEdits(ctx context.Context, msg string, auto bool) (*Committed, []HandEdit, error) {
	// A pull (auto) refreshes after this scan: the scan's status index is kept for that refresh
	// (indexHandoff), which Pull drops.
	edits, _, err := s.scanCheckout(ctx, scanOptions{handoff: auto})
	if err != nil {
		return nil, nil, err
	}
	if len(edits) == 0 {
		return &Committed{}, nil, nil
	}
	if by := s.removedByGit(ctx, edits); len(by) > 0 {
		// Deletions git made on a checkout away from a branch that tracks them: never a team deletion
		// (gitremoved.go). Remembered, so that they stay refused once that branch is gone.
		paths, tracked := make([]string, 0, len(by)), make([]string, 0, len(by))
		for p := range by {
			paths = append(paths, p)
			tracked = append(tracked, CheckoutDir+"/"+p)
		}
		sort.Strings(paths)
		_ = s.rememberGitWritten(tracked)
		return nil, edits, &GitWrittenError{Paths: paths, RemovedBy: by}
	}
	if err := s.refuseGitWritten(edits); err != nil {
		return nil, edits, err
	}
	for _, e := range edits {
		if e.Path == ManifestPath && e.Change == ChangeDeleted {
			// Without it the branch is no context store for anyone who pulls it (docs/security.md).
			return nil, edits, invalidf("nothing committed: %s/%s was deleted, and a context store needs it: bring it back with ctx restore %s", CheckoutDir, ManifestPath, ManifestPath)
		}
	}
	if auto {
		var deleted []string
		for _, e := range edits {
			if e.Change == ChangeDeleted {
				deleted = append(deleted, e.Path)
			}
		}
		if len(deleted) > 0 {
			he := &HandDeletionsError{Paths: deleted}
			he.Blocked, he.Link = s.blockedDeletions(deleted)
			return nil, edits, he
		}
	}
	rec, err := s.ReadRecord()
	if err != nil {
		return nil, nil, err
	}
	disk, problems, err := s.handEditProblems(ctx, edits)
	if err != nil {
		return nil, edits, err
	}
	if len(problems) > 0 {
		return nil, edits, invalidf("nothing committed: fix or remove these files of %s first:\n  %s", CheckoutDir, strings.Join(problems, "\n  "))
	}
	// A knowledge or convention entry edited by hand is the committer's now, as a write of theirs would
	// be: its front matter names them, their agent and this time (docs/format.md "Front matter"), so a
	// later conflict names the right writer.
	if len(disk) > 0 {
		if err := s.stampHandEdits(ctx, disk); err != nil {
			return nil, edits, err
		}
	}
	// One commit per scope, each naming only the paths of its own scope: the public commit must not list
	// a private path (docs/security.md).
	byScope := map[Scope][]string{}
	force := map[string]bool{}
	for _, e := range edits {
		byScope[e.Scope] = append(byScope[e.Scope], e.Path)
		force[e.Path] = true
	}
	renames, err := s.handRenames(ctx, rec, edits, disk)
	if err != nil {
		return nil, edits, err
	}
	op := Op{Name: "commit", Scoped: map[Scope]Op{}}
	for sc, paths := range byScope {
		summary := msg
		if summary == "" {
			summary = fmt.Sprintf("record %d hand edit(s) of %s", len(paths), CheckoutDir)
		}
		// A decision renamed by hand names its old path in a Ctx-Renamed trailer of its scope's commit.
		op.Scoped[sc] = Op{Name: "commit", Key: strings.Join(paths, ","), Summary: summary, Extra: renamedTrailers(renames[sc])}
	}
	op.Summary = msg
	if op.Summary == "" {
		op.Summary = "record hand edits of " + CheckoutDir
	}
	var conflicts []merge.Conflict
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		conflicts = nil // fn may run again when a ref moved
		ed := Edits{}
		decisionEdits := map[Scope][]HandEdit{}
		for _, e := range edits {
			if strings.HasPrefix(e.Path, "decisions/") {
				// Decisions merge as a folder (renumbering follows a decision by uid, numbers stay unique).
				decisionEdits[e.Scope] = append(decisionEdits[e.Scope], e)
				continue
			}
			cur, err := v.ReadIn(ctx, e.Scope, e.Path)
			curExists := err == nil
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			fb, err := s.recordedFiles(ctx, rec, e.Scope, e.Path, false)
			if err != nil {
				return nil, err
			}
			ft := merge.Files{}
			if curExists {
				ft[e.Path] = cur
			}
			conflicts = append(conflicts, s.mergeHandEdits(fb, ft, []HandEdit{e}, disk, e.Scope, ed)...)
		}
		for sc, des := range decisionEdits {
			fb, err := s.recordedFiles(ctx, rec, sc, "decisions/", true)
			if err != nil {
				return nil, err
			}
			ft := merge.Files{}
			names, err := v.r.List(ctx, sc, "decisions")
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				if n.Dir {
					continue
				}
				b, err := v.ReadIn(ctx, sc, "decisions/"+n.Name)
				if err != nil {
					return nil, err
				}
				ft["decisions/"+n.Name] = b
			}
			conflicts = append(conflicts, s.mergeHandEdits(fb, ft, des, disk, sc, ed)...)
		}
		return ed, nil
	})
	if err != nil {
		return c, edits, err
	}
	c.Conflicts = conflicts
	// What was committed replaces the hand-edited files (their content is in the commit or in a conflict
	// record), so that .context/ mirrors the branch again.
	if _, err := s.refresh(ctx, force); err != nil {
		c.Warnings = append(c.Warnings, warn(ctx, refreshWarning(err)))
	}
	return c, edits, nil
}

// handRenames are the decisions renamed by hand among edits, per scope, as [old, new] paths sorted by old
// path: a decision file deleted and one added in the same scope that hold the same decision (the same
// `uid` in the front matter, else the same bytes: a plain mv). The old file's content is the checked-out
// blob of rec; the new one's is disk's.
func (s *Store) handRenames(ctx context.Context, rec *Record, edits []HandEdit, disk map[string][]byte) (map[Scope][][2]string, error) {
	type file struct {
		path, uid string
		data      []byte
	}
	uidOf := func(b []byte) string {
		fm, _, ok := SplitFrontMatter(b)
		if !ok {
			return ""
		}
		m, err := ParseMeta(fm)
		if err != nil {
			return ""
		}
		return m.String("uid")
	}
	gone, added := map[Scope][]file{}, map[Scope][]file{}
	for _, e := range edits {
		if !strings.HasPrefix(e.Path, "decisions/") {
			continue
		}
		switch e.Change {
		case ChangeDeleted:
			f, ok := rec.Files[e.Path]
			if !ok {
				continue
			}
			b, err := s.repo.ReadBlob(ctx, gitstore.NewHash(f.Blob))
			if err != nil {
				return nil, fmt.Errorf("read the checked-out version of %s: %w", e.Path, err)
			}
			gone[e.Scope] = append(gone[e.Scope], file{e.Path, uidOf(b), b})
		case ChangeAdded:
			if b, ok := disk[e.Path]; ok {
				added[e.Scope] = append(added[e.Scope], file{e.Path, uidOf(b), b})
			}
		}
	}
	out := map[Scope][][2]string{}
	for sc, olds := range gone {
		sort.Slice(olds, func(i, j int) bool { return olds[i].path < olds[j].path })
		news := added[sc]
		sort.Slice(news, func(i, j int) bool { return news[i].path < news[j].path })
		used := make([]bool, len(news))
		for _, o := range olds {
			for i, n := range news {
				if !used[i] && (o.uid != "" && o.uid == n.uid || o.uid == "" && n.uid == "" && bytes.Equal(o.data, n.data)) {
					used[i] = true
					out[sc] = append(out[sc], [2]string{o.path, n.path})
					break
				}
			}
		}
	}
	return out, nil
}

// recordedFiles returns the files of scope sc as they were checked out (the blobs of the checkout record):
// the one file at p, or with dir every file whose path starts with p.
func (s *Store) recordedFiles(ctx context.Context, rec *Record, sc Scope, p string, dir bool) (merge.Files, error) {
	out := merge.Files{}
	for path, f := range rec.Files {
		if f.Scope != sc || (dir && !strings.HasPrefix(path, p)) || (!dir && path != p) {
			continue
		}
		b, err := s.repo.ReadBlob(ctx, gitstore.NewHash(f.Blob))
		if err != nil {
			return nil, fmt.Errorf("read the checked-out version of %s: %w", path, err)
		}
		out[path] = b
	}
	return out, nil
}

// mergeHandEdits adds to ed the edits that record hand edits (their content in disk; deleted ones
// absent) over the ref's current files ft, given the files as checked out, fb. When the ref has not
// moved (ft == fb) the hand edits are taken as they are; otherwise base fb, ours (fb with the hand edits)
// and theirs ft are merged with the merge layer and the result replaces ft (conflict records included).
func (s *Store) mergeHandEdits(fb, ft merge.Files, es []HandEdit, disk map[string][]byte, sc Scope, ed Edits) []merge.Conflict {
	fo := merge.Files{}
	for p, b := range fb {
		fo[p] = b
	}
	for _, e := range es {
		if b, ok := disk[e.Path]; ok {
			fo[e.Path] = b
		} else {
			delete(fo, e.Path)
		}
	}
	moved := len(fb) != len(ft)
	for p, b := range fb {
		if c, ok := ft[p]; !ok || !bytes.Equal(b, c) {
			moved = true
		}
	}
	result := fo
	var conflicts []merge.Conflict
	if moved {
		m := merge.Tree(fb, fo, ft)
		result, conflicts = m.Files, m.Conflicts
	} else {
		// Unchanged ref: the files the hand edits did not touch are as they are on the ref.
		for p, b := range ft {
			if _, ok := result[p]; !ok {
				if touched(es, p) {
					continue
				}
				result[p] = b
			}
		}
	}
	for p, b := range result {
		if c, ok := ft[p]; !ok || !bytes.Equal(b, c) {
			ed.Put(sc, p, b)
		}
	}
	for p := range ft {
		if _, ok := result[p]; !ok {
			ed.Del(sc, p)
		}
	}
	return conflicts
}

func touched(es []HandEdit, p string) bool {
	for _, e := range es {
		if e.Path == p {
			return true
		}
	}
	return false
}

// checkPath refuses paths of the checked-out tree that could not be store paths: every segment must be a
// name git's fsck accepts for a tree entry, with ctx's stricter rules (gitstore.CheckName: no "", ".",
// "..", ".git" or its aliases, no NUL, no backslash).
func checkPath(p string) error {
	// Each "/"-separated name in turn, without splitting p into a slice (a scan checks every path of the
	// record: 10,000 at a time).
	for rest, more := p, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		if err := gitstore.CheckName(seg); err != nil {
			return fmt.Errorf("%s: not a valid path in the store: %w", p, err)
		}
	}
	return nil
}

// CheckoutView returns a view of the checked-out tree (the MCP server's reads, docs/mcp.md), refreshing it
// first when a context ref moved since it was written (a write or pull of another process). A bare
// repository reads from the refs. ErrNotInitialized when there is no context branch.
func (s *Store) CheckoutView(ctx context.Context) (*View, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	if tips[Public].IsZero() {
		return nil, ErrNotInitialized
	}
	root := s.CheckoutRoot()
	if root == "" {
		return s.RefView(ctx)
	}
	// A .context that is not ctx's (a link, tracked files) is never read, and a removed one is not checked
	// out again behind the user's back: the refs serve, and the caller is told why.
	exists, err := s.checkCheckoutDir(ctx)
	if err == nil {
		err = s.checkoutMissing(exists)
	}
	if err != nil {
		if !errors.Is(err, ErrCheckoutDir) && !errors.Is(err, ErrCheckoutMissing) {
			return nil, err
		}
		warn(ctx, fmt.Sprintf("read from the context branch, not %s: %v", CheckoutDir, err))
		return s.RefView(ctx)
	}
	want := map[Scope]string{}
	for _, sc := range Scopes {
		if !tips[sc].IsZero() {
			want[sc] = tips[sc].String()
		}
	}
	// Every MCP read comes here: while neither the refs nor the record file changed, the scopes of the
	// last read serve again instead of parsing the record (one line per file of the store) each time.
	// A refresh journal left there is a refresh that did not finish: .context/ is not what the record says
	// until the next refresh has recorded it.
	_, jerr := os.Stat(s.journalPath())
	unfinished := jerr == nil
	key, keyOK := recordKeyOf(root)
	if rs := s.recCache.get(key, keyOK, want); rs != nil && !unfinished {
		return s.checkoutViewOf(ctx, tips, root, rs)
	}
	rec, err := s.ReadRecord()
	if err != nil {
		return nil, err
	}
	if rec == nil || unfinished || rec.Incomplete || !sameCommits(rec.Commits, want) {
		if _, err := s.Refresh(ctx); err != nil {
			if !errors.Is(err, ErrCheckoutBlocked) {
				return nil, err
			}
			// Entries are missing from .context/: the refs serve them all.
			warn(ctx, fmt.Sprintf("read from the context branch, not %s: %v", CheckoutDir, err))
			return s.RefView(ctx)
		}
		if rec, err = s.ReadRecord(); err != nil {
			return nil, err
		}
	}
	if rec == nil {
		return s.RefView(ctx)
	}
	scopes := make(map[string]Scope, len(rec.Files))
	for p, f := range rec.Files {
		scopes[p] = f.Scope
	}
	key, keyOK = recordKeyOf(root)
	rs := &recordScopes{scopes: scopes}
	s.recCache.put(key, keyOK, rec.Commits, rs)
	return s.checkoutViewOf(ctx, tips, root, rs)
}

// checkoutViewOf is the view of the checked-out tree root whose record gives rs's scopes, for ctx: the
// public-only one for a public-only ctx (publicCheckoutView).
func (s *Store) checkoutViewOf(ctx context.Context, tips map[Scope]gitstore.Hash, root string, rs *recordScopes) (*View, error) {
	if PublicOnly(ctx) {
		return s.publicCheckoutView(ctx, tips[Public], root, rs)
	}
	return NewView(&DirReader{Root: root, Scopes: rs.scopes}), nil
}

// sameCommits reports whether a checkout record mirrors the tips want (scope -> commit; absent = no ref).
func sameCommits(rec map[Scope]string, want map[Scope]string) bool {
	for _, sc := range Scopes {
		if rec[sc] != want[sc] {
			return false
		}
	}
	return true
}

// recordKey tells a change of the checkout record's files: the modification time and size of RecordFile
// and of RecordLogFile (zero when there is none).
type recordKey struct {
	mod, size, logMod, logSize int64 // nanoseconds since the epoch, bytes
}

// recordKeyOf stats the record's files under the checked-out tree root; ok false when RecordFile cannot
// be stat'ed.
func recordKeyOf(root string) (recordKey, bool) {
	fi, err := os.Stat(filepath.Join(root, RecordFile))
	if err != nil {
		return recordKey{}, false
	}
	k := recordKey{mod: fi.ModTime().UnixNano(), size: fi.Size()}
	if li, err := os.Stat(filepath.Join(root, RecordLogFile)); err == nil {
		k.logMod, k.logSize = li.ModTime().UnixNano(), li.Size()
	}
	return k, true
}

// recordCache remembers the scopes of the checkout record as last read, with the key of its files and
// the commits it mirrors.
type recordCache struct {
	mu      sync.Mutex
	key     recordKey
	commits map[Scope]string
	scopes  *recordScopes
}

// recordScopes is what CheckoutView keeps of a checkout record: the scope of each path, and, made by the
// first public-only read of that record and kept for the next ones, the paths a public-only view reads
// from the public ref (hiddenPaths).
type recordScopes struct {
	scopes     map[string]Scope
	hiddenOnce sync.Once
	hidden     map[string]bool
}

// hiddenPaths is hiddenPaths of rs's scopes, made once.
func (rs *recordScopes) hiddenPaths() map[string]bool {
	rs.hiddenOnce.Do(func() { rs.hidden = hiddenPaths(rs.scopes) })
	return rs.hidden
}

// get returns the cached scopes when the record's files are the ones read last and mirror want; nil
// otherwise.
func (c *recordCache) get(key recordKey, ok bool, want map[Scope]string) *recordScopes {
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scopes == nil || key != c.key || !sameCommits(c.commits, want) {
		return nil
	}
	return c.scopes
}

func (c *recordCache) put(key recordKey, ok bool, commits map[Scope]string, scopes *recordScopes) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		c.scopes = nil
		return
	}
	c.key, c.commits, c.scopes = key, commits, scopes
}

// stampHandEdits sets author, agent and updated_at in the front matter of the knowledge and convention
// files of disk (path → content) to the committer's identity, agent and the time now. A file without
// front matter is left as it is (ValidateFile accepted it).
func (s *Store) stampHandEdits(ctx context.Context, disk map[string][]byte) error {
	for p, data := range disk {
		if !strings.HasPrefix(p, KnowledgeKind.Dir+"/") && !strings.HasPrefix(p, ConventionKind.Dir+"/") {
			continue
		}
		fm, body, ok := SplitFrontMatter(data)
		if !ok {
			continue
		}
		m, err := ParseMeta(fm)
		if err != nil {
			continue
		}
		if err := s.stampMeta(ctx, m, nil); err != nil {
			return err
		}
		disk[p] = JoinFrontMatter(m, body)
	}
	return nil
}

// scopeEdited says why a hand-edited file cannot be committed as it is when its front matter's scope
// names another scope than the one the file is in (sc), or no scope at all: a hand edit of "scope:" does
// not move an entry, and committing it would publish a file labelled private (docs/format.md, the
// scopes at its top). "" when the front matter has no scope or the right one.
func scopeEdited(p string, sc Scope, data []byte) string {
	fm, _ := ReadFrontMatter(data)
	v, has := fm.Values["scope"]
	if !has || v == string(sc) {
		return ""
	}
	how := fmt.Sprintf("put back scope: %s", sc)
	if kind, key, ok := entryOfPath(p); ok {
		if named, err := ParseScope(v); err == nil {
			how = fmt.Sprintf("move it with ctx %s scope %s %s, or put back scope: %s", kind, key, named, sc)
		}
	}
	return fmt.Sprintf("%s: its front matter says scope: %s, but the file is %s (a hand edit of scope: does not move an entry): %s", p, v, sc, how)
}

// entryOfPath names the command and key of a knowledge or convention entry's path: "knowledge",
// "architecture" for knowledge/architecture.md.
func entryOfPath(p string) (kind, key string, ok bool) {
	for dir, name := range map[string]string{"knowledge/": "knowledge", "conventions/": "convention"} {
		if rest, found := strings.CutPrefix(p, dir); found && !strings.Contains(rest, "/") {
			if key, found := strings.CutSuffix(rest, ".md"); found {
				return name, key, true
			}
		}
	}
	return "", "", false
}

// CheckoutViewFiles lists the files besides the entries' own whose stat data tell whether CheckoutView
// may serve something else than it did when they were last seen unchanged: the loose ref file and
// packed-refs of each scope's ref (gitstore.Repo.RefFiles; the private and ephemeral refs' are in the
// local-only repository) and, with a checked-out tree, the checkout record, its log and the refresh
// journal. Each listed once;
// paths that do not exist are listed too. A reader that caches what it read keys it by these files' stat
// data and by those of every file it read (View.Observe): a write, a pull or `git update-ref` replaces a
// ref file, a refresh rewrites the record, a hand edit changes the entry's file.
func (s *Store) CheckoutViewFiles() []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, sc := range Scopes {
		for _, p := range s.repo.RefFiles(s.RefOf(sc)) {
			add(p)
		}
	}
	if root := s.CheckoutRoot(); root != "" {
		add(filepath.Join(root, RecordFile))
		add(filepath.Join(root, RecordLogFile))
		add(s.journalPath()) // a refresh under way, or killed: CheckoutView finishes it first
	}
	return out
}
