//go:build !unix

package testenv

import "time"

// CPUTime is 0 where getrusage(2) does not exist.
func CPUTime(who int) time.Duration { return 0 }
