//go:build unix

package lean

import (
	"os"
	"syscall"
)

// run replaces this process with the program at path (argv: args); it returns only with the error.
func run(path string, args []string) (int, error) {
	return 1, syscall.Exec(path, args, os.Environ())
}

// Exec replaces this process with the program at path (argv: args); it returns when it cannot (the
// caller then answers another way).
func Exec(path string, args []string) {
	_ = syscall.Exec(path, args, os.Environ())
}
