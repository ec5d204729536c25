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
	return r.lsTree(ctx, "HEAD", "HEAD", dir)
}

// lsTree lists the files of rev's tree below dir (git ls-tree -r -z --name-only --full-tree), paths relative
// to the work tree's root; what names rev in an error.
func (r *Repo) lsTree(ctx context.Context, rev, what, dir string) ([]string, error) {
	stdout, stderr, err := gitCmd{dir: r.workTree, args: append(r.repoArgs(),
		"ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, "--", dir)}.run(ctx)
	if errors.Is(err, ErrNoGit) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("list the files %s tracks in %s: %w: %s", what, dir, err, strings.TrimSpace(stderr))
	}
	return splitZ(stdout), nil
}

// TrackedInCommit lists the files of commit's tree (git ls-tree -r) below dir, as TrackedInHead does for
// HEAD: paths relative to the work tree's root. None for the zero hash or a bare repository. ErrNoGit
// without a git binary; an error when git cannot read the commit.
func (r *Repo) TrackedInCommit(ctx context.Context, commit Hash, dir string) ([]string, error) {
	if r.workTree == "" || commit.IsZero() {
		return []string{}, nil
	}
	return r.lsTree(ctx, commit.String(), commit.String()[:12], dir)
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

// RefsTracking finds, for each of paths (slash paths relative to dir, a folder at the work tree's root such
// as ".context"), a branch of the repository whose tip tracks dir/path: the local branches (refs/heads/)
// first, then the remote-tracking ones (refs/remotes/), each in name order. It returns the full ref name
// by path, for the paths some branch tracks. Two git processes (for-each-ref, then cat-file --batch-check
// for the tips that have dir at all) and a third only when some tip has dir. ErrNoGit without a git
// binary.
func (r *Repo) RefsTracking(ctx context.Context, dir string, paths []string) (map[string]string, error) {
	out := map[string]string{}
	if r.workTree == "" || len(paths) == 0 || dir == "" || strings.ContainsAny(dir, "\n\x00") {
		return out, nil
	}
	refs, err := r.Git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/remotes/")
	if err != nil {
		return nil, err
	}
	type tip struct{ oid, ref string }
	var tips []tip
	for _, l := range strings.Split(refs, "\n") {
		oid, ref, ok := strings.Cut(l, " ")
		if ok && len(oid) >= 40 && ref != "" {
			tips = append(tips, tip{oid, ref})
		}
	}
	if len(tips) == 0 {
		return out, nil
	}
	check := func(lines []string) ([]bool, error) {
		stdout, stderr, err := gitCmd{dir: r.workTree, stdin: strings.NewReader(strings.Join(lines, "\n") + "\n"),
			args: append(r.repoArgs(), "cat-file", "--batch-check=%(objecttype)")}.run(ctx)
		if err != nil {
			return nil, fmt.Errorf("git cat-file --batch-check: %w: %s", err, strings.TrimSpace(stderr))
		}
		got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if len(got) != len(lines) {
			return nil, fmt.Errorf("git cat-file --batch-check: %d answers to %d questions", len(got), len(lines))
		}
		has := make([]bool, len(got))
		for i, g := range got {
			has[i] = g == "tree" || g == "blob"
		}
		return has, nil
	}
	seen := map[string]bool{}
	var lines []string
	var with []tip
	for _, t := range tips {
		if !seen[t.oid] {
			seen[t.oid] = true
			lines = append(lines, t.oid+":"+dir)
			with = append(with, t)
		}
	}
	has, err := check(lines)
	if err != nil {
		return nil, err
	}
	var hits []tip
	for i, t := range with {
		if has[i] {
			hits = append(hits, t)
		}
	}
	if len(hits) == 0 {
		return out, nil
	}
	// The tips that have dir, each once (the first ref naming it), with every ref of that tip.
	byOID := map[string][]string{}
	for _, t := range tips {
		byOID[t.oid] = append(byOID[t.oid], t.ref)
	}
	lines, ask := lines[:0], [][2]string{}
	for _, t := range hits {
		for _, p := range paths {
			if p == "" || strings.ContainsAny(p, "\n\x00") {
				continue
			}
			lines = append(lines, t.oid+":"+dir+"/"+p)
			ask = append(ask, [2]string{t.oid, p})
		}
	}
	if len(lines) == 0 {
		return out, nil
	}
	if has, err = check(lines); err != nil {
		return nil, err
	}
	for i, q := range ask {
		if !has[i] {
			continue
		}
		for _, ref := range byOID[q[0]] {
			if cur, ok := out[q[1]]; !ok || refBefore(ref, cur) {
				out[q[1]] = ref
			}
		}
	}
	return out, nil
}

// refBefore orders refs for RefsTracking: local branches before remote-tracking ones, then by name.
func refBefore(a, b string) bool {
	la, lb := strings.HasPrefix(a, "refs/heads/"), strings.HasPrefix(b, "refs/heads/")
	if la != lb {
		return la
	}
	return a < b
}

// UntrackedFiles lists what git sees as untracked below dir, a slash-separated folder relative to the work
// tree root: the files that no .gitignore, info/exclude or core.excludesFile excludes and the index does
// not hold (`git ls-files --others --exclude-standard`), paths relative to the root. What `git add -A` would stage there. A bare
// repository has none. ErrNoGit without a git binary.
func (r *Repo) UntrackedFiles(ctx context.Context, dir string) ([]string, error) {
	if r.workTree == "" {
		return []string{}, nil
	}
	stdout, stderr, err := gitCmd{dir: r.workTree, args: append(r.repoArgs(),
		"ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", dir)}.run(ctx)
	if errors.Is(err, ErrNoGit) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("list the files git does not ignore in %s: %w: %s", dir, err, strings.TrimSpace(stderr))
	}
	return splitZ(stdout), nil
}
