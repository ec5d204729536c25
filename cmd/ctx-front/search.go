package main

import (
	"os"
	"path/filepath"

	"github.com/ctx-dev/ctx/internal/searchargs"
)

// searchName is the file name of the search program (cmd/ctx-search), looked for beside this executable.
const searchName = "ctx-search"

// runSearch hands a search command line of the shapes searchargs.Parse reads to ctx-search
// (docs/architecture.md "The search program") when ctx-full would answer it from the history index
// alone: the store opens as for a read (openStoreIn), the context branch does not exist (so the search
// has no context store to rank, and its cursors no refs to fingerprint), and the index file is there.
// It execs ctx-search with the index's folder and this process's whole command line; it returns only
// when it did not (then ctx-full runs, as before).
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
	pub, ok := s.tip(s.branch)
	common := s.common
	s.close()
	if !ok || !pub.IsZero() {
		return // a context store to search beside the index: ctx-full's (its search copy)
	}
	hist := filepath.Join(common, "ctx", "history") // history.DefaultDir
	if fi, err := os.Lstat(filepath.Join(hist, "index.db")); err != nil || !fi.Mode().IsRegular() {
		return // no index (ctx-full's hint) or not a file (its error)
	}
	path, err := besidePath(searchName)
	if err != nil {
		return
	}
	execSearch(path, append([]string{searchName, hist}, args...))
}
