//go:build unix

package gitstore

import (
	"os"
	"syscall"
)

// lockOwnerFile takes an exclusive flock on an owner record. The flock belongs to the open file
// description, so a child that inherits the descriptor keeps the record live after ctx itself is gone.
func lockOwnerFile(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// ownerAlive reports whether some process still holds the flock of the owner record at p.
func ownerAlive(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// processAlive reports whether a process with this pid exists (kill(2) with signal 0; EPERM: it exists,
// owned by another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
