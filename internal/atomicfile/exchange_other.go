//go:build !linux

package atomicfile

import "os"

// replaceByExchange renames tmp over target: no exchange of names outside Linux (WriteInDir).
func replaceByExchange(root *os.Root, _ *os.File, tmp, target string) error {
	return root.Rename(tmp, target)
}
