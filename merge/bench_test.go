package merge

import (
	"fmt"
	"strings"
	"testing"
)

// benchStore is a store of n knowledge entries of about 1 KB each.
func benchStore(n int) Files {
	f := make(Files, n)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Entry %d\n\n", i)
		for j := range 20 {
			fmt.Fprintf(&b, "Line %d of entry %d: the store keeps context on a git branch.\n", j, i)
		}
		f[fmt.Sprintf("knowledge/entry-%05d.md", i)] = []byte(kn("2026-11-01T00:00:00Z", b.String()))
	}
	return f
}

func editEntry(c []byte, line int, text, stamp string) []byte {
	s := strings.Replace(string(c), "2026-11-01T00:00:00Z", stamp, 1)
	old := fmt.Sprintf("Line %d of", line)
	return []byte(strings.Replace(s, old, text+" "+old, 1))
}

// BenchmarkTree merges a 10,000-entry store where each side changed 1,000
// entries: 900 only on that side, 100 on both (50 in different lines, 50 in
// the same line, which conflict).
func BenchmarkTree(b *testing.B) {
	base := benchStore(10_000)
	ours, theirs := copyFiles(base), copyFiles(base)
	for i := range 1000 {
		p := fmt.Sprintf("knowledge/entry-%05d.md", i)
		ours[p] = editEntry(base[p], 3, "ours", "2026-11-02T00:00:00Z")
		q := fmt.Sprintf("knowledge/entry-%05d.md", i+900)
		line := 15
		if i < 50 {
			line = 3 // same line as ours: conflict
		}
		theirs[q] = editEntry(base[q], line, "theirs", "2026-11-03T00:00:00Z")
	}
	r := Tree(base, ours, theirs)
	if len(r.Conflicts) != 50 || len(r.Files) != 10_050 {
		b.Fatalf("%d conflicts, %d files", len(r.Conflicts), len(r.Files))
	}
	b.ResetTimer()
	b.ReportAllocs()
	for b.Loop() {
		Tree(base, ours, theirs)
	}
}
