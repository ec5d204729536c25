package history

import "time"

// The index keeps a time (events.at, sessions.started_at and ended_at) as an integer of Unix
// milliseconds, 0 for no time (docs/history.md "Events"). A time at or before the Unix epoch is kept
// too: atMillis stores it one millisecond lower, so that the epoch itself (0 ms) is not "no time", and
// the order of times is the order of their integers (every time after the epoch is its Unix
// milliseconds, as before; every one at or before it sorts below them).

// atMillis is t as the index stores it: 0 for the zero time, t's Unix milliseconds when they are positive,
// one less when they are not.
func atMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	ms := t.UnixMilli()
	if ms <= 0 {
		ms--
	}
	return ms
}

// atTime is the time atMillis stored as ms, in UTC (the zero time for 0).
func atTime(ms int64) time.Time {
	switch {
	case ms == 0:
		return time.Time{}
	case ms < 0:
		ms++
	}
	return time.UnixMilli(ms).UTC()
}
