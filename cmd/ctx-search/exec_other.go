//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// runFull runs the full program with these arguments, streams and environment and returns its exit
// code (no execve on this platform).
func runFull(args []string) int {
	path, err := fullPath()
	if err == nil {
		cmd := exec.Command(path, args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		err = cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err == nil {
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "ctx: cannot run the full ctx program: %v (install ctx, %s and ctx-search side by side with make install)\n", err, fullName)
	return 1
}
