//go:build unix

package history

import (
	"os"
	"syscall"
)

// openNoFollow opens path read-only, failing on a final symbolic link, and without blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// ownedBySelf says whether fi (an lstat) belongs to this process's user.
func ownedBySelf(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
