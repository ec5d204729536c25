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

// TrackedInHead lists the files of HEAD's tree (git ls-tree -r) below dir, a slash-separated path relative
// to the work tree root (dir itself when it is a file or a symbolic link), with paths relative to that
// root. None when HEAD is unborn or the repository is bare. ErrNoGit without a git binary.
func (r *Repo) TrackedInHead(ctx context.Context, dir string) ([]string, error) {
	if r.workTree == "" {
		return []string{}, nil
	}
	if h, err := r.ResolveHEAD(ctx); err != nil || h.IsZero() {
		return []string{}, nil // unborn (or unreadable: the index check still runs)
	}
	stdout, stderr, err := gitCmd{dir: r.workTree, args: append(r.repoArgs(),
		"ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD", "--", dir)}.run(ctx)
	if errors.Is(err, ErrNoGit) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("list the files HEAD tracks in %s: %w: %s", dir, err, strings.TrimSpace(stderr))
	}
	return splitZ(stdout), nil
}

// LastCommitTouching is the abbreviated name of the last commit of HEAD's history that changed a file
// below dir (`git log -1 --format=%h HEAD -- dir`), "" when there is none. ErrNoGit without a git binary.
func (r *Repo) LastCommitTouching(ctx context.Context, dir string) (string, error) {
	if r.workTree == "" {
		return "", nil
	}
	if h, err := r.ResolveHEAD(ctx); err != nil || h.IsZero() {
		return "", nil
	}
	stdout, stderr, err := gitCmd{dir: r.workTree, args: append(r.repoArgs(),
		"log", "-1", "--format=%h", "HEAD", "--", dir)}.run(ctx)
	if err != nil {
		return "", fmt.Errorf("find the last commit of %s: %w: %s", dir, err, strings.TrimSpace(stderr))
	}
	out := strings.TrimSpace(stdout)
	for _, c := range out {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return "", nil
		}
	}
	return out, nil
}
