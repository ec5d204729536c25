//go:build unix

package main

import (
	"os"
	"syscall"
)

// flock takes an exclusive flock of f without waiting (gofrs/flock's TryLock, which gitstore's checkout
// lock uses).
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}
