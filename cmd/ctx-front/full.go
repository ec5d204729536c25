package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// fullPath is the full program beside this executable (symbolic links resolved, so that a link to ctx on
// the PATH finds ctx-full next to the real file). It refuses a ctx-full that is this very file (a copy
// of the front under that name would exec itself forever).
func fullPath() (string, error) { return besidePath(fullName) }

// besidePath is the program name in the folder of this executable (symbolic links resolved), refusing
// this very file.
func besidePath(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
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
