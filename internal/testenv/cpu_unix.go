//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the user + system CPU time of this process (syscall.RUSAGE_SELF) or of its waited-for
// children (syscall.RUSAGE_CHILDREN), as getrusage(2) reports it: what benchmarks report beside wall time
// on a shared machine.
func CPUTime(who int) time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
