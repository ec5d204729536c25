package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/gitstore/objwrite"
	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/internal/plainfile"
	"github.com/ctx-dev/ctx/internal/safepath"
	"github.com/ctx-dev/ctx/store/checkoutrec"
)

// The post-checkout hook after the context branch moved (docs/hooks.md "A checkout after the context branch
// moved", docs/architecture.md "The lean front"): what ctx-full's `ctx hooks run post-checkout OLD NEW 1`
// does (hooks.Run with cmd/ctx/app's actions, store.Refresh), answered here only on its happy path:
//
//   - the main worktree of a repository found as serve finds it (openStore), no GIT_WORK_TREE,
//     GIT_COMMON_DIR, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES, no
//     CTX_HOOKS=0, no rebase, cherry-pick or revert stopped;
//   - the hooks' stamp still holding: nothing to do, as ctx-full;
//   - otherwise: the context branch exists; .context/ is a folder ctx checked out here, its checkout record
//     present, readable, complete and clean, no refresh journal, the checkout lock free; no private or
//     ephemeral ref anywhere, nor recorded; the tracked-files check answered by its cache or in process
//     (the index and HEAD's root tree, as gitstore.Repo.NothingTrackedIn); no agents' files enabled for
//     refresh (no adapters record) and no activity folder on the branch (so no branch to record);
//   - what moved is only regular files knowledge/KEY.md and conventions/KEY.md (KEY: plainKey), at most
//     checkoutrec.LazyLookupMax of them, and each file on disk is what the record says (by its stat data,
//     as store.Refresh trusts them, or by its content): no hand edit to keep.
//
// Anything else returns false before anything is written, and main runs ctx-full with the same arguments.
// The record is read and written with checkoutrec, the same code store.Refresh uses, and every file with
// internal/atomicfile, as the store writes them; the differential tests of hook_test.go run both programs
// on copies of one repository and compare what they leave.
//
// An error once writing has begun (a full disk) also hands over: ctx-full then finds the refresh journal
// this left, completes the refresh as after an interrupted one and reports what went wrong.

// hookStampFile is the hooks' stamp in the worktree's git dir (hooks.StampFile, store.HookStampFile).
const hookStampFile = "ctx-hook-stamp"

// checkoutDir is the checked-out tree at the work tree's root (store.CheckoutDir).
const checkoutDir = ".context"

// postCheckout runs the post-checkout hook with git's arguments args (previous HEAD, new HEAD, flag); true
// when it was done here (nothing is printed: a hook that went well is silent), false when ctx-full must.
func postCheckout(args []string) bool {
	if len(args) != 3 || !hex40(args[0]) || !hex40(args[1]) || args[2] != "1" {
		return false
	}
	for _, v := range []string{"GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "CTX_TEST_KILL_REFRESH_AFTER"} {
		if os.Getenv(v) != "" {
			return false
		}
	}
	if v, ok := os.LookupEnv("CTX_HOOKS"); ok && strings.TrimSpace(v) == "0" {
		return false
	}
	// A short-lived process whose heap stays small (the trees of two folders, a few files): no collection
	// below 256 MiB, as ctx-full's hooks run with the collector mostly off.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	s, ok := openStore()
	if !ok {
		return false
	}
	defer s.close()
	if s.workTree == "" || filepath.Clean(s.gitDir) != filepath.Clean(s.common) {
		return false // bare, or a linked worktree
	}
	// hooks.guard: git checks out and commits many times during a rebase, a cherry-pick or a revert.
	for _, name := range []string{"rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD"} {
		if _, err := os.Lstat(filepath.Join(s.gitDir, name)); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	// A checkout away from a commit that tracks files under .context/ (a teammate's `git add -f`): git
	// removed them, and ctx-full puts the context branch's version back (docs/hooks.md "Files git removed
	// in a checkout"), whether or not the stamp holds.
	if args[0] != args[1] && !s.tracksNothingIn(args[0], checkoutDir) {
		return false
	}
	if fresh, ok := s.hookFresh(); !ok {
		return false
	} else if fresh {
		return true // hooks.NothingMoved: nothing to do, nothing written
	}
	h, ok := s.planRefresh()
	if !ok {
		return false
	}
	return h.apply(nil)
}

// tracksNothingIn reports that commit rev (40 hex digits) is readable here and its root tree has no entry
// named name; false means "maybe", for ctx-full to answer. Only the commit's tree line and the root tree
// are read (any commit form, a signed one included).
func (s *store) tracksNothingIn(rev, name string) bool {
	var h objread.Hash
	if _, err := hex.Decode(h[:], []byte(rev)); err != nil {
		return false
	}
	t, b, err := s.read(h)
	if err != nil || t != objread.Commit {
		return false
	}
	v, ok := bytes.CutPrefix(b, []byte("tree "))
	if !ok || len(v) < 41 || v[40] != '\n' {
		return false
	}
	var tree objread.Hash
	if _, err := hex.Decode(tree[:], v[:40]); err != nil {
		return false
	}
	_, found, ok := s.lookup(tree, name)
	return ok && !found
}

// hex40 reports whether v is 40 lower-case hex digits (an object name as git passes it to the hook).
func hex40(v string) bool {
	if len(v) != 40 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// stampRefOK is hooks.stampRef: ^refs/[A-Za-z0-9._/-]+$.
func stampRefOK(r string) bool {
	rest, ok := strings.CutPrefix(r, "refs/")
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}

// refValues is store.RefValues (git for-each-ref --format='%(refname)=%(objectname)' REF...): REF=OID of
// each ref of refs that exists in the repository, sorted by name.
func (s *store) refValues(refs []string) ([]string, bool) {
	sorted := append([]string(nil), refs...)
	sort.Strings(sorted)
	hs, err := objread.ReadRefs(s.common, sorted...) // one read of packed-refs for all of them
	if err != nil {
		return nil, false
	}
	var out []string
	for i, r := range sorted {
		if !hs[i].IsZero() {
			out = append(out, r+"="+hs[i].String())
		}
	}
	return out, true
}

// headName is store.Head (git rev-parse --symbolic-full-name HEAD): the branch's full name, or "HEAD" when
// detached.
func (s *store) headName() (string, bool) {
	b, err := objread.ReadFile(filepath.Join(s.gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	v := strings.TrimSpace(string(b))
	if target, ok := strings.CutPrefix(v, "ref: "); ok {
		return target, true
	}
	return "HEAD", true
}

// hookFresh is hooks.fresh: the checkout record exists and the stamp's line is the refs' values now
// followed by `*` or by HEAD's full name. ok false: a question ctx-full answers (a ref not read here).
func (s *store) hookFresh() (fresh, ok bool) {
	if _, err := os.Stat(filepath.Join(s.workTree, checkoutDir, checkoutrec.RecordFile)); err != nil {
		return false, true
	}
	b, err := objread.ReadFile(filepath.Join(s.gitDir, hookStampFile))
	if err != nil || len(b) > 64<<10 {
		return false, true
	}
	line, found := strings.CutSuffix(string(b), "\n")
	if !found || strings.Contains(line, "\n") {
		return false, true
	}
	list, want, found := strings.Cut(line, "|")
	if !found {
		return false, true
	}
	refs := strings.Fields(list)
	if len(refs) == 0 {
		return false, true
	}
	for _, r := range refs {
		if !stampRefOK(r) {
			return false, true
		}
	}
	values, ok := s.refValues(refs)
	if !ok {
		return false, false
	}
	have := ""
	for _, v := range values {
		have += v + " "
	}
	if want == have+"*" {
		return true, true
	}
	head, ok := s.headName()
	return ok && head != "" && want == have+head, true
}

// refresh is a refresh planned by planRefresh, applied by apply.
type refresh struct {
	s        *store
	lock     *os.File // the checkout lock, held
	root     *os.Root // .context/
	rec      *checkoutrec.Record
	ops      []refreshOp
	stamp    string // the stamp's line
	untrKey  string // the tracked-files check's key to cache, "" when cached already
	lockPath string
	// hookStamp: apply writes the hooks' stamp at the end (the post-checkout hook); a write's refresh
	// only removes it, as store.Refresh does.
	hookStamp bool
	// dirs are the folders of .context/ plan opened, by name, kept open until release for prepare and
	// apply.
	dirs map[string]*dirHandle
	// What prepare made ahead of apply (prepared true): the tracked-files cache's and the journal's
	// temporary files, and each op's file (by index in ops; nil for a removal or a folder still to make).
	prepared   bool
	untrTmp    *atomicfile.Pending
	journalTmp *atomicfile.Pending
	fileTmps   []*atomicfile.Pending
}

// refreshOp is one file written (blob) or removed (remove) in .context/.
type refreshOp struct {
	path   string
	blob   objread.Hash
	remove bool
}

// journal is store's refresh journal (<git dir>/ctx/checkout-journal.json).
type journal struct {
	Write  map[string]checkoutrec.RecordEntry `json:"write"`
	Remove []string                           `json:"remove"`
}

// planRefresh reads what store.Refresh reads and decides what it decides, with the checkout lock held; ok
// false (the lock released, nothing written) for anything off the happy path.
func (s *store) planRefresh() (*refresh, bool) {
	pub, ok := s.tip(s.branch)
	if !ok || pub.IsZero() {
		return nil, false // not initialised: ctx-full has nothing to do, or says why
	}
	h, ok := s.prepareRefresh()
	if !ok {
		return nil, false
	}
	// store.Refresh reads the tips under the lock: a branch that moved since the stamp's values were read
	// is ctx-full's (its stamp then names the older tips, and the next hook runs again).
	if again, ok := s.tip(s.branch); !ok || again != pub {
		h.release()
		return nil, false
	}
	if !h.plan(pub) {
		h.release()
		return nil, false
	}
	h.hookStamp = true
	return h, true
}

// prepareRefresh checks what store.Refresh checks before it reads the record (.context/ a folder ctx
// checked out here, no adapters record, the tracked-files check, no private or ephemeral ref, no refresh
// journal) and takes the checkout lock without waiting; ok false (nothing held, nothing written) for
// anything off the happy path. The caller plans (plan) and applies (apply) or releases.
func (s *store) prepareRefresh() (*refresh, bool) {
	for _, ref := range []string{refPrivate, refEphemeral} {
		if t, ok := s.tip(ref); !ok || !t.IsZero() {
			return nil, false
		}
	}
	ctxDir := filepath.Join(s.gitDir, "ctx")
	root := filepath.Join(s.workTree, checkoutDir)
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return nil, false // missing, a link, a file: ctx-full says what to do
	}
	if _, err := os.Lstat(filepath.Join(ctxDir, "checked-out")); err != nil {
		return nil, false // store.markCheckoutMade would write it
	}
	// No agents' files enabled for refresh (adapters.ReadRecord): ctx-full's hook refreshes them.
	if es, err := os.ReadDir(filepath.Join(s.common, "ctx", "adapters")); err == nil && len(es) > 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	untrKey, ok := s.untracked(ctxDir)
	if !ok {
		return nil, false
	}
	refs := []string{refEphemeral, refPrivate, s.branch} // store.Refs: the refs of Scopes, in order
	values, ok := s.refValues(refs)
	if !ok {
		return nil, false
	}
	h := &refresh{s: s, untrKey: untrKey, stamp: strings.Join(refs, " ") + "|" + strings.Join(values, " ") + " *\n",
		lockPath: filepath.Join(ctxDir, "checkout.lock")}
	if len(values) == 0 {
		return nil, false
	}
	if !h.takeLock() {
		return nil, false
	}
	done := false
	defer func() {
		if !done {
			h.release()
		}
	}()
	if _, err := os.Lstat(filepath.Join(ctxDir, "checkout-journal.json")); !errors.Is(err, fs.ErrNotExist) {
		return nil, false // an interrupted refresh: ctx-full recovers it
	}
	// store.openCheckout: the folder opened must be the one lstat saw.
	before, err := os.Lstat(root)
	if err != nil || !before.IsDir() {
		return nil, false
	}
	if h.root, err = os.OpenRoot(root); err != nil {
		return nil, false
	}
	if after, err := h.root.Stat("."); err != nil || !os.SameFile(before, after) {
		return nil, false
	}
	// store.ensureIgnored: ctx's .gitignore in place, or ctx-full writes it (and the info/exclude line).
	if fi, err := h.root.Lstat(checkoutrec.IgnoreFile); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(checkoutrec.IgnoreContent)) {
		return nil, false
	}
	if b, err := h.root.ReadFile(checkoutrec.IgnoreFile); err != nil || string(b) != checkoutrec.IgnoreContent {
		return nil, false
	}
	done = true
	return h, true
}

// plan decides what store.Refresh decides for the public tip pub (a commit whose objects are in the
// repository), with the checkout lock held (prepareRefresh): the record read lazily, the paths that
// changed since its tip, each file on disk checked against it. It writes nothing; false for anything off
// the happy path (a hand edit to keep included).
func (h *refresh) plan(pub objread.Hash) bool {
	s := h.s
	root := filepath.Join(s.workTree, checkoutDir)
	files := rootFiles{h.root}
	rec, found, err := checkoutrec.ReadLazy(files, filepath.Join(root, checkoutrec.RecordFile), nil)
	if err != nil || !found || rec.Incomplete || !rec.Clean {
		return false
	}
	h.rec = rec
	if rec.Commits["private"] != "" || rec.Commits["ephemeral"] != "" || rec.Commits["public"] == "" {
		return false
	}
	oldTip, ok := parseHash(rec.Commits["public"])
	if !ok {
		return false
	}
	oldC, ok := s.commit(oldTip)
	if !ok {
		return false
	}
	newC, ok := s.commit(pub)
	if !ok {
		return false
	}
	changed, ok := s.diffEntries(oldC.tree, newC.tree)
	if !ok || len(changed) > checkoutrec.LazyLookupMax {
		return false
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	recTime := int64(math.MinInt64)
	if fi, err := h.root.Lstat(checkoutrec.RecordFile); err == nil {
		recTime = fi.ModTime().UnixNano()
	}
	if h.dirs == nil {
		h.dirs = map[string]*dirHandle{}
	}
	dirs := h.dirs // closed by release
	for _, p := range paths {
		newBlob := changed[p]
		dir, base := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		d, ok := dirs[dir]
		if !ok {
			if d, ok = h.openDir(dir); !ok {
				return false
			}
			dirs[dir] = d
		}
		var st checkoutrec.FileStat
		before := false
		if d.root != nil {
			typ, fst, err := checkoutrec.LstatIn(d.root, d.f, base)
			before, st = err == nil && typ == 0, fst
		}
		old, had := rec.Entry(p)
		var cur objread.Hash
		onDisk := false
		if had && old.Stat != nil && old.Stat.Mtime < recTime && old.Stat.Ctime < recTime && before && st == *old.Stat {
			cur, ok = parseHash(old.Blob)
			if !ok {
				return false
			}
			onDisk = true
		} else {
			data, err := files.ReadFile(p)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false // a link, a folder: kept by ctx-full, which says so
			}
			if onDisk = err == nil; onDisk {
				cur = objwrite.Name(objread.Blob, data)
			}
		}
		switch {
		case onDisk && !newBlob.IsZero() && cur == newBlob:
			// already what the ref has
		case onDisk && (!had || cur.String() != old.Blob):
			return false // a hand edit: ctx-full keeps it and says so
		case newBlob.IsZero():
			if onDisk {
				h.ops = append(h.ops, refreshOp{path: p, remove: true})
			}
		default:
			h.ops = append(h.ops, refreshOp{path: p, blob: newBlob})
		}
		if newBlob.IsZero() {
			if had {
				rec.Remove(p)
			}
		} else {
			e := checkoutrec.RecordEntry{Scope: "public", Blob: newBlob.String()}
			if onDisk && before && cur == newBlob {
				e.Stat = &st
			}
			if !had || !sameEntry(e, old) {
				rec.Put(p, e)
			}
		}
	}
	rec.Commits["ephemeral"], rec.Commits["private"], rec.Commits["public"] = "", "", pub.String()
	rec.Incomplete = false
	rec.Clean = true // the recorded tips were clean and nothing that changed is a problem (itemProblem)
	return true
}

// sameEntry is store's: the same blob, scope and stat data.
func sameEntry(a, b checkoutrec.RecordEntry) bool {
	if a.Scope != b.Scope || a.Blob != b.Blob || (a.Stat == nil) != (b.Stat == nil) {
		return false
	}
	return a.Stat == nil || *a.Stat == *b.Stat
}

// parseHash reads 40 hex digits.
func parseHash(v string) (objread.Hash, bool) {
	var h objread.Hash
	if !hex40(v) {
		return h, false
	}
	for i := 0; i < 20; i++ {
		h[i] = unhex(v[2*i])<<4 | unhex(v[2*i+1])
	}
	return h, true
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// untracked is store.checkCheckoutDir's tracked-files check for a .context/ that is a folder: its cache
// (<git dir>/ctx/checkout-untracked) holds the key of the index's stat data and HEAD's commit, or
// gitstore.Repo.NothingTrackedIn says so in process (the index read with objread.IndexHasPath, HEAD's
// root tree). key is what to write to the cache ("" when it holds already); ok false: ctx-full asks git.
func (s *store) untracked(ctxDir string) (key string, ok bool) {
	head, err := objread.ReadRef(s.gitDir, "HEAD")
	if err != nil || head.IsZero() {
		return "", false
	}
	var st checkoutrec.FileStat
	index := filepath.Join(s.gitDir, "index")
	if fi, err := os.Lstat(index); err == nil {
		st = *checkoutrec.StatOf(fi)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	key = fmt.Sprintf("v1 %+v %s\n", st, head)
	if b, err := objread.ReadFile(filepath.Join(ctxDir, "checkout-untracked")); err == nil && string(b) == key {
		return "", true
	}
	for _, d := range []string{s.gitDir, s.common} {
		if m, err := filepath.Glob(filepath.Join(d, "sharedindex.*")); err != nil || len(m) > 0 {
			return "", false
		}
	}
	if found, err := objread.IndexHasPath(index, checkoutDir); err != nil || found {
		return "", false
	}
	c, ok := s.commit(head)
	if !ok {
		return "", false
	}
	if _, found, ok := s.lookup(c.tree, checkoutDir); !ok || found {
		return "", false
	}
	return key, true
}

// rawTree reads tree h's bytes.
func (s *store) rawTree(h objread.Hash) ([]byte, bool) {
	t, raw, err := s.read(h)
	return raw, err == nil && t == objread.Tree
}

// rawEntry is one entry of a tree's bytes: name and hash are slices of them.
type rawEntry struct {
	name []byte
	mode objread.FileMode
	hash []byte
}

// nextEntry parses the first entry of a tree's bytes raw ("<octal mode> <name>\x00<20 bytes>", as
// objread.EachTreeEntry) and returns the rest; ok false when raw is not in git's format.
func nextEntry(raw []byte) (e rawEntry, rest []byte, ok bool) {
	sp := bytes.IndexByte(raw, ' ')
	if sp <= 0 {
		return e, nil, false
	}
	var mode uint32
	for _, c := range raw[:sp] {
		if c < '0' || c > '7' {
			return e, nil, false
		}
		mode = mode<<3 | uint32(c-'0')
	}
	raw = raw[sp+1:]
	nul := bytes.IndexByte(raw, 0)
	if nul <= 0 || len(raw) < nul+21 {
		return e, nil, false
	}
	return rawEntry{name: raw[:nul], mode: objread.FileMode(mode), hash: raw[nul+1 : nul+21]}, raw[nul+21:], true
}

// gitCompare orders two entries as git sorts a tree: by name, a folder's name read with a '/' after it.
func gitCompare(a, b rawEntry) int {
	n := min(len(a.name), len(b.name))
	if c := bytes.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	ca, cb := byte(0), byte(0)
	if len(a.name) > n {
		ca = a.name[n]
	} else if a.mode == objread.ModeDir {
		ca = '/'
	}
	if len(b.name) > n {
		cb = b.name[n]
	} else if b.mode == objread.ModeDir {
		cb = '/'
	}
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	if len(a.name) == len(b.name) {
		return 0 // the same name (folder or not: a name twice, refused below)
	}
	// One name is a prefix of the other and the shorter read its '/' (or 0) against the longer's byte.
	if len(a.name) < len(b.name) {
		return -1
	}
	return 1
}

// diffEntries is gitstore.Repo.DiffItems of the public trees a and b, on the happy path only: the root
// trees differ in the folders knowledge/ and conventions/ (trees on both sides) and nowhere else, and in
// those only regular files named KEY.md (plainKey) changed. It returns the changed paths with their new
// blob (the zero Hash: removed); ok false for anything else, a tree not in git's order (or holding a name
// twice) included, and a root holding activity/ (ctx-full's hook may record this machine's branch there).
// The trees' bytes are walked in place: a folder of 10,000 entries is not decoded into entries.
func (s *store) diffEntries(a, b objread.Hash) (map[string]objread.Hash, bool) {
	ra, ok := s.rawTree(a)
	if !ok {
		return nil, false
	}
	rb, ok := s.rawTree(b)
	if !ok {
		return nil, false
	}
	changed := map[string]objread.Hash{}
	activity := false
	ok = mergeRaw(ra, rb, func(e rawEntry) { activity = activity || string(e.name) == "activity" }, func(x, y *rawEntry) bool {
		if x == nil || y == nil || x.mode != objread.ModeDir || y.mode != objread.ModeDir ||
			(string(x.name) != "knowledge" && string(x.name) != "conventions") {
			return false
		}
		name := string(x.name)
		fa, ok := s.rawTree(objread.Hash(x.hash))
		if !ok {
			return false
		}
		fb, ok := s.rawTree(objread.Hash(y.hash))
		if !ok {
			return false
		}
		return mergeRaw(fa, fb, nil, func(f, g *rawEntry) bool {
			for _, e := range []*rawEntry{f, g} {
				if e == nil {
					continue
				}
				key, isMD := bytes.CutSuffix(e.name, []byte(".md"))
				if e.mode != objread.ModeRegular || !isMD || !plainKey(string(key)) {
					return false
				}
			}
			if g != nil {
				changed[name+"/"+string(g.name)] = objread.Hash(g.hash)
			} else {
				changed[name+"/"+string(f.name)] = objread.Hash{}
			}
			return true
		})
	})
	return changed, ok && !activity
}

// mergeRaw walks the bytes of two trees in git's order and calls fn for each name whose entry differs
// (mode or object), with nil for the side that lacks it, and each (when not nil) with the entries of b (an
// entry may be given more than once); it stops at the first false. false too when either tree is malformed or not strictly in git's order.
func mergeRaw(a, b []byte, each func(rawEntry), fn func(x, y *rawEntry) bool) bool {
	var x, y, px, py rawEntry
	hasX, hasY, ok := false, false, true
	next := func(raw *[]byte, e, prev *rawEntry, has *bool) bool {
		if len(*raw) == 0 {
			*has = false
			return true
		}
		*prev = *e
		*e, *raw, ok = nextEntry(*raw)
		if !ok || *has && gitCompare(*prev, *e) >= 0 {
			return false
		}
		*has = true
		return true
	}
	if !next(&a, &x, &px, &hasX) || !next(&b, &y, &py, &hasY) {
		return false
	}
	for hasX || hasY {
		if hasY && each != nil {
			each(y)
		}
		c := 0
		switch {
		case !hasY:
			c = -1
		case !hasX:
			c = 1
		default:
			c = gitCompare(x, y)
		}
		switch {
		case c < 0:
			// A name that only changed between file and folder sorts apart: both calls refuse it.
			if !fn(&x, nil) || !next(&a, &x, &px, &hasX) {
				return false
			}
		case c > 0:
			if !fn(nil, &y) || !next(&b, &y, &py, &hasY) {
				return false
			}
		default:
			if x.mode != y.mode || !bytes.Equal(x.hash, y.hash) {
				if !fn(&x, &y) {
					return false
				}
			}
			if !next(&a, &x, &px, &hasX) || !next(&b, &y, &py, &hasY) {
				return false
			}
		}
	}
	return true
}

// dirHandle is a folder of .context/ opened once for the lstat and writes of its files (store's dirWriter);
// root is nil when the folder does not exist.
type dirHandle struct {
	root *os.Root
	f    *os.File
}

func (d *dirHandle) close() {
	if d.root != nil {
		_ = d.f.Close()
		_ = d.root.Close()
	}
}

// openDir opens folder dir of .context/ (one name: knowledge, conventions) when it exists and is no link.
func (h *refresh) openDir(dir string) (*dirHandle, bool) {
	if link, err := safepath.FirstLink(h.root, dir); err != nil || link != "" {
		return nil, false
	}
	r, err := h.root.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &dirHandle{}, true
	}
	if err != nil {
		return nil, false
	}
	f, err := r.Open(".")
	if err != nil {
		_ = r.Close()
		return nil, false
	}
	return &dirHandle{root: r, f: f}, true
}

// takeLock takes the checkout lock (gitstore.Repo.LockCheckout: a flock of <git dir>/ctx/checkout.lock)
// without waiting: held by another process, ctx-full waits for it.
func (h *refresh) takeLock() bool {
	if err := os.MkdirAll(filepath.Dir(h.lockPath), 0o777); err != nil {
		return false
	}
	f, err := plainfile.OpenFile(h.lockPath, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return false
	}
	if err := flock(f); err != nil {
		_ = f.Close()
		return false
	}
	h.lock = f
	return true
}

// release removes what prepare made and apply did not put in place, releases the lock and closes the
// checked-out tree and its folders; a second call does nothing.
func (h *refresh) release() {
	h.untrTmp.Discard()
	h.journalTmp.Discard()
	for _, p := range h.fileTmps {
		p.Discard()
	}
	for name, d := range h.dirs {
		d.close()
		delete(h.dirs, name)
	}
	if h.root != nil {
		_ = h.root.Close()
		h.root = nil
	}
	if h.lock != nil {
		_ = h.lock.Close() // closing the only descriptor releases the flock
		h.lock = nil
	}
}

// prepare makes apply's new files ahead, each under its temporary name, none in place (atomicfile.Pending):
// the tracked-files cache, the journal, and each file to write whose folder exists, so that a write can
// make them while its objects are written (setWrite.run) and apply only renames. Nothing a reader or
// ctx-full sees changes; a process killed after it leaves temporary files, as a write killed half way
// does (store skips and removes them). false when a file could not be made (release removes the others).
// A second call does nothing.
func (h *refresh) prepare() bool {
	if h.prepared {
		return true
	}
	h.prepared = true
	s := h.s
	ctxDir := filepath.Join(s.gitDir, "ctx")
	if h.untrKey != "" {
		// A cache: written without fsync, as store writes it; not written at all if this fails.
		h.untrTmp, _ = atomicfile.PrepareNoSync(filepath.Join(ctxDir, "checkout-untracked"), []byte(h.untrKey), 0o644)
	}
	if len(h.ops) == 0 {
		return true
	}
	j := journal{Write: map[string]checkoutrec.RecordEntry{}}
	for _, op := range h.ops {
		if op.remove {
			j.Remove = append(j.Remove, op.path)
		} else {
			j.Write[op.path] = checkoutrec.RecordEntry{Scope: "public", Blob: op.blob.String()}
		}
	}
	b, err := json.Marshal(j)
	if err != nil {
		return false
	}
	if h.journalTmp, err = atomicfile.PrepareNoSync(filepath.Join(ctxDir, "checkout-journal.json"), b, 0o644); err != nil {
		return false
	}
	h.fileTmps = make([]*atomicfile.Pending, len(h.ops))
	for i, op := range h.ops {
		dir, base := path.Split(op.path)
		d := h.dirs[strings.TrimSuffix(dir, "/")]
		if op.remove || d == nil || d.root == nil {
			continue
		}
		t, data, err := s.read(op.blob)
		if err != nil || t != objread.Blob {
			return false
		}
		if h.fileTmps[i], err = atomicfile.PrepareInDir(d.root, d.f, base, data, 0o644); err != nil {
			return false
		}
	}
	return true
}

// apply writes what planRefresh decided, in store.Refresh's order: the stamp removed, the tracked-files
// cache, the journal, the files, the record, the journal removed, then the hooks' stamp (the new files
// made by prepare, which apply runs first when the caller did not). false when something failed (ctx-full
// runs the hook again and finds the journal). journaled, when not nil, is called once the journal is in
// place (or at once when there is none to write): a write releases the ctx lock there, so that a kill
// before it leaves the lock's holder record naming a process (takeCtxLock) and one after it the journal,
// either of which makes the next command ctx-full's, which removes the temporary files left
// (store.sweepLeftovers).
func (h *refresh) apply(journaled func()) bool {
	defer h.release()
	if journaled == nil {
		journaled = func() {}
	}
	s := h.s
	if !h.prepare() {
		return false
	}
	if err := os.Remove(filepath.Join(s.gitDir, hookStampFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	_ = h.untrTmp.Commit()
	if len(h.ops) == 0 {
		journaled()
	}
	if len(h.ops) > 0 {
		if h.journalTmp.Commit() != nil {
			return false
		}
		journaled()
		frontKill("journaled")
		files := rootFiles{h.root}
		for i, op := range h.ops {
			if op.remove {
				if files.Remove(op.path) != nil {
					return false
				}
				continue
			}
			var st *checkoutrec.FileStat
			if p := h.fileTmps[i]; p != nil {
				dir, base := path.Split(op.path)
				d := h.dirs[strings.TrimSuffix(dir, "/")]
				if p.Commit() != nil {
					return false
				}
				_, fst, err := checkoutrec.LstatIn(d.root, d.f, base)
				if err != nil {
					return false
				}
				st = &fst
			} else {
				t, data, err := s.read(op.blob)
				if err != nil || t != objread.Blob {
					return false
				}
				if st, err = files.writeStat(op.path, data); err != nil {
					return false
				}
			}
			e, _ := h.rec.Entry(op.path)
			e.Stat = st
			h.rec.Put(op.path, e)
		}
	}
	if checkoutrec.Write(rootFiles{h.root}, h.rec) != nil {
		return false
	}
	if len(h.ops) > 0 {
		if err := os.Remove(filepath.Join(s.gitDir, "ctx", "checkout-journal.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	if !h.hookStamp {
		return true
	}
	root, err := os.OpenRoot(s.gitDir)
	if err != nil {
		return false
	}
	defer root.Close()
	return atomicfile.WriteIn(root, hookStampFile, []byte(h.stamp), 0o644, atomicfile.NoSync) == nil
}

// mapRecordMin is the size from which the record is mapped instead of read (256 KiB, about 1,400 files):
// below it a read costs less than setting up and faulting in a mapping.
const mapRecordMin = 256 << 10

// rootFiles is .context/ as checkoutrec reads and writes it (store's checkoutFS): never through a symbolic
// link, files replaced atomically without fsync.
type rootFiles struct{ root *os.Root }

func (f rootFiles) noLinks(p string) error {
	link, err := safepath.FirstLink(f.root, p)
	if err != nil {
		return err
	}
	if link != "" {
		return fmt.Errorf("%s: a symbolic link", link)
	}
	return nil
}

func (f rootFiles) ReadFile(p string) ([]byte, error) {
	if err := f.noLinks(p); err != nil {
		return nil, err
	}
	if p == checkoutrec.RecordFile {
		// The record of a big checkout (1.8 MB at 10,000 entries) is mapped, not copied: a lazy read looks
		// at its first bytes and at the entries of the paths that changed only.
		file, err := f.root.Open(p)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		fi, err := file.Stat()
		if err == nil && fi.Mode().IsRegular() && fi.Size() >= mapRecordMin && fi.Size() < 1<<30 {
			if b, err := mapFile(file, fi.Size()); err == nil {
				return b, nil
			}
		}
		if err == nil && fi.Mode().IsRegular() && fi.Size() < mapRecordMin {
			// Read from the file already open (root.ReadFile would open it again): its size and one byte
			// more, to see the end, then whatever a writer appended since the stat.
			return plainfile.ReadSized(file, fi.Size())
		}
	}
	return f.root.ReadFile(p)
}

func (f rootFiles) WriteFile(p string, data []byte) error {
	if err := f.noLinks(p); err != nil {
		return err
	}
	if dir, _ := path.Split(p); dir != "" {
		if err := f.root.MkdirAll(strings.TrimSuffix(dir, "/"), 0o777); err != nil {
			return err
		}
	}
	return atomicfile.WriteIn(f.root, p, data, 0o644, atomicfile.NoSync)
}

// writeStat is WriteFile through the file's folder (store's dirWriter.writeFile), returning its stat data.
func (f rootFiles) writeStat(p string, data []byte) (*checkoutrec.FileStat, error) {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if err := f.noLinks(dir); err != nil {
		return nil, err
	}
	if err := f.root.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	r, err := f.root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	d, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := atomicfile.WriteInDir(r, d, base, data, 0o644, atomicfile.NoSync); err != nil {
		return nil, err
	}
	_, st, err := checkoutrec.LstatIn(r, d, base)
	return &st, err
}

func (f rootFiles) AppendFile(p string, data []byte) error {
	if err := f.noLinks(p); err != nil {
		return err
	}
	file, err := f.root.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := file.Write(data); err != nil {
		_ = file.Close()
		return err
	}
	return file.Close()
}

// Remove removes the file at p and the folders it leaves empty (store's checkoutFS.remove).
func (f rootFiles) Remove(p string) error {
	if err := f.noLinks(p); err != nil {
		return err
	}
	if err := f.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if f.root.Remove(dir) != nil {
			break
		}
	}
	return nil
}
