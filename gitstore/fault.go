package gitstore

import "github.com/ctx-dev/ctx/internal/faultpoint"

// FaultPoint marks a moment of a write where the crash tests stop a ctx process to kill it there
// (docs/locks.md "Crash tests"): it calls faultpoint.Hook when set, which only cmd/ctx's test binary does;
// in ctx it does nothing.
func FaultPoint(name, detail string) {
	if h := faultpoint.Hook; h != nil {
		h(name, detail)
	}
}
