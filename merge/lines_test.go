package merge

import (
	"bytes"
	"testing"
)

func TestLines(t *testing.T) {
	base := "a\nb\nc\nd\ne\n"
	tests := []struct {
		name           string
		base, ours, th string
		want           string
		conflict       bool
	}{
		{"identical", base, base, base, base, false},
		{"only ours", base, "a\nB\nc\nd\ne\n", base, "a\nB\nc\nd\ne\n", false},
		{"only theirs", base, base, "a\nb\nc\nD\ne\n", "a\nb\nc\nD\ne\n", false},
		{"same change both", base, "a\nX\nc\nd\ne\n", "a\nX\nc\nd\ne\n", "a\nX\nc\nd\ne\n", false},
		{"different places", base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", false},
		{"adjacent lines", base, "a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n", "a\nB\nC\nd\ne\n", false},
		{"insert and edit elsewhere", base, "a\nb\nnew\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "a\nb\nnew\nc\nd\nE\n", false},
		{"insert before edited line", base, "a\nnew\nb\nc\nd\ne\n", "a\nB\nc\nd\ne\n", "a\nnew\nB\nc\nd\ne\n", false},
		{"delete and edit elsewhere", base, "a\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "a\nc\nd\nE\n", false},
		{"both append same", base, base + "f\n", base + "f\n", base + "f\n", false},
		// Overlapping: the byte-wise larger whole version wins the region.
		{"same line differently", base, "a\nb\nX\nd\ne\n", "a\nb\nY\nd\ne\n", "a\nb\nY\nd\ne\n", true},
		{"both append differently", base, base + "f\n", base + "g\n", base + "g\n", true},
		{"edit vs delete same line", base, "a\nb\nZ\nd\ne\n", "a\nb\nd\ne\n", "a\nb\nd\ne\n", true},
		{"conflict plus clean", base, "A\nb\nX\nd\ne\n", "a\nb\nY\nd\nE\n", "A\nb\nY\nd\nE\n", true},
		{"no trailing newline", "a\nb", "a\nb\nc", "z\nb", "z\nb\nc", false},
		// One side rewrote the last line without a newline, the other appended after it: the lines
		// stay two lines ("Step one (revised).Step two." was the bug).
		{"rewritten last line without newline, other appends", "Step one.\n", "Step one (revised).", "Step one.\nStep two.\n", "Step one (revised).\nStep two.\n", false},
		// A final newline is merged apart from the last line (docs/merge.md): a teammate's older ctx wrote
		// entries without one, a newer ctx writes it; their edits of different lines still merge cleanly.
		{"final newline added vs last line edited", "a\nb", "a\nb\n", "a\nB", "a\nB\n", false},
		{"old format edits last line, new format edits first", "a\nb", "a\nB", "A\nb\n", "A\nB\n", false},
		{"both without final newline", "a\nb\nc", "A\nb\nc", "a\nb\nC", "A\nb\nC", false},
		{"final newline removed, other edits elsewhere", "a\nb\n", "a\nb", "A\nb\n", "A\nb", false},
		{"crlf", "a\r\nb\r\nc\r\n", "A\r\nb\r\nc\r\n", "a\r\nb\r\nC\r\n", "A\r\nb\r\nC\r\n", false},
		{"empty base add add", "", "x\n", "y\n", "y\n", true},
		{"delete all vs unchanged", base, "", base, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, c := Lines([]byte(tt.base), []byte(tt.ours), []byte(tt.th))
			if string(got) != tt.want || c != tt.conflict {
				t.Errorf("Lines = %q, %v; want %q, %v", got, c, tt.want, tt.conflict)
			}
			got2, c2 := Lines([]byte(tt.base), []byte(tt.th), []byte(tt.ours))
			if !bytes.Equal(got, got2) || c != c2 {
				t.Errorf("not symmetric: %q vs %q", got, got2)
			}
			if bytes.Contains(got, []byte("<<<<<<<")) {
				t.Errorf("conflict markers in %q", got)
			}
		})
	}
}

// TestMerge3Lost checks that lost differs from kept only in the conflicting
// region.
func TestMerge3Lost(t *testing.T) {
	kept, lost, n := merge3([]byte("a\nb\nc\nd\ne\n"), []byte("A\nb\nX\nd\ne\n"), []byte("a\nb\nY\nd\nE\n"))
	if n != 1 || string(kept) != "A\nb\nX\nd\nE\n" || string(lost) != "A\nb\nY\nd\nE\n" {
		t.Fatalf("merge3 = %q, %q, %d", kept, lost, n)
	}
}
