//go:build !unix

package main

import (
	"errors"
	"os"
)

// mapFile is not done outside Unix: the file is read.
func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.New("no mmap here") }
