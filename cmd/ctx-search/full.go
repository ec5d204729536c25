package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// fullPath is the full program beside this executable (symbolic links resolved), never this very file.
func fullPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	name := fullName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	path := filepath.Join(filepath.Dir(self), name)
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if me, err := os.Stat(self); err == nil && os.SameFile(fi, me) {
		return "", errors.New(path + " is this program, not the full one")
	}
	return path, nil
}
