//go:build !unix

package history

import (
	"fmt"
	"os"
	"time"
)

// openNoFollow opens path read-only; where O_NOFOLLOW does not exist, openRegular's Lstat comparison
// refuses a symbolic link instead.
func openNoFollow(path string) (*os.File, error) {
	return os.Open(path)
}

// dirStamp identifies a directory's state for DirCache: its mtime and size, and its mtime.
func dirStamp(fi os.FileInfo) (string, time.Time) {
	return fmt.Sprintf("m%d s%d", fi.ModTime().UnixNano(), fi.Size()), fi.ModTime()
}
