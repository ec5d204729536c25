//go:build !unix

package objread

import "os"

// MapPacks says whether packs are mapped whole: not here, where mapFile reads the whole file.
var MapPacks = false

// mapFile reads the file at path into memory (no mmap on this platform).
func mapFile(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
