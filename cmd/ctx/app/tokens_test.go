package app

import (
	"strings"
	"testing"
	"time"
)

// TestParseLifetime: --expires takes days or a Go duration, positive and at most 100 years; a longer one
// is refused as too long. Found by a tester: 213504d wrapped around int64 nanoseconds into a token that
// expired in 25 minutes, 99999999d into one of 2246, and 106752d was "must be positive".
func TestParseLifetime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute, "36500d": 36500 * 24 * time.Hour,
	} {
		if got, err := parseLifetime(in); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"36501d": "too long", "106752d": "too long", "213504d": "too long", "99999999d": "too long",
		"99999999999999999999d": "too long", "876001h": "too long",
		"0d": "must be positive", "-5d": "must be positive", "-99999999999999999999d": "not a number", "0s": "must be positive",
		"soon": "not a lifetime", "d": "not a number",
	} {
		if got, err := parseLifetime(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v %v, want an error saying %q", in, got, err, want)
		}
	}
}
