package app

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestTableInvalidUTF8KeepsColumns: a cell holding invalid UTF-8 (a byte 0xFF, tabwriter's Escape) is
// shown as the sanitizer shows it (\xFF) and every row stays padded (the rows after it used to keep raw
// tabs).
func TestTableInvalidUTF8KeepsColumns(t *testing.T) {
	var b bytes.Buffer
	tw := table(&b)
	fmt.Fprintf(tw, "%s\t%s\t%s\n", "first", "public", "ok")
	fmt.Fprintf(tw, "%s\t%s\t%s\n", "bad", "public", "x\xffy\u202e")
	fmt.Fprintf(tw, "%s\t%s\t%s\n", "third-key", "private", "after")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\t") || !strings.Contains(out, `x\xFFy\u202e`) {
		t.Fatalf("table:\n%q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	col := strings.Index(lines[0], "public")
	for _, l := range lines {
		if i := strings.Index(l, "p"); i != col {
			t.Errorf("second column at %d, want %d: %q", i, col, l)
		}
	}
}
