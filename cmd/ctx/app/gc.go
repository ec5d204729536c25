package app

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// startHeap is the memory a command's process uses before its first garbage collection (deferGC).
const startHeap = 32 << 20

// gcDeferred is set while deferGC's settings are in effect.
var gcDeferred atomic.Bool

// deferGC makes the process collect garbage only once its memory reaches startHeap, unless GOGC or
// GOMEMLIMIT say otherwise: a command that reads one entry or twenty commits, or writes one entry at
// 10,000 entries, allocates a few MB and exits, and the default target (a first collection at 4 MB, with
// its worker threads started) cost it time for no memory it needed back (bench/README.md "Fourth
// round"). The collector is off and a soft memory limit of startHeap makes the first collection; after
// it the defaults (GOGC 100, no limit) are back (normalGC, from a cleanup the first collection runs), so
// a command that keeps more than startHeap live behaves as before. Main calls it; a long-running server
// and the history commands, which set their own, call normalGC first.
func deferGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	gcDeferred.Store(true)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(startHeap)
	// Unreachable at once: the first collection frees it and runs the cleanup.
	sentinel := &struct{ p *int }{}
	runtime.AddCleanup(sentinel, func(int) { normalGC() }, 0)
}

// normalGC puts back the collector's defaults if deferGC's settings are in effect.
func normalGC() {
	if gcDeferred.CompareAndSwap(true, false) {
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(100)
	}
}
