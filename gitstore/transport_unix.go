//go:build unix

package gitstore

import (
	"os/exec"
	"syscall"
	"time"
)

// killGroupOnCancel starts cmd in its own process group and, when its context ends, ends the whole group:
// git and the helpers it started (git-remote-http, ssh). SIGTERM first, on which git removes the lock
// files it holds (a SIGKILL would leave them behind, docs/locks.md), then SIGKILL half a second later
// for whatever is still running.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		pgid := cmd.Process.Pid
		err := syscall.Kill(-pgid, syscall.SIGTERM)
		time.AfterFunc(500*time.Millisecond, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		return err
	}
}
