// Package lazyre holds regular expressions compiled on first use instead of at package initialisation, so
// that a process that never runs them (most ctx commands, and `ctx mcp serve` until a tool needs them)
// does not pay for compiling them at start-up (docs/architecture.md "Start-up").
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled by Get on its first call.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns the expression expr, not compiled yet. A bad expr panics on the first Get, as
// regexp.MustCompile would at initialisation (every expression is compiled by its package's tests).
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Get returns the compiled expression; safe for concurrent use.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }
