//go:build !linux

package history

import (
	"fmt"
	"os"
	"time"
)

// dirStamp identifies a directory's state for DirCache where ctx reads no inode and ctime (outside
// Linux): its mtime and size, and its mtime.
func dirStamp(fi os.FileInfo) (string, time.Time) {
	return fmt.Sprintf("m%d s%d", fi.ModTime().UnixNano(), fi.Size()), fi.ModTime()
}
