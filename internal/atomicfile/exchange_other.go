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

// tempInDir makes, writes and closes writeInDir's temporary file through root and returns its name; on
// error nothing is left.
func tempInDir(root *os.Root, _ *os.File, name string, data []byte, perm fs.FileMode) (string, error) {
	return writeTemp(root, "", name, data, perm, false, NoSync)
}

// removeInDir removes the temporary file tmp of root's folder.
func removeInDir(root *os.Root, _ *os.File, tmp string) {
	_ = root.Remove(tmp)
}
