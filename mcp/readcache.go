package mcp

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/golang/groupcache/lru"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The read cache (docs/mcp.md "Reads from memory"): resources/read answers kept in memory and served
// again while nothing they were computed from changed. What a read of the checked-out tree depends on is
// files, and each is checked by its stat data, as git's index checks the work tree (gitformat-index(5)):
//
//   - the refs and the checkout record (store.CheckoutViewFiles: the loose ref file and packed-refs of
//     each scope's ref, .context/.ctx-checkout.json, its log and the refresh journal), checked once per
//     read: when any of them changed, a ref moved (a write of this or another process, a pull, `git
//     update-ref`) or a refresh ran, and every cached answer is dropped (a new generation); while none
//     changed, the view of the last store.Store.CheckoutView serves the reads that miss, without reading
//     the refs and the record again. On Linux the check is one non-blocking read of an inotify instance
//     watching their directories (refWatch) while it is quiet; any event there, and the files are stat-ed
//     as above (and the watch armed again);
//   - the files the answer was read from (store.View.Observe), checked at each hit: a hand edit or a
//     removal of the entry's file misses, and the read is done again as without the cache.
//
// Stat data are trusted only when the file is older than the moment they were taken by raceMargin (git's
// "racily clean" rule): a file changed again within the file system's timestamp granularity, with the
// same size and inode, would otherwise look unchanged. Answers computed while a ref or an entry file is
// that recent are served but not kept. Only answers read file by file are kept: one that listed a
// directory (lists, decisions by id or title, skill feedback and proposals, summary, activity, whose
// staleness also depends on the clock) is read again each time. The key holds whether the caller sees the
// public scope only (store.PublicOnly), so an answer computed for the owner of the private scopes is
// never served to a public-only caller.
type readCache struct {
	margin time.Duration

	mu    sync.Mutex
	stamp stamp  // of the refs and record at the last full check
	known bool   // stamp was taken
	gen   uint64 // bumped whenever the refs or record changed (or could not be trusted): older answers are dropped
	files []string
	lru   *lru.Cache     // key -> *cachedRead
	bytes int64          // the size of what lru holds (cachedRead.size)
	views [2]*store.View // the view CheckoutView gave in this generation: [0] the owner's, [1] public-only
	// w watches the directories of files (refwatch_linux.go), nil when there is none: while it is set,
	// it was armed before stamp was taken and stamp is trusted, so a read that finds it quiet knows the
	// refs and record are those of stamp without stat-ing them.
	w          *refWatch
	watchAfter time.Time // no watch is armed before then (the last attempt failed)

	hits, misses atomic.Int64 // resources/read answered from memory, and computed (for tests and profiles)
	fast         atomic.Int64 // of the hits, those answered by the stdio fast path (peek; stdio.go fastRead)
	watched      atomic.Int64 // lookups whose refs and record were known unchanged from a quiet watch
}

// Bounds of the read cache.
const (
	readCacheBytes    = 8 << 20 // what all cached answers may hold (bytes of text, keys and stat data)
	readCacheMaxEntry = 1 << 20 // an answer larger than this is not kept
	readCacheMaxDeps  = 64      // an answer read from more files than this is not kept
	raceMargin        = 2 * time.Second
	watchRetry        = 10 * time.Second // after a watch could not be armed (refwatch_linux.go)
)

// cachedRead is one kept answer.
type cachedRead struct {
	gen      uint64
	deps     []fileStamp
	contents []mcpgo.ResourceContents
	size     int64
	// result is contents encoded as mcp-go encodes the result of resources/read ({"contents":[...]}),
	// made at the first answer of the stdio fast path (peek) and reused by the next ones; nil before.
	result atomic.Pointer[[]byte]
}

// fileStamp is the stat data of one file, or its absence.
type fileStamp struct {
	path   string
	exists bool
	st     store.FileStat
}

// stamp is the stat data of a list of files taken at one moment; trusted when every file that exists is
// older than that moment by the race margin.
type stamp struct {
	files   []fileStamp
	trusted bool
}

func newReadCache(margin time.Duration) *readCache {
	c := &readCache{margin: margin, lru: lru.New(0)}
	c.lru.OnEvicted = func(_ lru.Key, v any) { c.bytes -= v.(*cachedRead).size }
	return c
}

// statFile takes path's stat data (following symbolic links, as the reads do); trusted is false when
// the file changed within margin of now.
func statFile(p string, now time.Time, margin time.Duration) (fs fileStamp, trusted bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileStamp{path: p}, true // absent (or unreadable, which the read reports): creating it changes it
	}
	st := store.StatOf(fi)
	limit := now.Add(-margin).UnixNano()
	return fileStamp{path: p, exists: true, st: st}, st.Mtime < limit && st.Ctime < limit
}

func (f fileStamp) same(g fileStamp) bool {
	return f.path == g.path && f.exists == g.exists && f.st == g.st
}

// takeStamp stats files.
func (c *readCache) takeStamp(files []string) stamp {
	now := time.Now()
	s := stamp{files: make([]fileStamp, 0, len(files)), trusted: true}
	for _, p := range files {
		fs, ok := statFile(p, now, c.margin)
		s.files = append(s.files, fs)
		s.trusted = s.trusted && ok
	}
	return s
}

func (s stamp) same(t stamp) bool {
	if len(s.files) != len(t.files) {
		return false
	}
	for i := range s.files {
		if !s.files[i].same(t.files[i]) {
			return false
		}
	}
	return true
}

// lookup is the first step of a read of key (public-only when pub): the answer kept for it when the refs,
// the record and its files are unchanged (kept non-nil); else the generation to keep the new answer in
// and, while the refs and record are unchanged, the view of the checked-out tree to read it from (nil:
// call st.CheckoutView, and setView).
//
// While the watch of the refs' and record's directories is quiet, the full check (a stat of each of
// their files) is skipped: the refs and record are those of the last full check.
func (c *readCache) lookup(st *store.Store, key string, pub bool) (kept []mcpgo.ResourceContents, gen uint64, v *store.View) {
	if e, gen, v, ok := c.quick(key, pub); ok {
		if e != nil && c.depsSame(e) {
			c.hits.Add(1)
			return e.contents, gen, nil
		}
		c.misses.Add(1)
		return nil, gen, v
	}
	files := c.refFiles()
	if files == nil {
		files = st.CheckoutViewFiles()
		c.setFiles(files)
	}
	gen, fresh := c.check(c.takeStamp(files), nil)
	if fresh && c.wantWatch() {
		// Armed, then stamped again: a change after that stamp is an event.
		if w := newRefWatch(files); w != nil {
			gen, fresh = c.check(c.takeStamp(files), w)
		} else {
			c.noWatch()
		}
	}
	if !fresh {
		c.setFiles(st.CheckoutViewFiles()) // a ref that became symbolic names other files
		c.misses.Add(1)
		return nil, gen, nil
	}
	if out, ok := c.get(key, gen); ok {
		c.hits.Add(1)
		return out, gen, nil
	}
	c.misses.Add(1)
	return nil, gen, c.view(gen, pub)
}

// quick is lookup's path while the watch is quiet (ok): the refs and record are those of the last full
// check, of generation gen; e is the answer kept under key in that generation (nil when none; its files
// are still to be checked) and v the view kept for pub. When the watch saw an event, it is closed and ok
// is false: the full check follows.
func (c *readCache) quick(key string, pub bool) (e *cachedRead, gen uint64, v *store.View, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return nil, 0, nil, false
	}
	if !c.known || !c.stamp.trusted || !c.w.quiet() {
		c.w.close()
		c.w = nil
		return nil, 0, nil, false
	}
	c.watched.Add(1)
	if x, found := c.lru.Get(key); found && x.(*cachedRead).gen == c.gen {
		e = x.(*cachedRead)
	}
	return e, c.gen, c.views[b2i(pub)], true
}

// peek is the lookup of the stdio fast path (stdio.go fastRead): the encoded result kept under key
// ({"contents":[...]}, as mcp-go encodes a resources/read result) when the watch of the refs' and
// record's directories is quiet, the answer was kept in the current generation and its files are
// unchanged; nil otherwise, and then nothing was counted: the read goes through mcp-go and lookup, which
// does the full check when the watch is not quiet (or not armed) and counts the hit or the miss.
//
// A watch that saw an event is closed here, as lookup would: the full check follows.
func (c *readCache) peek(key string, pub bool) []byte {
	e, _, _, ok := c.quick(key, pub)
	if !ok {
		return nil
	}
	if e == nil || !c.depsSame(e) {
		c.watched.Add(-1) // lookup counts it again
		return nil
	}
	b := e.result.Load()
	if b == nil {
		enc, err := json.Marshal(mcpgo.ReadResourceResult{Contents: e.contents})
		if err != nil {
			return nil
		}
		b = &enc
		c.mu.Lock()
		if e.result.CompareAndSwap(nil, b) {
			// The encoded copy counts in the cache's bound from now on (eviction subtracts e.size).
			if x, found := c.lru.Get(key); found && x.(*cachedRead) == e {
				e.size += int64(len(enc))
				c.bytes += int64(len(enc))
				for c.bytes > readCacheBytes {
					c.lru.RemoveOldest()
				}
			}
		} else {
			b = e.result.Load()
		}
		c.mu.Unlock()
	}
	c.hits.Add(1)
	c.fast.Add(1)
	return *b
}

// wantWatch reports whether a watch should be armed: none is set, and the last attempt did not fail
// within watchRetry.
func (c *readCache) wantWatch() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w == nil && time.Now().After(c.watchAfter)
}

// noWatch records that a watch could not be armed: the next attempt is after watchRetry.
func (c *readCache) noWatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchAfter = time.Now().Add(watchRetry)
}

// close closes the watch (the server's session ended; nil: no cache); a later read arms a new one.
func (c *readCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.close()
	c.w = nil
}

// refFiles is the list of files the last full check stamped (store.CheckoutViewFiles).
func (c *readCache) refFiles() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files
}

// check compares the refs and record with the last full check: fresh when both are the same and
// trusted, so that a kept answer of generation gen may be served. Otherwise the answers kept so far are
// dropped and st (taken before the read that follows) becomes the stamp to compare with. w, armed before
// st was taken (nil: none), becomes the cache's watch when st is trusted and no other watch is set; it
// is closed otherwise.
func (c *readCache) check(st stamp, w *refWatch) (gen uint64, fresh bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known && c.stamp.trusted && st.trusted && c.stamp.same(st) {
		if c.w == nil {
			c.w, w = w, nil
		}
		w.close()
		return c.gen, true
	}
	c.gen++
	c.lru.Clear()
	c.bytes = 0
	c.views = [2]*store.View{}
	c.stamp, c.known = st, true
	c.w.close()
	c.w = nil
	if st.trusted {
		c.w, w = w, nil
	}
	w.close()
	return c.gen, false
}

// setFiles records the list of files to stamp (store.CheckoutViewFiles, listed again at each full
// check: a ref that became symbolic names other files). A different list drops the kept answers.
func (c *readCache) setFiles(files []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(files) == len(c.files) {
		same := true
		for i := range files {
			same = same && files[i] == c.files[i]
		}
		if same {
			return
		}
	}
	c.files = files
	c.known = false
	c.w.close()
	c.w = nil
}

// view returns the view of the checked-out tree kept for generation gen (nil when none): while the refs,
// the record and the refresh journal are unchanged, CheckoutView would give the same one (its files are
// read from disk at each read).
func (c *readCache) view(gen uint64, publicOnly bool) *store.View {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return nil
	}
	return c.views[b2i(publicOnly)]
}

// setView keeps v, the view CheckoutView gave after the stamp of generation gen was taken.
func (c *readCache) setView(gen uint64, publicOnly bool, v *store.View) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.views[b2i(publicOnly)] = v
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// get returns the answer kept under key for generation gen whose files are unchanged.
func (c *readCache) get(key string, gen uint64) ([]mcpgo.ResourceContents, bool) {
	c.mu.Lock()
	v, ok := c.lru.Get(key)
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	e := v.(*cachedRead)
	if e.gen != gen || !c.depsSame(e) {
		return nil, false
	}
	return e.contents, true
}

// depsSame reports whether the files e was read from are unchanged (a stat of each).
func (c *readCache) depsSame(e *cachedRead) bool {
	now := time.Now()
	for _, d := range e.deps {
		if cur, _ := statFile(d.path, now, c.margin); !cur.same(d) {
			return false
		}
	}
	return true
}

// put keeps an answer of generation gen read from deps.
func (c *readCache) put(key string, gen uint64, deps []fileStamp, contents []mcpgo.ResourceContents) {
	size := int64(len(key)) + 256
	for _, d := range deps {
		size += int64(len(d.path)) + 64
	}
	for _, rc := range contents {
		if t, ok := rc.(mcpgo.TextResourceContents); ok {
			size += int64(len(t.Text) + len(t.URI) + len(t.MIMEType))
		} else {
			return // only text is kept
		}
	}
	if size > readCacheMaxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return // the refs moved meanwhile
	}
	c.lru.Remove(key)
	c.lru.Add(key, &cachedRead{gen: gen, deps: deps, contents: contents, size: size})
	c.bytes += size
	for c.bytes > readCacheBytes {
		c.lru.RemoveOldest()
	}
}

// readDeps collects the stat data of the files one read of the checked-out tree reads (the before hook of
// store.View.Observe), each taken before the file is read.
type readDeps struct {
	root   string // the checked-out tree; "" in a bare repository (everything is read from the refs)
	margin time.Duration
	deps   []fileStamp
	keep   bool // false once the answer must not be kept: a directory was listed, a file was too recent, too many files
}

func newReadDeps(root string, margin time.Duration) *readDeps {
	return &readDeps{root: root, margin: margin, keep: true}
}

func (r *readDeps) before(p string, dir bool) {
	if dir {
		r.keep = false
		return
	}
	if !r.keep || r.root == "" {
		return
	}
	full := filepath.Join(r.root, filepath.FromSlash(path.Clean(p)))
	for _, d := range r.deps {
		if d.path == full {
			return
		}
	}
	if len(r.deps) >= readCacheMaxDeps {
		r.keep = false
		return
	}
	fs, ok := statFile(full, time.Now(), r.margin)
	if !ok {
		r.keep = false
		return
	}
	r.deps = append(r.deps, fs)
}
