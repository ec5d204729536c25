//go:build unix

package gitstore

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel starts cmd in its own process group and, when its context ends, kills the whole group:
// git and the helpers it started (git-remote-http, ssh).
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
