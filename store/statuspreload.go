package store

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/gitstore"
)

// A hand-edit scan stats the files of a big folder on several goroutines, as git's preload-index does
// (preload-index.c: one thread per 500 index entries, at most 20): the lstat's, and the reads of the
// files whose stat data do not stand for their content, run in parallel; what they found is then compared
// with the record in order, on one goroutine, as before (docs/architecture.md "The status index").
var (
	// statPreloadPerWorker is the fewest files each goroutine takes: a folder of fewer than two workers'
	// worth is stat'ed in line.
	statPreloadPerWorker = 500
	// statPreloadMaxWorkers bounds the goroutines of one batch besides statPreloadProcs.
	statPreloadMaxWorkers = 8
	// statPreloadProcs is how many goroutines can stat at once: GOMAXPROCS (an lstat is too short for the
	// scheduler to hand a processor to another goroutine while it runs, so more goroutines than
	// processors would not stat more at once). Tests set more than the machine has.
	statPreloadProcs = runtime.GOMAXPROCS
	// statPreloadBatch is how many files are checked before their answers are compared with the record:
	// it bounds the answers kept at once.
	statPreloadBatch = 4096
)

// onStatPreload, when set (tests), is called with the number of files and goroutines of every batch a
// scan checks on more than one goroutine.
var onStatPreload func(files, workers int)

// fileCheck is what a scan learned of one file of the record before comparing it with the record: its
// lstat, and its blob when it had to be read.
type fileCheck struct {
	typ  fs.FileMode // the type bits (0: a regular file)
	st   FileStat
	err  error         // of the lstat (fs.ErrNotExist: deleted), or of the read when read is set
	read bool          // the file was read (a regular file whose stat data do not stand for its content)
	blob gitstore.Hash // its blob, when read and err is nil
}

// checkFiles checks the files of record entries idx, in the folder dir opened as r and f, into out
// (len(out) == len(idx)), on up to GOMAXPROCS goroutines when there are enough of them. It only reads
// sc.x, so its goroutines share nothing but out, each its own part.
func (sc *scan) checkFiles(r *os.Root, f *os.File, idx []int, out []fileCheck) {
	workers := min(statPreloadProcs(0), statPreloadMaxWorkers, len(idx)/max(statPreloadPerWorker, 1))
	if workers < 2 {
		sc.checkRange(r, f, idx, out)
		return
	}
	if onStatPreload != nil {
		onStatPreload(len(idx), workers)
	}
	chunk := (len(idx) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := chunk; lo < len(idx); lo += chunk {
		hi := min(lo+chunk, len(idx))
		wg.Go(func() { sc.checkRange(r, f, idx[lo:hi], out[lo:hi]) })
	}
	sc.checkRange(r, f, idx[:chunk], out[:chunk])
	wg.Wait()
}

// checkRange checks the files of record entries idx in order, into out. A cancelled scan stops: the
// answers left carry the context's error.
func (sc *scan) checkRange(r *os.Root, f *os.File, idx []int, out []fileCheck) {
	var name []byte // the NUL-terminated name, reused (lstatName)
	for k, i := range idx {
		if k%256 == 0 {
			if err := sc.ctx.Err(); err != nil {
				for j := k; j < len(idx); j++ {
					out[j] = fileCheck{err: err}
				}
				return
			}
		}
		out[k] = sc.checkFile(r, f, i, &name)
	}
}

// baseName is the last element of the slash path p (a path of the record that names a file: clean, not
// ending in a slash).
func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// dirName is the folder of the slash path p as path.Dir gives it for a clean path ("." at the top).
func dirName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

// checkFile lstat's the file of record entry i in the folder opened as r and f and, when it is a regular
// file whose stat data do not stand for its content (they differ from the index's, or are racily clean),
// reads it and takes its blob. buf is the caller's scratch space for the name.
func (sc *scan) checkFile(r *os.Root, f *os.File, i int, buf *[]byte) fileCheck {
	e := &sc.x.entries[i]
	typ, st, err := lstatName(r, f, baseName(e.path), buf)
	c := fileCheck{typ: typ, st: st, err: err}
	if err != nil || typ != 0 {
		return c
	}
	if e.hasStat && e.st == st && (sc.x.prechecked || sc.x.trusted(st)) {
		return c // unchanged since ctx wrote or read it
	}
	c.read = true
	if st.Size > maxFileBytes {
		// Never read whole (ctx commit refuses it from its size; a ref may hold one from before the limit).
		c.blob, c.err = sc.fsys.hashFile(e.path, st.Size)
		return c
	}
	data, err := sc.fsys.readFile(e.path)
	if err != nil {
		c.err = err
		return c
	}
	c.blob = blobHash(data)
	return c
}

// errNameNUL is a name holding a NUL byte, which no file has (lstatName).
var errNameNUL = errors.New("a NUL byte in the name")
