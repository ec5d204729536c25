//go:build !unix

package history

import "os"

// openNoFollow opens path read-only; where O_NOFOLLOW does not exist, openRegular's Lstat comparison
// refuses a symbolic link instead.
func openNoFollow(path string) (*os.File, error) {
	return os.Open(path)
}
