package clock

import (
	"testing"
	"time"
)

func TestNowOverride(t *testing.T) {
	t.Setenv(TestNowVar, "1700000000")
	if got := Now(); !got.Equal(time.Unix(1700000000, 0)) || got.Location() != time.Local {
		t.Fatalf("Now() = %v, want 1700000000 in the local zone", got)
	}
	t.Setenv(TestNowVar, "not a number")
	if d := time.Since(Now()); d < 0 || d > time.Hour {
		t.Fatalf("Now() with a bad override = %v away from the wall clock", d)
	}
}
