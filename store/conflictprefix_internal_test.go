package store

import (
	"errors"
	"strings"
	"testing"
)

// TestConflictByPrefix: an id prefix two open conflicts share is an error listing both (nothing picked);
// one that only one has picks it.
func TestConflictByPrefix(t *testing.T) {
	recs := []ConflictRecord{{ID: "59ffa1b2-0000"}, {ID: "59ffc3d4-0000"}, {ID: "7abc0000-0000"}}
	if _, err := pickConflict(recs, "59ff"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "59ffa1b2-0000, 59ffc3d4-0000") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if r, err := pickConflict(recs, "59ffc"); err != nil || r.ID != "59ffc3d4-0000" {
		t.Errorf("unique prefix: %+v %v", r, err)
	}
	var nf *NotFoundError
	if _, err := pickConflict(recs, "7ab"); !errors.As(err, &nf) {
		t.Errorf("3 digits: %v", err)
	}
}
