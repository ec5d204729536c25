//go:build !unix

package history

import "os"

// openNoFollow opens path read-only; where O_NOFOLLOW does not exist, openRegular's Lstat comparison
// refuses a symbolic link instead.
func openNoFollow(path string) (*os.File, error) {
	return os.Open(path)
}

// ownedBySelf says whether fi belongs to this process's user: where files have no owner ctx reads, no.
func ownedBySelf(os.FileInfo) bool { return false }
