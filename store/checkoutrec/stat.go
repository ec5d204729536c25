package checkoutrec

import (
	"io/fs"
)

// FileStat is the stat data of a file of the checked-out tree that tell a change without reading it, as
// git's index keeps them (gitformat-index(5)): size, modification and change times in nanoseconds since
// the Unix epoch, and inode. Where the system gives no change time or inode, those are 0.
type FileStat struct {
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
}

// StatOf takes the stat data of fi (from os.Stat or os.Lstat).
func StatOf(fi fs.FileInfo) *FileStat {
	st := &FileStat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	sysStat(fi, st)
	return st
}
