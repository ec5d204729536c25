//go:build !ctxfault

package gitstore

// FaultPoint marks a moment of a write where the crash tests stop a ctx process to kill it there
// (docs/locks.md). In normal builds it does nothing; a binary built with -tags ctxfault stops at the point
// named by $CTX_FAULT ("name" or "name:detail").
func FaultPoint(name, detail string) {}
