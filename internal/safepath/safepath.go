// Package safepath checks paths inside an os.Root for symbolic links, for the writers that never
// follow one: the checked-out tree .context/ and the agents' files the adapters write (docs/security.md).
package safepath

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// FirstLink returns the first part of the slash-separated path p (p itself or a folder on the way to it,
// as a path relative to root) that is a symbolic link, or "" when none is. A missing part ends the check,
// and so does a file where a folder should be: nothing below it exists. err is an Lstat error other than
// fs.ErrNotExist.
func FirstLink(root *os.Root, p string) (string, error) {
	names := strings.Split(p, "/")
	for i := range names {
		sub := strings.Join(names[:i+1], "/")
		fi, err := root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return sub, nil
		}
		if i < len(names)-1 && !fi.IsDir() {
			return "", nil
		}
	}
	return "", nil
}
