package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNoGit is returned by WorkTreeFiles when no git binary is installed.
var ErrNoGit = errors.New("git is not installed")

// WorkTreeFiles lists the files of the work tree that git does not ignore, as C git decides it (`git
// ls-files --cached --others --exclude-standard`: tracked files, and untracked ones that no .gitignore,
// .git/info/exclude or core.excludesFile excludes), slash-separated and relative to the work tree root.
// A bare repository has none. ErrNoGit without a git binary.
func (r *Repo) WorkTreeFiles(ctx context.Context) ([]string, error) {
	if r.workTree == "" {
		return []string{}, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+r.gitDir, "--work-tree="+r.workTree,
		"ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name", "--", ".")
	cmd.Env = cleanGitEnv(os.Environ())
	cmd.Dir = r.workTree
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("list the work tree's files: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	out := []string{}
	for _, f := range strings.Split(stdout.String(), "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}
