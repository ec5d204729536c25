package merge

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// bigText is n lines of width bytes each (the line number, then x), with the lines whose index is in
// edit changed (an "e" instead of the x's).
func bigText(n, width int, edit func(i int) bool) []byte {
	var b strings.Builder
	b.Grow(n * width)
	fill := strings.Repeat("x", width-10)
	efill := strings.Repeat("e", width-10)
	for i := 0; i < n; i++ {
		f := fill
		if edit(i) {
			f = efill
		}
		fmt.Fprintf(&b, "%08d %s\n", i, f)
	}
	return []byte(b.String())
}

// BenchmarkLinesBig merges large texts: two edits far apart in 30 MiB (80-byte lines: 393,216 lines a
// side; 320-byte lines), and a side that rewrote every other line of a text of short lines against an edit
// of the other side (the work maxDiffWork bounds). It reports the process's CPU time per merge (cpu-ms/op,
// GC included) beside the wall time.
func BenchmarkLinesBig(b *testing.B) {
	none := func(int) bool { return false }
	for _, c := range []struct {
		name         string
		lines, width int
		ours, theirs func(int) bool
	}{
		{"30MiB-80B-lines-2-edits", 30 << 20 / 80, 80, func(i int) bool { return i == 10 }, func(i int) bool { return i == 300_000 }},
		{"30MiB-320B-lines-2-edits", 30 << 20 / 320, 320, func(i int) bool { return i == 10 }, func(i int) bool { return i == 90_000 }},
		{"1MiB-16B-lines-every-other", 1 << 20 / 16, 16, func(i int) bool { return i == 10 }, func(i int) bool { return i%2 == 0 }},
		{"512KiB-16B-lines-every-other", 512 << 10 / 16, 16, func(i int) bool { return i == 10 }, func(i int) bool { return i%2 == 0 }},
		{"256KiB-16B-lines-every-other", 256 << 10 / 16, 16, func(i int) bool { return i == 10 }, func(i int) bool { return i%2 == 0 }},
		{"128KiB-16B-lines-every-other", 128 << 10 / 16, 16, func(i int) bool { return i == 10 }, func(i int) bool { return i%2 == 0 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			base := bigText(c.lines, c.width, none)
			ours := bigText(c.lines, c.width, c.ours)
			theirs := bigText(c.lines, c.width, c.theirs)
			b.ResetTimer()
			cpu0 := cpuTime()
			conflicts := 0
			for i := 0; i < b.N; i++ {
				if _, conflict := Lines(base, ours, theirs); conflict {
					conflicts++
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(conflicts)/float64(b.N), "conflict")
		})
	}
}

// cpuTime is the CPU time (user and system) this process used so far, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// editCount is the number of lines go-diff inserts and deletes to turn a into b (its optimal diff).
func editCount(a, b []rune) int {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	n := 0
	for _, d := range dmp.DiffMainRunes(a, b, false) {
		if d.Type != diffmatchpatch.DiffEqual {
			n += len([]rune(d.Text))
		}
	}
	return n
}

// TestEditsWithin checks editsWithin against go-diff's optimal edit count on random short sequences: true
// exactly when the count is at most max.
func TestEditsWithin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seq := func() []rune {
		s := make([]rune, rng.IntN(12))
		for i := range s {
			s[i] = rune('a' + rng.IntN(3))
		}
		return s
	}
	for i := 0; i < 3000; i++ {
		a, b := seq(), seq()
		d := editCount(a, b)
		for max := 0; max <= 24; max++ {
			if got := editsWithin(a, b, max); got != (d <= max) {
				t.Fatalf("editsWithin(%q, %q, %d) = %v, go-diff's edit count is %d", string(a), string(b), max, got, d)
			}
		}
	}
}

// TestDiffWorkBounded: a side that changed every other line of a text whose line diff would cost more
// than maxDiffWork is one hunk (the whole text), and an edit of the other side conflicts with it; two
// sides that changed lines far apart in a 4 MiB text still merge line by line (BenchmarkLinesBig: 30 MiB).
func TestDiffWorkBounded(t *testing.T) {
	none := func(int) bool { return false }
	n := 1 << 20 / 16 // 1 MiB of 16-byte lines: 65,536 lines; every other line is 32,768 changes
	base := bigText(n, 16, none)
	ours := bigText(n, 16, func(i int) bool { return i == 10 })
	theirs := bigText(n, 16, func(i int) bool { return i%2 == 0 })
	bl, tl := splitLines(string(base)), splitLines(string(theirs))
	hs := diffHunks(string(base), string(theirs), bl, tl)
	if len(hs) != 1 || hs[0].start != 0 || hs[0].end != len(bl) || len(hs[0].lines) != len(tl) {
		t.Fatalf("diffHunks of a rewrite of every other line: %d hunks, want the whole text as one", len(hs))
	}
	if _, conflict := Lines(base, ours, theirs); !conflict {
		t.Error("Lines: an edit against a rewrite too costly to diff merged without a conflict")
	}
	// Within the budget: a few changes far apart still merge line by line.
	n = 4 << 20 / 320
	base = bigText(n, 320, none)
	ours = bigText(n, 320, func(i int) bool { return i == 10 || i == n/2 })
	theirs = bigText(n, 320, func(i int) bool { return i == n-10 })
	merged, conflict := Lines(base, ours, theirs)
	if conflict || string(merged) != string(bigText(n, 320, func(i int) bool { return i == 10 || i == n/2 || i == n-10 })) {
		t.Errorf("Lines of two sides that changed a 4 MiB text in different places: conflict %v, or not both edits kept", conflict)
	}
}
