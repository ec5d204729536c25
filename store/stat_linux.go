package store

import (
	"io/fs"
	"syscall"
)

// sysStat adds the change time and inode of fi to st.
func sysStat(fi fs.FileInfo, st *FileStat) {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Ctime = s.Ctim.Nano()
		st.Ino = s.Ino
	}
}
