//go:build !linux

package atomicfile

import (
	"io/fs"
	"os"
)

// replaceByExchange renames tmp over target: no exchange of names outside Linux (WriteInDir).
func replaceByExchange(root *os.Root, _ *os.File, tmp, target string) error {
	return root.Rename(tmp, target)
}

// writeInDir is WriteInDir's NoSync write: writeWith through root, the temporary file renamed over name.
func writeInDir(root *os.Root, dir *os.File, name string, data []byte, perm fs.FileMode) error {
	return writeWith(root, "", name, data, perm, false, NoSync, func(tmp, target string) error {
		return replaceByExchange(root, dir, tmp, target)
	})
}
