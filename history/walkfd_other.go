//go:build !linux

package history

import (
	"os"
	"time"
)

// dirFD is a directory the walk is in; outside Linux its entries are lstat'ed by their whole paths.
type dirFD struct{}

// walkStat is an entry's lstat as the walk reads it.
type walkStat struct {
	size, mtime  int64 // mtime in Unix nanoseconds
	regular, dir bool
	fi           os.FileInfo
}

func openWalkRoot(string) (dirFD, error) { return dirFD{}, nil }

func (d dirFD) sub(_, path string) (dirFD, error) { return dirFD{}, nil }

func (d dirFD) close() {}

// lstat is lstat of the entry name, whose whole path is path.
func (d dirFD) lstat(_, path string) (walkStat, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return walkStat{}, false
	}
	return walkStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), regular: fi.Mode().IsRegular(), dir: fi.IsDir(), fi: fi}, true
}

// file is the fileStat of a source the walk found (ok: its lstat succeeded).
func (s walkStat) file(ok bool) fileStat {
	return fileStat{size: s.size, mtime: s.mtime, regular: s.regular, ok: ok, known: true}
}

// stamp is dirStamp's answer for a directory whose lstat is s.
func (s walkStat) stamp() (string, time.Time) { return dirStamp(s.fi) }
