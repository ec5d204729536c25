//go:build !(linux && (amd64 || arm64))

package store

import (
	"io/fs"
	"os"
	"strings"
)

// lstatName is lstatIn of name in the folder r (d); buf is unused. A name holding a NUL byte is refused
// (errNameNUL).
func lstatName(r *os.Root, d *os.File, name string, _ *[]byte) (fs.FileMode, FileStat, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return 0, FileStat{}, &fs.PathError{Op: "lstat", Path: name, Err: errNameNUL}
	}
	return lstatIn(r, d, name)
}
