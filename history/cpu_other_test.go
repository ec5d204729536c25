//go:build !unix

package history

import "time"

// processCPU is zero where getrusage does not exist: the benchmarks report no CPU time there.
func processCPU() time.Duration { return 0 }
