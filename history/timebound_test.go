package history

import (
	"errors"
	"testing"
	"time"
)

// TestParseTimeBound: RFC 3339 times (with a lower-case t and z too, RFC 3339 section 5.6), dates as
// UTC midnight, and ErrTimeBound for anything else.
func TestParseTimeBound(t *testing.T) {
	want := time.Date(2026, 4, 29, 10, 0, 0, 0, time.UTC)
	for _, s := range []string{"2026-04-29T10:00:00Z", "2026-04-29t10:00:00z", "2026-04-29T12:00:00+02:00", "2026-04-29T10:00:00.000Z"} {
		got, err := ParseTimeBound(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
		}
	}
	if got, err := ParseTimeBound("2026-04-29"); err != nil || !got.Equal(time.Date(2026, 4, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date: %v %v", got, err)
	}
	for _, s := range []string{"", "yesterday", "2026-04-29 10:00:00", "2026-4-29", "2026-04-29T10:00:00", "2026-04-29x10:00:00z"} {
		if _, err := ParseTimeBound(s); !errors.Is(err, ErrTimeBound) {
			t.Errorf("%q: %v, want ErrTimeBound", s, err)
		}
	}
}
