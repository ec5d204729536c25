package mdfence

import (
	"strings"
	"testing"
)

// TestFence: which lines of a text are in a fenced code block (CommonMark's rules as In states them).
func TestFence(t *testing.T) {
	text := "a\n```sh\n# not a heading\n~~~\n```\nb\n   ~~~~\n````\n~~~ x\n~~~~\nc\n    ```\n"
	want := []bool{false, true, true, true, true, false, true, true, true, true, false, false, false}
	var f Fence
	for i, l := range strings.Split(text, "\n") {
		if got := f.In(l); got != want[i] {
			t.Errorf("line %d %q: in %v, want %v", i+1, l, got, want[i])
		}
	}
	if f.Open() {
		t.Errorf("a closed text left a block open")
	}
	f = Fence{}
	f.In("```\r")
	if !f.Open() || f.Char != '`' || f.N != 3 {
		t.Errorf("an open fence: %+v", f)
	}
}
