//go:build !unix

package objread

import (
	"errors"
	"os"
)

// MapPacks says whether packs are mapped whole: not here, where mapFile reads the whole file.
var MapPacks = false

// mapFile reads the file at path into memory (no mmap on this platform).
func mapFile(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}

// mapOpen is never called here (MapPacks is false).
func mapOpen(f *os.File, _ int64) (data []byte, unmap func(), err error) {
	return nil, nil, errors.New("map " + f.Name() + ": not supported")
}
