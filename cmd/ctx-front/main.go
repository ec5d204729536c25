// Command ctx-front is the ctx that `make build` and `make install` put on the PATH as `ctx`: a small
// program that answers a few commands itself (reads, the post-checkout hook, a write of an existing
// entry), exactly as the full program would, and hands every other run to the full program, installed
// beside it as ctx-full (docs/architecture.md "The lean front").
//
// It links no go-git, SQLite, MCP or CLI library (a guard test and depguard check it), so it starts in
// about the time of a Go hello world, where the full program initialises some 190 packages. It answers
// only the exact argument shapes it knows (see serve), only when the store is in the state it reads
// (a ctx config it reads as ctx-full does, no interrupted transaction, no scope move pending, every object found), and only
// output the full program would print unchanged; anything else, an error included, is run by ctx-full,
// so help, errors and every other behaviour stay in one place.
//
// updatemaxprocs=0: the runtime's monitor thread otherwise reads the cgroup's CPU limit again on its first
// wake-up (three files) to follow a limit that changes while the process runs, which a front's run of a
// few milliseconds never sees.
//
//go:debug updatemaxprocs=0
package main

import (
	"fmt"
	"os"

	"github.com/ctx-dev/ctx/internal/lean"
)

func main() {
	growStack(0)
	if out, ok := serve(os.Args[1:]); ok {
		// One write of the whole answer (os.File.Write writes until done or an error), with no buffer to
		// allocate: 64 KiB of a front write's 1 MB allocated (bench/README.md "Eleventh round").
		if _, err := os.Stdout.Write(out); err != nil {
			// As ctx-full says it (app.Run): the output could not be written, exit 1.
			fmt.Fprintf(os.Stderr, "ctx: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	runSearch(os.Args)
	os.Exit(lean.RunFull(os.Args))
}

// growStack grows the main goroutine's stack once, while it is shallow, to the size a write reaches
// (encoding/json, os.Root, the refresh): the runtime starts it at 2 KiB and copied it at each doubling up to
// 32 KiB, each copy walking every frame above it (about 5% of a front write's CPU, `perf record`); a frame
// of 20 KiB makes the check at its entry (4 KiB by then) go to 32 KiB in one copy with nothing to walk.
//
//go:noinline
func growStack(i int) byte {
	var frame [20 << 10]byte
	frame[i] = 1
	return frame[i/2]
}
