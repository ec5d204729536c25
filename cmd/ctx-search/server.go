package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/mcp/searchpage"
	"github.com/ctx-dev/ctx/mcp/storesearch"
)

// defaultIdle is how long a search server waits without a request before it exits (--idle).
const defaultIdle = 30 * time.Minute

// tick is how often a server checks, between requests, that it should go on: its socket file still its
// own, its program file not replaced, the index still there, not idle for longer than --idle.
const tick = 500 * time.Millisecond

// ioTimeout bounds each read and write on a connection, both ends.
const ioTimeout = 30 * time.Second

// searchTimeout bounds one search in the server.
const searchTimeout = 60 * time.Second

// warm is the search server's backend: the index and the store's search copy in dir, kept open between
// searches and reopened when their file was replaced (an index rebuilt, a copy written anew). What they
// hold is read again at every search: SQLite's reader sees every import committed before it starts, the
// generation is read per search, and the copy's fingerprint is compared with the front's at every
// search (a moved context branch: the copy is stale until ctx-full brings it up to date, and the search
// is handed over), so a warm search never answers what a one-shot search would not.
type warm struct {
	dir string

	mu sync.RWMutex // ix: read-held by searches, write-held to reopen it
	ix *history.Index

	storeMu   sync.Mutex // the copy's handle (one connection)
	store     *sql.DB
	storeFile os.FileInfo // store-search.db as it was when opened

	cacheMu    sync.Mutex
	cache      map[string]cached // answers by request (fingerprint and command line); nil: no cache
	cacheBytes int
}

// The answers' cache (warm.cached): at most cacheEntries answers of at most cacheMax bytes in all; when
// full it is emptied. CTX_SEARCH_SERVER_CACHE=0 in the server's environment turns it off.
const (
	cacheEntries = 256
	cacheMax     = 32 << 20
)

// cached is an answer and the state of the index and the copy it was read from.
type cached struct {
	state string
	out   []byte
}

// state is what a search's answer depends on besides its request: the index file the server holds
// open (a replaced index is another *history.Index), its generation (moved by every import that changed
// it), and the store's copy (its file and its fingerprint; "-" without a context branch). ok is false
// when it cannot be read: the search runs uncached. The search that follows reads through checked, which
// does not check again what state checked (checked).
func (w *warm) state(ctx context.Context, fp string) (string, checked, bool) {
	chk := checked{w: w}
	ix, release, err := w.index(ctx)
	if err != nil {
		return "", chk, false
	}
	chk.ix = ix
	gen, err := ix.Generation(ctx)
	release()
	if err != nil {
		return "", chk, false
	}
	copyState := "-"
	if fp != "-" {
		if onWarmCheck != nil {
			onWarmCheck("store")
		}
		w.storeMu.Lock()
		defer w.storeMu.Unlock()
		fi, err := os.Lstat(filepath.Join(w.dir, storesearch.File))
		if err != nil || w.store == nil || !os.SameFile(fi, w.storeFile) {
			return "", chk, false // the search opens it (or hands over); its answer is not cached
		}
		var v int
		if err := w.store.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			return "", chk, false
		}
		have, err := storesearch.ReadFP(ctx, w.store)
		if err != nil {
			return "", chk, false
		}
		if v == storesearch.Version && have == fp {
			chk.store = w.store
		}
		copyState = fmt.Sprintf("%p/%d/%s", w.store, v, have)
	}
	return fmt.Sprintf("%p/%d/%s", ix, gen, copyState), chk, true
}

// checked is the backend of a search that follows state: the index and the copy state checked (ix; store,
// nil unless the copy was current: its version storesearch.Version and its fingerprint the request's)
// serve while the server still holds them, without their file's stat, the copy's version and fingerprint
// being read again; anything else is read as warm reads it.
type checked struct {
	w     *warm
	ix    *history.Index
	store *sql.DB
}

// index returns the index state checked, when the server still holds it, without its file's stat;
// otherwise warm.index's (which opens the index again when it was replaced). Either way the index is
// returned under a read lock of w.mu, which the caller must release by calling release once, after its
// last use of the index and before any other call that takes w.mu (warm.index, warm.state): the server
// cannot close or replace the index meanwhile. On an error nothing is held and release is nil.
func (c checked) index(ctx context.Context) (ix *history.Index, release func(), err error) {
	c.w.mu.RLock()
	if c.ix != nil && c.w.ix == c.ix {
		return c.ix, c.w.mu.RUnlock, nil
	}
	c.w.mu.RUnlock()
	return c.w.index(ctx)
}

// storeHits searches the store's copy state checked (n hits at most, ranked) when the copy was current
// and the server still holds it, without its file's stat or its version and fingerprint being read again;
// otherwise it is warm.storeHits, which checks them all. It holds w.storeMu for the whole search and
// releases it before it returns (nothing is left for the caller to release): the copy cannot be closed
// or replaced during the search. ok is false when the copy cannot answer for fp (missing, not current,
// unreadable): the caller leaves the search to ctx-full.
func (c checked) storeHits(ctx context.Context, fp, query string, n int) (hits []searchpage.Result, ok bool) {
	c.w.storeMu.Lock()
	if c.store != nil && c.w.store == c.store {
		defer c.w.storeMu.Unlock()
		return storeSearch(ctx, c.store, query, n)
	}
	c.w.storeMu.Unlock()
	return c.w.storeHits(ctx, fp, query, n)
}

// answer is search's answer to a request, from the cache when the index and the copy are in the state
// it was read in (state), else searched and kept. The state is read before the search: a search that
// saw a later import is kept under the earlier state, which never comes back (generations only grow; a
// reopened index or copy is another handle), so an answer is never served from a state it was not
// read in.
func (w *warm) answer(ctx context.Context, fp string, args []string) ([]byte, bool) {
	if w.cache == nil {
		return search(ctx, w, fp, args)
	}
	st, chk, stOK := w.state(ctx, fp)
	key := fp + "\x00" + strings.Join(args, "\x00")
	if stOK {
		w.cacheMu.Lock()
		c, hit := w.cache[key]
		w.cacheMu.Unlock()
		if hit && c.state == st {
			return c.out, true
		}
	}
	out, ok := search(ctx, chk, fp, args)
	if ok && stOK {
		w.cacheMu.Lock()
		if len(w.cache) >= cacheEntries || w.cacheBytes+len(out) > cacheMax {
			clear(w.cache)
			w.cacheBytes = 0
		}
		if len(out) <= cacheMax {
			if old, had := w.cache[key]; had {
				w.cacheBytes -= len(old.out)
			}
			w.cache[key] = cached{state: st, out: out}
			w.cacheBytes += len(out)
		}
		w.cacheMu.Unlock()
	}
	return out, ok
}

func (w *warm) index(ctx context.Context) (*history.Index, func(), error) {
	if onWarmCheck != nil {
		onWarmCheck("index")
	}
	for {
		w.mu.RLock()
		if w.ix != nil && !w.ix.Replaced() {
			return w.ix, w.mu.RUnlock, nil
		}
		w.mu.RUnlock()
		w.mu.Lock()
		if w.ix == nil || w.ix.Replaced() {
			if w.ix != nil {
				w.ix.Close()
				w.ix = nil
			}
			// As the front requires before it runs ctx-search: a regular file (history.Open would create one).
			if fi, err := os.Lstat(filepath.Join(w.dir, "index.db")); err != nil || !fi.Mode().IsRegular() {
				w.mu.Unlock()
				return nil, nil, fmt.Errorf("search server: no index in %s", w.dir)
			}
			ix, err := history.Open(ctx, w.dir)
			if err != nil {
				w.mu.Unlock()
				return nil, nil, err
			}
			w.ix = ix
		}
		w.mu.Unlock()
	}
}

// onWarmCheck, when set (by tests), is called at each check of the index (warm.index) and of the copy
// (warm.state, warm.storeHits) with "index" or "store".
var onWarmCheck func(what string)

func (w *warm) storeHits(ctx context.Context, fp, query string, n int) ([]searchpage.Result, bool) {
	if onWarmCheck != nil {
		onWarmCheck("store")
	}
	w.storeMu.Lock()
	defer w.storeMu.Unlock()
	fi, err := os.Lstat(filepath.Join(w.dir, storesearch.File))
	if err != nil || !fi.Mode().IsRegular() || w.store == nil || !os.SameFile(fi, w.storeFile) {
		w.closeStore()
		if err != nil || !fi.Mode().IsRegular() {
			return nil, false
		}
		db, err := storesearch.OpenRead(ctx, w.dir)
		if err != nil {
			return nil, false
		}
		w.store, w.storeFile = db, fi
	}
	// OpenRead checked the version when it opened the file; a copy rewritten in place is checked again.
	var v int
	if err := w.store.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != storesearch.Version {
		w.closeStore()
		return nil, false
	}
	have, err := storesearch.ReadFP(ctx, w.store)
	if err != nil || have != fp {
		return nil, false
	}
	return storeSearch(ctx, w.store, query, n)
}

func (w *warm) closeStore() {
	if w.store != nil {
		w.store.Close()
		w.store, w.storeFile = nil, nil
	}
}

func (w *warm) close() {
	w.mu.Lock()
	if w.ix != nil {
		w.ix.Close()
		w.ix = nil
	}
	w.mu.Unlock()
	w.storeMu.Lock()
	w.closeStore()
	w.storeMu.Unlock()
}

// serverUsage is the server mode's usage line.
const serverUsage = "usage: ctx-search --server start|run|stop|status|enable|disable INDEXDIR [--idle DURATION]\n" +
	"       ctx-search --server run INDEXDIR --auto (an automatic start's server: searchsock.AutoStart)"

// serverMain is `ctx-search --server VERB INDEXDIR [--idle DURATION]`, which `ctx history server` runs
// (docs/architecture.md "The search server"): start a server in the background and wait until it
// listens, run one in the foreground, stop the running one, say whether one runs, or turn the automatic
// start on (and start one) or off (and stop it). It returns the exit status.
func serverMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, serverUsage)
		return 2
	}
	verb, dir := args[0], args[1]
	idle := defaultIdle
	auto := false
	switch rest := args[2:]; {
	case len(rest) == 0:
	case len(rest) == 1 && rest[0] == "--auto" && verb == "run":
		auto = true
	case len(rest) == 2 && rest[0] == "--idle" && (verb == "start" || verb == "run"):
		d, err := time.ParseDuration(rest[1])
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "ctx: --idle: not a duration of zero or more: %q\n", rest[1])
			return 2
		}
		idle = d
	default:
		fmt.Fprintln(os.Stderr, serverUsage)
		return 2
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctx: %v\n", err)
		return 1
	}
	switch verb {
	case "start":
		return startServer(abs, idle)
	case "run":
		if err := runServer(context.Background(), abs, idle, auto, os.Stderr); err != nil {
			fmt.Fprintf(os.Stderr, "ctx: %v\n", err)
			return 1
		}
		return 0
	case "stop":
		return stopServer(abs)
	case "status":
		return serverStatus(abs)
	case "enable":
		return enableServer(abs)
	case "disable":
		return disableServer(abs)
	}
	fmt.Fprintln(os.Stderr, serverUsage)
	return 2
}
