// Package clock is the one clock of ctx's records and commits: the time written as an entry's updated_at,
// a commit's author and committer dates and a reflog line's (docs/testing.md "One clock").
//
// It reads the environment variable CTX_TEST_NOW, which tests set so that two programs (the lean front
// and ctx-full) writing the same entry produce the same bytes: a decimal count of seconds since the Unix
// epoch. Any other value, or none, is the wall clock. It is standard library only, so the lean front
// links it (docs/architecture.md "The lean front").
package clock

import (
	"os"
	"strconv"
	"time"
)

// TestNowVar is the environment variable read by Now.
const TestNowVar = "CTX_TEST_NOW"

// Now is time.Now(), or the instant CTX_TEST_NOW names (seconds since the epoch, in the local zone)
// when it is set to a decimal number.
func Now() time.Time {
	if v := os.Getenv(TestNowVar); v != "" {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
			return time.Unix(sec, 0)
		}
	}
	return time.Now()
}
