package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// TrackedFiles lists the files of the work tree that git tracks (`git ls-files --cached`: the index),
// slash-separated and relative to the work tree root. A bare repository has none. ErrNoGit without a git
// binary. The adapters use it so that a refresh does not change a file git tracks unless the user
// allowed it (docs/adapters.md "Refresh").
func (r *Repo) TrackedFiles(ctx context.Context) ([]string, error) {
	if r.workTree == "" {
		return []string{}, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+r.gitDir, "--work-tree="+r.workTree,
		"ls-files", "-z", "--cached", "--full-name", "--", ".")
	cmd.Env = cleanGitEnv(os.Environ())
	cmd.Dir = r.workTree
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("list the files git tracks: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	out := []string{}
	for _, f := range strings.Split(stdout.String(), "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}
