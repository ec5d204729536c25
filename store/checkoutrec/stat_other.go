//go:build !linux

package checkoutrec

import (
	"io/fs"
	"os"
)

// sysStat adds nothing outside Linux: size and modification time decide.
func sysStat(fs.FileInfo, *FileStat) {}

// LstatIn is an lstat of name in the folder d, opened in r (os.Root.Lstat, which never follows a link at
// the last name): the type bits of its mode (fs.ModeSymlink, fs.ModeDir, 0 for a regular file,
// fs.ModeIrregular otherwise) and its stat data as StatOf takes them.
func LstatIn(r *os.Root, _ *os.File, name string) (fs.FileMode, FileStat, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return 0, FileStat{}, err
	}
	typ := fi.Mode().Type()
	if typ&^(fs.ModeDir|fs.ModeSymlink) != 0 {
		typ = fs.ModeIrregular
	}
	return typ, *StatOf(fi), nil
}
