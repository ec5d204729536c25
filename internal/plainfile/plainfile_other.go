//go:build !unix

package plainfile

import (
	"io/fs"
	"os"
)

// OpenFile is os.OpenFile outside Unix.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// WriteFile is os.WriteFile outside Unix.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	return os.WriteFile(name, data, perm)
}

// ReadFile is os.ReadFile outside Unix.
func ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// Rename is os.Rename outside Unix.
func Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
