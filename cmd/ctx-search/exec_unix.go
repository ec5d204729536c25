//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// runFull replaces this process with the full program (execve: same pid, arguments, environment and
// descriptors). It returns only when the full program cannot be run.
func runFull(args []string) int {
	path, err := fullPath()
	if err == nil {
		err = syscall.Exec(path, args, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "ctx: cannot run the full ctx program: %v (ctx is programs side by side, ctx, %s and ctx-search: install them with make install; docs/architecture.md \"The lean front\")\n", err, fullName)
	return 1
}
