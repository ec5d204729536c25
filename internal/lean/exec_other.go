//go:build !unix

package lean

import (
	"errors"
	"os"
	"os/exec"
)

// run runs the program at path with args[1:], this process's streams and environment, and returns its
// exit code (no execve on this platform).
func run(path string, args []string) (int, error) {
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// Exec does nothing on this platform (no execve): the caller answers another way.
func Exec(string, []string) {}
