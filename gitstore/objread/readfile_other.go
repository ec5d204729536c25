//go:build !unix

package objread

import (
	"io"
	"os"
)

// ReadFile is os.ReadFile outside Unix.
func ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// openRead is os.Open outside Unix.
func openRead(path string) (io.ReadCloser, error) { return os.Open(path) }
