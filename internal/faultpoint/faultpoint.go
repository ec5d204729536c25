// Package faultpoint is the crash tests' hook into ctx's writes (docs/locks.md "Crash tests").
//
// gitstore.FaultPoint calls Hook, when set, at each moment of a write where a crash test stops a ctx
// process to kill it with SIGKILL. Nothing in ctx sets Hook: only cmd/ctx's test binary does, when it runs
// ctx as its "ctx-fault" command. The package is internal (no code outside this module can import it)
// and no flag, environment variable or input of ctx reaches it: in ctx every fault point is a nil check.
package faultpoint

// Hook, when not nil, is called with the fault point's name ("ref-locked", "objects-written",
// "refs-prepared", "ref-renamed", "ref-marked") and its detail (the ref, or ""). It is set before the
// program starts its work and never changed afterwards.
var Hook func(name, detail string)
