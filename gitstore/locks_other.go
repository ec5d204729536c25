//go:build !unix

package gitstore

import "os"

// Without flock(2) an owner record cannot carry its liveness: none is written, and a lock left by a git
// child is reported as foreign.
func lockOwnerFile(f *os.File) bool { return false }

func ownerAlive(p string) bool { return true }

// processAlive cannot tell without kill(2): a recorded holder is not named.
func processAlive(pid int) bool { return false }
