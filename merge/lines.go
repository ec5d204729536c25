package merge

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Line-level 3-way merge (diff3), docs/merge.md "markdown body" rule.
//
// Both sides are diffed against the base with go-diff's line mode
// (DiffLinesToRunes + DiffMainRunes, one rune per line, no timeout so the
// result never depends on machine speed). Each diff becomes a list of hunks:
// a base line range [start,end) and the lines that replace it. Hunks of the
// two sides are grouped when they truly overlap:
//
//   - two ranges that share at least one base line;
//   - an insertion strictly inside the other side's range;
//   - two insertions at the same base position.
//
// Adjacent changes (side A edits line 4, side B edits line 5) and an
// insertion right before or after the other side's range do not overlap and
// merge cleanly. A group changed by one side only takes that side; a group
// both sides changed to the same text takes it; anything else is a conflict.

// maxDiffLines bounds the input of go-diff's rune encoding (one code point a
// distinct line; it panics past 1,112,060). Bigger texts are merged as a
// single hunk. A million lines lets the two versions of an entry of the
// largest size a store holds (store.MaxFileBytes, 32 MiB) merge line by line
// when their lines average 34 bytes or more.
const maxDiffLines = 1_000_000

// maxDiffWork bounds the work of one line diff: Myers' algorithm, which
// go-diff runs without a timeout, costs about (N+M)·D line comparisons for
// N and M lines that differ in D inserted and deleted lines, so a side that
// rewrote every other line of a 4 MiB entry of short lines took minutes. A
// diff whose N+M (once the common first and last lines are set aside) times
// D would exceed it is not run: the side is taken as a single hunk, so an
// edit of the other side conflicts with it as a whole. The test is
// editsWithin's, on the input alone, so every machine merges alike. About a
// second of go-diff at worst; a 30 MiB entry of 100,000 lines still merges
// two sides that each changed up to 300 lines.
const maxDiffWork = 64 << 20

// hunk replaces base lines [start,end) with lines.
type hunk struct {
	start, end int
	lines      []string
}

func (h hunk) insertion() bool { return h.start == h.end }

// splitLines splits s after every "\n"; a last line without newline is kept.
// It splits exactly like go-diff's line mode.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	out := make([]string, 0, n+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// diffHunks returns the hunks turning baseLines into sideLines.
func diffHunks(base, side string, baseLines, sideLines []string) []hunk {
	if base == side {
		return nil
	}
	if len(baseLines)+len(sideLines) > maxDiffLines {
		return []hunk{{start: 0, end: len(baseLines), lines: sideLines}}
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // deterministic, optimal diff
	r1, r2, _ := dmp.DiffLinesToRunes(base, side)
	a, b := trimCommon(r1, r2)
	if n := len(a) + len(b); n > 0 && !editsWithin(a, b, min(maxDiffWork/n, n)) {
		return []hunk{{start: 0, end: len(baseLines), lines: sideLines}}
	}
	diffs := dmp.DiffMainRunes(r1, r2, false)
	var out []hunk
	var cur *hunk
	bp, sp := 0, 0
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			bp += n
			sp += n
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &hunk{start: bp, end: bp}
			}
			cur.end += n
			bp += n
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &hunk{start: bp, end: bp}
			}
			cur.lines = append(cur.lines, sideLines[sp:sp+n]...)
			sp += n
		}
	}
	flush()
	return out
}

// trimCommon returns a and b without their common first and last elements
// (go-diff sets them aside before its search too).
func trimCommon(a, b []rune) ([]rune, []rune) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	a, b = a[i:], b[i:]
	j := 0
	for j < len(a) && j < len(b) && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	return a[:len(a)-j], b[:len(b)-j]
}

// editsWithin reports whether b is a with at most max elements inserted or
// deleted: Myers' greedy forward search for the shortest edit script, stopped
// at max, in O((len(a)+len(b))·max) time and O(max) memory.
func editsWithin(a, b []rune, max int) bool {
	n, m := len(a), len(b)
	if n-m > max || m-n > max {
		return false
	}
	off := max + 1
	v := make([]int, 2*max+3) // v[off+k]: the furthest x reached on diagonal k = x-y
	for d := 0; d <= max; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return true
			}
		}
	}
	return false
}

// overlaps reports whether hunk h overlaps a group covering base [gs,ge).
func overlaps(gs, ge int, h hunk) bool {
	switch {
	case gs == ge && h.insertion():
		return h.start == gs
	case gs == ge:
		return h.start < gs && gs < h.end
	case h.insertion():
		return gs < h.start && h.start < ge
	default:
		return h.start < ge && gs < h.end
	}
}

// before orders hunks by start; at equal start an insertion comes first.
func before(x, y hunk) bool {
	if x.start != y.start {
		return x.start < y.start
	}
	return x.insertion() && !y.insertion()
}

// apply returns base[gs:ge] with hs (sorted, inside the range) applied.
func apply(baseLines []string, gs, ge int, hs []hunk) []string {
	var out []string
	p := gs
	for _, h := range hs {
		out = append(out, baseLines[p:h.start]...)
		out = append(out, h.lines...)
		p = h.end
	}
	return append(out, baseLines[p:ge]...)
}

func equalLines(x, y []string) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// merge3 merges a and b against base. a is the side that wins conflicts in
// kept; lost is the same merge with b's text in every conflicting group, so
// the two differ only where the sides truly overlapped. conflicts counts
// the conflicting groups.
func merge3(base, a, b []byte) (kept, lost []byte, conflicts int) {
	if bytes.Equal(a, b) {
		return a, a, 0
	}
	if bytes.Equal(base, a) {
		return b, b, 0
	}
	if bytes.Equal(base, b) {
		return a, a, 0
	}
	if nb, na, nc, final, ok := finalNewlines(base, a, b); ok {
		kept, lost, conflicts = merge3(nb, na, nc)
		var open [][]byte // the sides whose last line has no newline
		for _, x := range [][]byte{a, b} {
			if !endsLine(x) {
				open = append(open, x)
			}
		}
		return withFinalNewline(kept, final, open), withFinalNewline(lost, final, open), conflicts
	}
	bs, as, cs := string(base), string(a), string(b)
	bl, al, cl := splitLines(bs), splitLines(as), splitLines(cs)
	ha := diffHunks(bs, as, bl, al)
	hb := diffHunks(bs, cs, bl, cl)

	var k, l lineBuilder
	k.Grow(len(a) + len(b))
	emit := func(both bool, lines []string) {
		for _, s := range lines {
			k.WriteString(s)
			if both {
				l.WriteString(s)
			}
		}
	}
	pos := 0
	i, j := 0, 0
	for i < len(ha) || j < len(hb) {
		// First hunk of the group.
		var first hunk
		fromA := j >= len(hb) || (i < len(ha) && !before(hb[j], ha[i]))
		if fromA {
			first = ha[i]
		} else {
			first = hb[j]
		}
		gs, ge := first.start, first.end
		var ga, gb []hunk
		if fromA {
			ga = append(ga, first)
			i++
		} else {
			gb = append(gb, first)
			j++
		}
		for grew := true; grew; {
			grew = false
			if i < len(ha) && overlaps(gs, ge, ha[i]) {
				ge = max(ge, ha[i].end)
				ga = append(ga, ha[i])
				i++
				grew = true
			}
			if j < len(hb) && overlaps(gs, ge, hb[j]) {
				ge = max(ge, hb[j].end)
				gb = append(gb, hb[j])
				j++
				grew = true
			}
		}
		// Unchanged lines before the group.
		for _, s := range bl[pos:gs] {
			k.WriteString(s)
			l.WriteString(s)
		}
		pos = ge
		switch {
		case len(gb) == 0:
			emit(true, apply(bl, gs, ge, ga))
		case len(ga) == 0:
			emit(true, apply(bl, gs, ge, gb))
		default:
			ta := apply(bl, gs, ge, ga)
			tb := apply(bl, gs, ge, gb)
			emit(false, ta)
			for _, s := range tb {
				l.WriteString(s)
			}
			if !equalLines(ta, tb) {
				conflicts++
			}
		}
	}
	for _, s := range bl[pos:] {
		k.WriteString(s)
		l.WriteString(s)
	}
	return []byte(k.String()), []byte(l.String()), conflicts
}

// endsLine reports whether x ends in a newline; an empty text counts as one that does (it has no last
// line to end).
func endsLine(x []byte) bool { return len(x) == 0 || x[len(x)-1] == '\n' }

// finalNewlines separates the final newline from the lines (docs/merge.md "A final newline"): when some
// non-empty side's last line has no newline, it returns the three sides each with one (empty ones as they
// are), so that adding or removing only the final newline no longer changes the last line, and final, the
// 3-way merge of "ends in a newline" (the side that changed it wins; two booleans that both changed agree).
// ok is false when every side already ends in one: nothing to separate. An empty side has no say: it
// counts as unchanged.
func finalNewlines(base, a, b []byte) (nb, na, nc []byte, final, ok bool) {
	if endsLine(base) && endsLine(a) && endsLine(b) {
		return base, a, b, true, false
	}
	fb, fa, fc := endsLine(base), endsLine(a), endsLine(b)
	if len(a) == 0 {
		fa = fb
	}
	if len(b) == 0 {
		fc = fb
	}
	final = fc
	if fa != fb {
		final = fa
	}
	add := func(x []byte) []byte {
		if endsLine(x) {
			return x
		}
		return append(x[:len(x):len(x)], '\n')
	}
	return add(base), add(a), add(b), final, true
}

// withFinalNewline returns the merged text x (every line ending in a newline) with its final newline
// removed when final is false and its last line is the last line of a side in open (the sides that
// lack the final newline; their last line as written): a side's missing newline belongs to its last line,
// and a line the merge placed after it keeps its newline.
func withFinalNewline(x []byte, final bool, open [][]byte) []byte {
	if final || len(x) == 0 || x[len(x)-1] != '\n' {
		return x
	}
	last := x[bytes.LastIndexByte(x[:len(x)-1], '\n')+1 : len(x)-1]
	for _, o := range open {
		if bytes.Equal(o[bytes.LastIndexByte(o, '\n')+1:], last) {
			return x[:len(x)-1]
		}
	}
	return x
}

// lineBuilder builds a merged text line by line. A line without a final newline is the last line of the
// version it came from; when the merge puts more lines after it (the other side appended lines to a text
// whose last line this side rewrote without a newline), it gets a newline first, so two lines are never
// glued into one ("Step one.Step two.").
type lineBuilder struct {
	strings.Builder
	open bool // the last line written has no newline
}

func (b *lineBuilder) WriteString(s string) {
	if s == "" {
		return
	}
	if b.open {
		b.WriteByte('\n')
	}
	b.Builder.WriteString(s)
	b.open = s[len(s)-1] != '\n'
}

// Lines is a line-level diff3 of ours and theirs against base, built on
// go-diff's line mode (docs/merge.md). Changes in different places, including
// adjacent lines, merge cleanly; only truly overlapping changes conflict.
// merged never contains conflict markers: in a conflicting region it holds
// the text of the side whose whole content is byte-wise larger, so the
// result does not depend on which side is ours. Lines never panics; any
// bytes are accepted (lines end at "\n"; "\r" stays part of a line; a last
// line without newline is a line of its own).
func Lines(base, ours, theirs []byte) (merged []byte, conflict bool) {
	a, b := ours, theirs
	if bytes.Compare(a, b) < 0 {
		a, b = b, a
	}
	kept, _, n := merge3(base, a, b)
	return kept, n > 0
}
