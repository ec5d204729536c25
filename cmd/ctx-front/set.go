package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/gitstore/identcache"
	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/gitstore/objwrite"
	"github.com/ctx-dev/ctx/gitstore/reflock"
	"github.com/ctx-dev/ctx/internal/clock"
	"github.com/ctx-dev/ctx/internal/plainfile"
	"github.com/ctx-dev/ctx/store/secrets"
)

// A write of an existing public entry (docs/architecture.md "The lean front", "A write"): ctx-full's
// `ctx knowledge set KEY TEXT` and `ctx convention set KEY TEXT` (cmd/ctx/app runEntrySet, store.SetEntry,
// store.Write, gitstore.Transact, store.Refresh), done here only on its happy path:
//
//   - no flag (TEXT not starting with '-'), KEY a plainKey, TEXT valid UTF-8, not blank, at most
//     maxSetText bytes; CTX_AGENT, CTX_SESSION plain keys (serve), CTX_MACHINE or the host name printable
//     ASCII;
//   - the store as serve reads it (openStore), the main worktree with a .context/ ctx checked out and
//     refreshes here (prepareRefresh), the context branch not checked out, the identities in the
//     identity cache under the stamp of now;
//   - the ctx lock free (taken without waiting), and under it: no interrupted transaction, no ref lock
//     mark, no owner record, no quarantine ref (nothing for ctx-full's sweep), no <ref>.lock, the write
//     counter not at its gc turn;
//   - the entry KEY.md already a regular (100644) file of the public tree's folder, its front matter flat
//     (flatMeta), in trees in git's order with canonical modes, the root holding manifest.json; no private
//     or ephemeral ref;
//   - nothing in the message or the added text that looks like a secret (store/secrets), and the refresh
//     after it planned without a hand edit to keep (plan).
//
// Anything else returns false with nothing written but loose objects no ref names (as a failed write of
// ctx-full leaves them), and main runs ctx-full with the same arguments. The front matter, flat as ctx
// writes it, is read and written by flatMeta (fm.go: the bytes store/frontmeta writes); the objects are
// written by gitstore/objwrite, the ref moved by gitstore/reflock, the clock read from internal/clock:
// the code ctx-full runs. TestSetSameAsFull compares both programs'
// results byte for byte.

// maxSetText is the largest TEXT written here (ctx-full's limit of a file of the store is far above it).
const maxSetText = 1 << 20

// setPackEvery is gitstore's packEvery: the commit that reaches it runs `git gc --auto`, which is
// ctx-full's to start.
const setPackEvery = 100

// setEntry writes TEXT as the entry KEY of kind (args[0]: knowledge or convention); out is ctx-full's
// standard output, ok false when ctx-full must run instead (nothing written).
func setEntry(kind, key, text string) (out []byte, ok bool) {
	if !plainKey(key) || strings.HasPrefix(text, "-") || text == "help" || text == "h" || len(text) > maxSetText || !utf8.ValidString(text) ||
		strings.TrimSpace(text) == "" {
		return nil, false
	}
	for _, v := range []string{"GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_DIR", "CTX_FAULT", "CTX_TEST_KILL_REFRESH_AFTER"} {
		if os.Getenv(v) != "" {
			return nil, false
		}
	}
	machine, ok := machineName()
	if !ok {
		return nil, false
	}
	agent := os.Getenv("CTX_AGENT")
	if agent == "" {
		agent = "cli"
	}
	session := os.Getenv("CTX_SESSION")
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	s, ok := openStore()
	if !ok {
		return nil, false
	}
	defer s.close()
	if s.workTree == "" || filepath.Clean(s.gitDir) != filepath.Clean(s.common) {
		return nil, false
	}
	if head, ok := s.headName(); !ok || head == s.branch {
		return nil, false // checked out here: ctx-full refuses
	}
	ids, ok := identcache.Load(filepath.Join(s.common, "ctx", identcache.FileName), identcache.Stamp(s.gitDir, s.common))
	if !ok {
		return nil, false
	}
	w := &setWrite{s: s, dir: kindDir[kind], kindName: kind, key: key, text: text, agent: agent,
		session: session, machine: machine, ids: ids}
	return w.run()
}

// setWrite is one write of setEntry.
type setWrite struct {
	s                  *store
	dir, kindName, key string
	text               string
	agent, session     string
	machine            string
	ids                identcache.Pair
}

// machineName is store.machineName (CTX_MACHINE, else the host name's first label in lower case),
// only when it is printable ASCII (store.messageLine would change nothing in the trailer).
func machineName() (string, bool) {
	m := os.Getenv("CTX_MACHINE")
	if m == "" {
		h, err := os.Hostname()
		if err != nil {
			m = "unknown"
		} else {
			h, _, _ = strings.Cut(h, ".")
			m = strings.ToLower(h)
		}
	}
	for i := 0; i < len(m); i++ {
		if m[i] < 0x20 || m[i] > 0x7e {
			return "", false
		}
	}
	return m, true
}

// message is store.Store.Message of the set: "ctx: set <kind> <key>", a blank line, the trailers that
// are not empty.
func (w *setWrite) message() string {
	var b strings.Builder
	b.WriteString("ctx: set " + w.kindName + " " + w.key + "\n\n")
	for _, t := range [][2]string{{"Ctx-Op", w.kindName + ".set"}, {"Ctx-Key", w.key}, {"Ctx-Agent", w.agent},
		{"Ctx-Session", w.session}, {"Ctx-Machine", w.machine}} {
		if t[1] != "" {
			b.WriteString(t[0] + ": " + t[1] + "\n")
		}
	}
	return b.String()
}

func (w *setWrite) run() ([]byte, bool) {
	s := w.s
	ctxDir := filepath.Join(s.common, "ctx")
	// The refresh's checks and the checkout lock first (store.Refresh takes it after the commit; holding
	// it across the commit lets the refresh be planned before the ref moves).
	h, ok := s.prepareRefresh()
	if !ok {
		return nil, false
	}
	defer h.release()
	unlock, ok := takeCtxLock(ctxDir)
	if !ok {
		return nil, false
	}
	defer unlock()
	// What ctx-full's Lock would recover or sweep: none of it here.
	if _, err := os.Lstat(filepath.Join(ctxDir, "transaction.json")); !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	for _, d := range []string{filepath.Join(ctxDir, "reflocks"), filepath.Join(ctxDir, "owners"),
		filepath.Join(s.common, "refs", "ctx", "incoming")} {
		if !emptyOrMissing(d) {
			return nil, false
		}
	}
	refPath := filepath.Join(s.common, filepath.FromSlash(s.branch))
	if _, err := os.Lstat(refPath + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	count, ok := writeCount(filepath.Join(ctxDir, "writes"))
	if !ok || count+1 >= setPackEvery {
		return nil, false
	}
	// The tips under the lock (gitstore.transactOnce).
	for _, ref := range []string{refEphemeral, refPrivate} {
		if t, ok := s.tip(ref); !ok || !t.IsZero() {
			return nil, false
		}
	}
	tip, ok := s.tip(s.branch)
	if !ok || tip.IsZero() {
		return nil, false
	}
	c, ok := s.commit(tip)
	if !ok {
		return nil, false
	}
	rootRaw, ok := s.rawTree(c.tree)
	if !ok {
		return nil, false
	}
	if e, found, err := objread.FindTreeEntry(rootRaw, "manifest.json"); err != nil || !found || e.Mode == objread.ModeDir {
		return nil, false // checkContextTree: ctx-full says it is not a context store
	}
	dirEntry, found, err := objread.FindTreeEntry(rootRaw, w.dir)
	if err != nil || !found || dirEntry.Mode != objread.ModeDir {
		return nil, false
	}
	dirRaw, ok := s.rawTree(dirEntry.Hash)
	if !ok {
		return nil, false
	}
	name := w.key + ".md"
	fileEntry, found, err := objread.FindTreeEntry(dirRaw, name)
	if err != nil || !found || fileEntry.Mode != objread.ModeRegular {
		return nil, false // a new key (the look-alike check), a link, an executable: ctx-full's
	}
	t, old, err := s.r.Read(fileEntry.Hash)
	if err != nil || t != objread.Blob {
		return nil, false
	}
	// store.entryEdits, on front matter in ctx's own shape (flatMeta); any other is ctx-full's.
	m := &flatMeta{}
	if fm, body, ok := splitEntry(old); ok {
		if m, ok = parseFlatMeta(fm); !ok {
			return nil, false
		}
		if strings.TrimSuffix(string(body), "\n") == w.text {
			return []byte(w.kindName + " " + w.key + ": unchanged, no commit\n"), true
		}
	}
	prov := m.String("provenance")
	if prov == "" {
		prov = "owner_instruction"
		if w.agent != "cli" {
			prov = "agent_generated"
		}
	}
	now := clock.Now()
	for _, kv := range [][2]string{{"author", w.ids.Author.Name + " <" + w.ids.Author.Email + ">"}, {"agent", w.agent},
		{"updated_at", now.UTC().Format(time.RFC3339)}, {"provenance", prov}, {"scope", "public"}} {
		if !m.set(kv[0], kv[1]) {
			return nil, false
		}
	}
	data := m.join([]byte(w.text + "\n"))
	msg := w.message()
	// store.checkSecrets: the message, and the text the file adds to its current version.
	if len(secrets.New("", msg)) > 0 || len(secrets.New(string(old), string(data))) > 0 {
		return nil, false
	}
	// gitstore.commitWrites: the blob, the folder's tree, the root tree, the commit, written loose.
	blob := objwrite.Name(objread.Blob, data)
	newDir, ok := replaceEntry(dirRaw, name, objread.ModeRegular, blob)
	if !ok {
		return nil, false
	}
	newDirHash := objwrite.Name(objread.Tree, newDir)
	newRoot, ok := replaceEntry(rootRaw, w.dir, objread.ModeDir, newDirHash)
	if !ok {
		return nil, false
	}
	author := objwrite.Signature{Name: w.ids.Author.Name, Email: w.ids.Author.Email, When: now}
	committer := objwrite.Signature{Name: w.ids.Committer.Name, Email: w.ids.Committer.Email, When: now}
	rootHash := objwrite.Name(objread.Tree, newRoot)
	commitRaw := objwrite.EncodeCommit(rootHash, []objread.Hash{tip}, author, committer, msg)
	newTip := objwrite.Name(objread.Commit, commitRaw)
	objs := []newObject{{blob, objread.Blob, data}, {newDirHash, objread.Tree, newDir},
		{rootHash, objread.Tree, newRoot}, {newTip, objread.Commit, commitRaw}}
	// The refresh reads the commit, its trees and the blob: from memory (store.read).
	for _, o := range objs {
		s.keep(o.h, o.t, o.b)
	}
	// The objects are written on a second goroutine while this one plans the refresh, makes its new files
	// under temporary names and takes the ref lock: each new file costs the file system an inode, which on
	// this kind of machine is most of a write's time (bench/README.md "Thirteenth round", front13), and two
	// cores make two at once. Neither needs the other's work: the ref names the objects only once all are
	// written (this goroutine waits for them below), and the refresh's files are put in place only after
	// the ref moved.
	written := make(chan bool, 1)
	go func() { written <- writeObjects(s.common, objs) }()
	f, ok := w.prepareCommit(h, newTip, refPath, ctxDir)
	if !<-written || !ok {
		if f != nil {
			f.Close()
			reflock.Drop(refPath, reflock.MarkPath(ctxDir, s.branch))
		}
		return nil, false
	}
	frontKill("prepared")
	// gitstore.updateRefs of one ref: the lock as its mark's hard link (prepareCommit), the old value
	// compared, the new one written and renamed over the ref; the reflog line. Not fsynced, as C git's
	// plumbing writes a ref (and as objwrite writes the objects it names): the fsync was 4 to 7 ms of a
	// 16 ms write's wall time on this machine's disk (bench/README.md "Twelfth round"); the rename keeps
	// the move atomic.
	mark := reflock.MarkPath(ctxDir, s.branch)
	if cur, err := objread.ReadRef(s.common, s.branch); err != nil || cur != tip {
		f.Close()
		reflock.Drop(refPath, mark)
		return nil, false
	}
	if err := reflock.WriteLockNoSync(f, newTip.String()); err != nil {
		reflock.Drop(refPath, mark)
		return nil, false
	}
	if err := reflock.Rename(refPath, mark); err != nil {
		reflock.Drop(refPath, mark)
		return nil, false
	}
	// Committed: from here the answer is the commit, whatever follows (docs/locks.md).
	reflock.AppendReflog(filepath.Join(s.common, "logs", filepath.FromSlash(s.branch)), s.branch,
		reflock.ReflogLine(tip.String(), newTip.String(), w.ids.Author.Name, w.ids.Author.Email, now, "ctx: "+firstLine(msg)))
	// In place, not truncated first: the count only grows, and a file truncated to nothing and written again
	// is written back to disk at its close by ext4 (plainfile.Overwrite).
	_ = plainfile.Overwrite(filepath.Join(ctxDir, "writes"), []byte(strconv.Itoa(count+1)+"\n"), 0o666)
	frontKill("committed")
	// The ctx lock is released once the refresh's journal is in place (apply): a kill before that leaves
	// the holder record, which hands the next write to ctx-full.
	// A refresh that fails half way leaves its journal, which the next ctx-full process completes (as
	// after an interrupted refresh). The write stands (exit 0), with ctx-full's warning
	// (store.refreshFailed, without the error, which apply does not return).
	if !h.apply(unlock) {
		fmt.Fprintf(os.Stderr, "ctx: warning: %s\n", refreshFailedWarning)
	}
	return []byte(w.kindName + " " + w.key + ": committed " + newTip.String()[:12] + " (public)\n"), true
}

// envFrontKill, set in the environment (end-to-end tests only), makes a write kill itself with SIGKILL at
// the point it names (frontKill): "prepared" (its objects and temporary files made, both locks held, the
// ref not moved), "committed" (the ref moved, the ctx lock held), "journaled" (the refresh's journal in
// place, the ctx lock released, no file in place): a `kill -9` at a known moment (store.EnvKillRefreshAfter
// is ctx-full's).
const envFrontKill = "CTX_TEST_FRONT_KILL"

// frontKill kills the process with SIGKILL when $CTX_TEST_FRONT_KILL names point.
func frontKill(point string) {
	if os.Getenv(envFrontKill) != point {
		return
	}
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	select {} // SIGKILL is on its way
}

// newObject is an object of a write: its name, type and content.
type newObject struct {
	h objread.Hash
	t objread.Type
	b []byte
}

// writeObjects writes objs as loose objects of the repository at common (gitstore.commitWrites): true when
// all are there.
func writeObjects(common string, objs []newObject) bool {
	for _, o := range objs {
		if objwrite.Loose(common, o.h, o.t, int64(len(o.b)), bytes.NewReader(o.b), nil) != nil {
			return false
		}
	}
	return true
}

// prepareCommit is what a write does while its objects are written: the refresh after the commit decided
// (a hand edit to keep, or anything else off the happy path, hands over before the ref moves), its new
// files made (refresh.prepare), and the lock of the ref taken, as its mark's hard link (reflock). f is the
// lock, open, when it was taken; ok false when the write hands over (the caller drops the lock).
func (w *setWrite) prepareCommit(h *refresh, newTip objread.Hash, refPath, ctxDir string) (f *os.File, ok bool) {
	if !h.plan(newTip) || !h.prepare() {
		return nil, false
	}
	f, err := reflock.CreateMarked(reflock.MarkPath(ctxDir, w.s.branch), refPath+".lock", nil)
	return f, err == nil
}

// refreshFailedWarning is store.refreshFailed("committed", err)'s text without the error: the write
// committed, .context/ was not refreshed, and the next ctx command refreshes it (docs/locks.md "What a
// failed write leaves").
const refreshFailedWarning = "committed, but refreshing " + checkoutDir + " failed (the next ctx command refreshes it; ctx status shows what it holds)"

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// splitEntry is store.SplitFrontMatter: the front matter's block and the body.
func splitEntry(b []byte) (fm, body []byte, ok bool) {
	_, block, _, rest, ok := splitFrontMatter(b)
	return block, rest, ok
}

// emptyOrMissing reports whether folder d does not exist or holds nothing.
func emptyOrMissing(d string) bool {
	f, err := plainfile.OpenFile(d, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil
}

// writeCount reads gitstore's write counter (packAfter): a missing or unreadable file counts 0.
func writeCount(path string) (int, bool) {
	b, err := objread.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, true
}

// takeCtxLock takes the ctx lock (gitstore.Repo.Lock: a flock of <common dir>/ctx/lock) without waiting,
// and records this process in lock.holder as gitstore does; held by another process, ctx-full waits for
// it. unlock empties the holder file through its descriptor (as gitstore does: emptied, not removed) and
// releases the lock; it may be called more than once.
func takeCtxLock(ctxDir string) (unlock func(), ok bool) {
	if err := os.MkdirAll(ctxDir, 0o777); err != nil {
		return nil, false
	}
	f, err := plainfile.OpenFile(filepath.Join(ctxDir, "lock"), os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return nil, false
	}
	if err := flock(f); err != nil {
		_ = f.Close()
		return nil, false
	}
	// The holder record: written in place and emptied through the same descriptor (plainfile.Overwrite: a
	// truncation to nothing by its path made the next process's close write the file back to disk).
	holder, err := plainfile.OpenFile(filepath.Join(ctxDir, "lock.holder"), os.O_WRONLY|os.O_CREATE, 0o666)
	// Every holder empties the record at release: one that still names a process was killed holding the
	// lock, maybe half way through a write whose temporary files ctx-full removes (store.sweepLeftovers).
	if err == nil {
		if fi, err := holder.Stat(); err != nil || fi.Size() > 0 {
			_ = holder.Close()
			_ = f.Close()
			return nil, false
		}
	}
	if err == nil && plainfile.OverwriteFile(holder, []byte(strconv.Itoa(os.Getpid())+"\n")) != nil {
		_ = holder.Close()
		holder = nil
	}
	done := false
	return func() {
		if done {
			return
		}
		done = true
		if holder != nil {
			_ = holder.Truncate(0) // emptied, not removed, as gitstore.Lock does
			_ = holder.Close()
		}
		_ = f.Close()
	}, true
}

// replaceEntry returns the bytes of tree raw with its entry name, of mode mode, naming h instead: what
// gitstore's mergeRaw writes for that one edit. ok is false unless raw is strictly in git's order, every
// mode spelled as git writes it (so that re-encoding every entry, as mergeRaw does, changes no byte), and
// name is there with mode mode.
func replaceEntry(raw []byte, name string, mode objread.FileMode, h objread.Hash) ([]byte, bool) {
	out := append([]byte(nil), raw...)
	rest, pos := raw, 0
	var prev rawEntry
	found, first := false, true
	for len(rest) > 0 {
		e, next, ok := nextEntry(rest)
		if !ok {
			return nil, false
		}
		sp := bytes.IndexByte(rest, ' ')
		if string(rest[:sp]) != strconv.FormatUint(uint64(e.mode), 8) || bytes.IndexByte(e.name, '/') >= 0 {
			return nil, false
		}
		if !first && gitCompare(prev, e) >= 0 {
			return nil, false
		}
		if string(e.name) == name {
			if e.mode != mode {
				return nil, false
			}
			off := pos + (len(rest) - len(next)) - 20
			copy(out[off:off+20], h[:])
			found = true
		}
		pos += len(rest) - len(next)
		prev, first, rest = e, false, next
	}
	return out, found
}
