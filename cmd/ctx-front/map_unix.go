//go:build unix

package main

import (
	"os"
	"syscall"
)

// mapFile maps the open file f (size bytes) read-only into memory, for the lifetime of the process. The
// checkout record is never rewritten in place (atomicfile replaces it by rename, under the checkout lock
// this process holds), so the mapping keeps the bytes that were read.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}
