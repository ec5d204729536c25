// Package mdfence follows the fenced code blocks of a markdown text line by line (CommonMark "Fenced code
// blocks"), for the readers of headings that must not take a line of code for one: the ADR importer and
// the store's reading of a decision's sections (docs/format.md "Decisions").
package mdfence

import "strings"

// Fence is where a markdown text is, line after line: a line of three or more '`' or '~', indented by up
// to three spaces, opens a block; a line of the same character, at least as long, with nothing after it,
// closes it. The zero value is outside any block.
type Fence struct {
	Char byte // the open block's fence character
	N    int  // the opening fence's length; 0 outside a block
}

// In reports whether line l (a trailing "\r" ignored) opens, closes or lies inside a fenced code block,
// and moves past it.
func (f *Fence) In(l string) bool {
	t := strings.TrimLeft(strings.TrimRight(l, "\r"), " ")
	if len(l)-len(strings.TrimLeft(l, " ")) <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
		c := t[0]
		n := len(t) - len(strings.TrimLeft(t, string(c)))
		switch {
		case f.N == 0:
			f.Char, f.N = c, n
			return true
		case c == f.Char && n >= f.N && strings.TrimSpace(t[n:]) == "":
			f.N = 0
			return true
		}
	}
	return f.N > 0
}

// Open reports whether a block is open: the text so far ended inside one.
func (f *Fence) Open() bool { return f.N > 0 }
