package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestLineDistanceNoClock: the side a conflict names as ours comes from lineDistance, which every
// machine must compute alike. Small texts are diffed exactly (go-diff without its time limit); large ones
// (here 30,000 lines a side) by their multisets of lines, in linear time, still ranking the version
// closer to ours first and giving the same answer every time.
func TestLineDistanceNoClock(t *testing.T) {
	if d := lineDistance("a\nb\nc\n", "a\nc\n"); d != 2 {
		t.Errorf("lineDistance of one deleted line %q = %d, want 2", "b\n", d)
	}
	var base, near, far strings.Builder
	for i := range 30000 {
		line := fmt.Sprintf("line %d of a large entry\n", i)
		base.WriteString(line)
		if i%1000 == 0 {
			near.WriteString("changed " + line)
		} else {
			near.WriteString(line)
		}
		if i%3 == 0 {
			far.WriteString("rewritten " + line)
		} else {
			far.WriteString(line)
		}
	}
	ours, kept, lost := base.String(), near.String(), far.String()
	first := lineDistance(ours, kept)
	for range 3 {
		if d := lineDistance(ours, kept); d != first {
			t.Fatalf("lineDistance gave %d, then %d", first, d)
		}
	}
	if !closerToOurs([]byte(ours), []byte(kept), []byte(lost)) || closerToOurs([]byte(ours), []byte(lost), []byte(kept)) {
		t.Errorf("the large path does not rank the version with 30 changed lines closer than the one with 10,000")
	}
}
