package history

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// dirStamp identifies a directory's state for DirCache: inode, mtime, ctime and size (an entry added,
// removed or renamed changes mtime and ctime; ctime cannot be set back by a program), and the later of
// its two times.
func dirStamp(fi os.FileInfo) (string, time.Time) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("m%d s%d", fi.ModTime().UnixNano(), fi.Size()), fi.ModTime()
	}
	ctime := time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)) //nolint:unconvert // int32 on 32-bit systems
	changed := fi.ModTime()
	if ctime.After(changed) {
		changed = ctime
	}
	return fmt.Sprintf("i%d m%d c%d s%d", st.Ino, fi.ModTime().UnixNano(), ctime.UnixNano(), fi.Size()), changed
}
