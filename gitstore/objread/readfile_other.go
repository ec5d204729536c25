//go:build !unix

package objread

import "os"

// ReadFile is os.ReadFile outside Unix.
func ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
