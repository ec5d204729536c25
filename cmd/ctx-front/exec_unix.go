//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// runFull replaces this process with the full program (execve: same pid, arguments, environment and
// descriptors, so signals, exit codes and git's hook timeouts see one process). It returns only when
// the full program cannot be run.
func runFull(args []string) int {
	path, err := fullPath()
	if err == nil {
		err = syscall.Exec(path, args, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "ctx: cannot run the full ctx program: %v (ctx is two programs, ctx and %s side by side: install both with make install; docs/architecture.md \"The lean front\")\n", err, fullName)
	return 1
}

// execSearch replaces this process with the search program (argv: args); it returns when it cannot.
func execSearch(path string, args []string) {
	_ = syscall.Exec(path, args, os.Environ())
}
