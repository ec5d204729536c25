//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// runFull runs the full program with this process's arguments, streams and environment and returns its
// exit code (no execve on this platform).
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
	fmt.Fprintf(os.Stderr, "ctx: cannot run the full ctx program: %v (ctx is two programs, ctx and %s side by side: install both with make install; docs/architecture.md \"The lean front\")\n", err, fullName)
	return 1
}

// execSearch does nothing on this platform (no execve): ctx-full answers the search.
func execSearch(string, []string) {}
