//go:build !unix

package gitstore

import "os/exec"

// killGroupOnCancel: without process groups, only git itself is killed when the context ends (the default
// of exec.CommandContext); WaitDelay bounds the wait for its helpers' pipes.
func killGroupOnCancel(cmd *exec.Cmd) {}
