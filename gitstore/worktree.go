package gitstore

import (
	"context"
	"errors"
	"fmt"
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
	stdout, stderr, err := gitCmd{dir: r.workTree, args: append(r.repoArgs(),
		"ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name", "--", ".")}.run(ctx)
	if errors.Is(err, ErrNoGit) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("list the work tree's files: %w: %s", err, strings.TrimSpace(stderr))
	}
	return splitZ(stdout), nil
}

// TrackedFiles lists the files of the index (git ls-files) below dir, a slash-separated folder relative to
// the work tree root, with paths relative to that root. A bare repository has none. ErrNoGit without a
// git binary.
func (r *Repo) TrackedFiles(ctx context.Context, dir string) ([]string, error) {
	if r.workTree == "" {
		return []string{}, nil
	}
	stdout, stderr, err := gitCmd{dir: r.workTree, args: append(r.repoArgs(), "ls-files", "-z", "--full-name", "--", dir)}.run(ctx)
	if errors.Is(err, ErrNoGit) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("list the files git tracks in %s: %w: %s", dir, err, strings.TrimSpace(stderr))
	}
	return splitZ(stdout), nil
}

// splitZ splits git's -z output into its names.
func splitZ(stdout string) []string {
	out := []string{}
	for _, f := range strings.Split(stdout, "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
