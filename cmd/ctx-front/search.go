package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ctx-dev/ctx/internal/lean"
	"github.com/ctx-dev/ctx/internal/searchargs"
	"github.com/ctx-dev/ctx/internal/searchsock"
	"github.com/ctx-dev/ctx/store/tipsfp"
)

// searchName is the file name of the search program (cmd/ctx-search), looked for beside this executable.
const searchName = "ctx-search"

// runSearch hands a search command line of the shapes searchargs.Parse reads to ctx-search
// (docs/architecture.md "The search program"): the store opens as for a read (openStoreIn), its refs
// can be read, and the index file is there. It execs ctx-search with the index's folder, the
// fingerprint of the context refs' tips ("-" when the context branch does not exist: no context store
// to rank, no refs in the cursors) and this process's whole command line; ctx-search checks the store's
// search copy against that fingerprint. It returns only when it did not exec (then ctx-full runs, as
// before).
func runSearch(args []string) {
	r, ok := searchargs.Parse(args[1:])
	if !ok {
		return
	}
	for _, v := range []string{"CTX_AGENT", "CTX_SESSION"} {
		if s := os.Getenv(v); s != "" && !plainKey(s) {
			return
		}
	}
	dir := r.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return
		}
		dir = wd
	} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return // ctx-full's usage error
	} else if dir, err = filepath.Abs(dir); err != nil {
		return
	}
	s, ok := openStoreIn(dir)
	if !ok {
		return
	}
	fp, ok := s.tipsFingerprint()
	common := s.common
	s.close()
	if !ok {
		return
	}
	hist := filepath.Join(common, "ctx", "history") // history.DefaultDir
	if fi, err := os.Lstat(filepath.Join(hist, "index.db")); err != nil || !fi.Mode().IsRegular() {
		return // no index (ctx-full's hint) or not a file (its error)
	}
	path, err := lean.Beside(searchName)
	if err != nil {
		return
	}
	if out, ok := askServer(hist, path, fp, args); ok {
		if _, err := os.Stdout.Write(out); err != nil {
			// As ctx-search says it (and ctx-full, app.Run): the output could not be written, exit 1.
			fmt.Fprintf(os.Stderr, "ctx: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	autoStart(hist, path)
	lean.Exec(path, append([]string{searchName, hist, fp}, args...))
}

// serverTimeout bounds each read and write of the front on the search server's socket: past it the
// front runs ctx-search itself.
const serverTimeout = 30 * time.Second

// askServer asks the search server of the index in hist, when one runs (`ctx history server start`,
// docs/architecture.md "The search server"), for the answer ctx-search at path would print: the server
// must be of the same build (searchsock.BuildID of path), the socket and the folder this user's alone,
// and the peer this user's. ok is false on anything else (no server, a dead socket, another build, a
// hand-over, an error): nothing was printed and the caller runs ctx-search.
func askServer(hist, path, fp string, args []string) ([]byte, bool) {
	if !searchsock.Supported {
		return nil, false
	}
	if _, err := os.Lstat(filepath.Join(hist, searchsock.Name)); err != nil {
		return nil, false // the common case: no server
	}
	build, err := searchsock.BuildID(path)
	if err != nil {
		return nil, false
	}
	out, err := searchsock.Dial(hist, searchsock.Request{Build: build, FP: fp, Args: args}, serverTimeout)
	return out, err == nil
}

// autoStart starts the search server of the index in hist in the background when no server answered
// and the automatic start is on (`ctx history server enable`: the marker searchsock.AutoName, a regular
// file of this user's; docs/architecture.md "The search server"), unless CTX_SEARCH_SERVER_AUTO=0. It
// does not wait for the server: this search runs one-shot as before, the next ones ask the server. The
// common case (no marker) costs one lstat; searchsock.AutoStart keeps concurrent fronts to one start.
func autoStart(hist, path string) {
	if !searchsock.Supported || !searchsock.AutoOn(hist) || os.Getenv(searchsock.AutoOffEnv) == "0" {
		return
	}
	searchsock.AutoStart(hist, path)
}

// tipsFingerprint is store.HistoryTips's fingerprint of the scopes' tips (tipsfp.Of), "-" when the
// context branch does not exist (ctx-full's search then has no context store); ok false when a ref
// cannot be read.
func (s *store) tipsFingerprint() (string, bool) {
	pub, ok := s.tip(s.branch)
	if !ok {
		return "", false
	}
	if pub.IsZero() {
		return "-", true
	}
	priv, ok := s.tip(refPrivate)
	if !ok {
		return "", false
	}
	eph, ok := s.tip(refEphemeral)
	if !ok {
		return "", false
	}
	return tipsfp.Of(eph.String(), priv.String(), pub.String()), true
}
