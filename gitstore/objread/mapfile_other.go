//go:build !unix

package objread

import "os"

// mapFile reads the file at path into memory (no mmap on this platform).
func mapFile(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
