//go:build !linux

package mcp

// refWatch is inotify's on Linux (refwatch_linux.go); elsewhere there is none and the read cache stats
// the files of its full check at each read.
type refWatch struct{}

func newRefWatch([]string) *refWatch { return nil }
func (w *refWatch) quiet() bool      { return false }
func (w *refWatch) close()           {}
