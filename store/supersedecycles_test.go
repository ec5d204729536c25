package store

import (
	"fmt"
	"reflect"
	"testing"
)

// The supersede-cycle walks of the hand-edit check (supersedeCycles) and of doctor's clashes
// (supersedeCycleGroups) over one graph: two cycles, a self-link, a tail into a cycle and a link to a
// number no decision holds.
func TestSupersedeCycleWalks(t *testing.T) {
	dec := func(id, by int) Decision {
		d := Decision{ID: id, Path: "d" + string(rune('a'+id)) + ".md", Status: "accepted"}
		if by > 0 {
			d.Status, d.SupersededBy = "superseded", by
		}
		return d
	}
	// 3 -> 5 -> 4 -> 3; 7 -> 7; 1 -> 3 (a tail); 8 -> 9 (no 9); 10 -> 11 -> 10; 2 accepted.
	held := []Decision{dec(3, 5), dec(5, 4), dec(1, 3), dec(8, 9), dec(2, 0), dec(11, 10)}
	edited := []Decision{dec(4, 3), dec(7, 7), dec(1, 3), dec(8, 9), dec(10, 11)}
	got := supersedeCycles(held, edited)
	tail := ": superseded_by makes a cycle (%s): a decision cannot be replaced, directly or through others, by one it replaces (set one of them back with status accepted)"
	want := []string{
		"de.md" + fmt.Sprintf(tail, "4 -> 3 -> 5 -> 4"),
		"dh.md" + fmt.Sprintf(tail, "7 -> 7"),
		"dk.md" + fmt.Sprintf(tail, "10 -> 11 -> 10"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("supersedeCycles:\n got %q\nwant %q", got, want)
	}
	var groups [][]int
	for _, g := range supersedeCycleGroups(append(held, edited[:2]...)) {
		var ids []int
		for _, d := range g {
			ids = append(ids, d.ID)
		}
		groups = append(groups, ids)
	}
	if want := [][]int{{3, 5, 4}, {7}}; !reflect.DeepEqual(groups, want) {
		t.Errorf("supersedeCycleGroups = %v, want %v", groups, want)
	}
	// A number two decisions share is left out of the groups (a decision-number clash of its own).
	if g := supersedeCycleGroups(append(held, edited[0], dec(5, 0))); len(g) != 0 {
		t.Errorf("supersedeCycleGroups with a shared number = %v, want none", g)
	}
}
