package gitstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	git "github.com/go-git/go-git/v5"
)

// checkDirs compares Open's paths with what the git CLI reports for dir.
func checkDirs(t *testing.T, r *gitstore.Repo, gitDir, commonDir, workTree string) {
	t.Helper()
	if got := realpath(t, r.GitDir()); got != realpath(t, gitDir) {
		t.Errorf("GitDir = %s, want %s", got, gitDir)
	}
	if got := realpath(t, r.CommonDir()); got != realpath(t, commonDir) {
		t.Errorf("CommonDir = %s, want %s", got, commonDir)
	}
	if workTree == "" {
		if r.WorkTree() != "" || !r.Bare() {
			t.Errorf("WorkTree = %q, want bare", r.WorkTree())
		}
	} else if got := realpath(t, r.WorkTree()); got != realpath(t, workTree) {
		t.Errorf("WorkTree = %s, want %s", got, workTree)
	}
}

// gitDirs is what the git CLI says about the repository at dir.
func gitDirs(t *testing.T, dir string) (gitDir, commonDir string) {
	t.Helper()
	gitDir = testenv.Git(t, dir, "rev-parse", "--absolute-git-dir")
	commonDir = testenv.Git(t, dir, "rev-parse", "--git-common-dir")
	if !filepath.IsAbs(commonDir) {
		commonDir = filepath.Join(dir, commonDir)
	}
	return gitDir, commonDir
}

// writeAndCheck makes a ctx commit through r and checks that the git CLI in dir sees it and that fsck is clean.
func writeAndCheck(t *testing.T, r *gitstore.Repo, dir string) {
	t.Helper()
	res := set(t, r, "refs/heads/ctx", "ctx: set knowledge a", map[string]string{"knowledge/a.md": "hello\n"})
	if !res.Committed {
		t.Fatal("no commit")
	}
	if got := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"); got != res.New.String() {
		t.Fatalf("git rev-parse ctx = %s, want %s", got, res.New)
	}
	if got := testenv.Git(t, dir, "show", "refs/heads/ctx:knowledge/a.md"); got != "hello" {
		t.Fatalf("git show = %q", got)
	}
	fsck(t, dir)
}

func TestOpenNormal(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	checkDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), dir)
	head, err := r.ResolveHEAD(bg)
	if err != nil || head.String() != testenv.Git(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("ResolveHEAD = %s, %v", head, err)
	}
	if r.CtxDir() != filepath.Join(r.CommonDir(), "ctx") {
		t.Errorf("CtxDir = %s", r.CtxDir())
	}
	writeAndCheck(t, r, dir)
}

func TestOpenNoCommits(t *testing.T) {
	dir := testenv.EmptyRepo(t)
	r := open(t, dir)
	checkDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), dir)
	head, err := r.ResolveHEAD(bg)
	if err != nil || !head.IsZero() {
		t.Fatalf("ResolveHEAD on an unborn branch = %s, %v; want zero", head, err)
	}
	snap := testenv.Take(t, dir)
	writeAndCheck(t, r, dir)
	snap.Same(t, dir)
	if _, err := testenv.GitErr(dir, "rev-parse", "-q", "--verify", "HEAD"); err == nil {
		t.Error("HEAD became born")
	}
}

func TestOpenSubdirectory(t *testing.T) {
	dir := testenv.NewRepo(t)
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o777); err != nil {
		t.Fatal(err)
	}
	r := open(t, sub)
	checkDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), dir)
}

func TestOpenLinkedWorktree(t *testing.T) {
	dir := testenv.NewRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, dir, "worktree", "add", "-q", "-b", "feature", wt)
	r := open(t, wt)
	gd, cd := gitDirs(t, wt)
	checkDirs(t, r, gd, cd, wt)
	if realpath(t, r.GitDir()) == realpath(t, r.CommonDir()) {
		t.Fatal("a linked worktree's GitDir must differ from its CommonDir")
	}
	if realpath(t, r.CommonDir()) != realpath(t, filepath.Join(dir, ".git")) {
		t.Fatalf("CommonDir = %s, want the main repo's .git", r.CommonDir())
	}
	head, err := r.ResolveHEAD(bg)
	if err != nil || head.String() != testenv.Git(t, wt, "rev-parse", "HEAD") {
		t.Fatalf("ResolveHEAD = %s, %v", head, err)
	}
	snapMain, snapWT := testenv.Take(t, dir), testenv.Take(t, wt)
	writeAndCheck(t, r, wt)
	// The ref is shared: the main worktree sees it, and the ctx lock lives in the common dir.
	if testenv.Git(t, dir, "rev-parse", "refs/heads/ctx") != testenv.Git(t, wt, "rev-parse", "refs/heads/ctx") {
		t.Fatal("worktrees disagree on refs/heads/ctx")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "ctx", "lock")); err != nil {
		t.Fatalf("ctx lock not in the common dir: %v", err)
	}
	snapMain.Same(t, dir)
	snapWT.Same(t, wt)
	// Opened from the main worktree, the same ref is read.
	r2 := open(t, dir)
	h1, _ := r.Resolve(bg, "refs/heads/ctx")
	h2, _ := r2.Resolve(bg, "refs/heads/ctx")
	if h1 != h2 || h1.IsZero() {
		t.Fatalf("Resolve from worktree %s, from main %s", h1, h2)
	}
}

func TestOpenWorktreeConfigExtension(t *testing.T) {
	dir := testenv.NewRepo(t)
	testenv.Git(t, dir, "config", "core.repositoryformatversion", "1")
	testenv.Git(t, dir, "config", "extensions.worktreeConfig", "true")
	testenv.Git(t, dir, "config", "--worktree", "user.name", "Worktree Person")
	if _, err := git.PlainOpen(dir); err == nil {
		t.Log("note: go-git opened a worktreeConfig repository (it used to refuse)")
	} else {
		t.Logf("go-git PlainOpen refuses, as expected: %v", err)
	}
	r := open(t, dir)
	checkDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), dir)
	writeAndCheck(t, r, dir)
	// And from a linked worktree of that repository.
	wt := filepath.Join(t.TempDir(), "wt2")
	testenv.Git(t, dir, "worktree", "add", "-q", "-b", "other", wt)
	rw := open(t, wt)
	res := set(t, rw, "refs/heads/ctx", "second", map[string]string{"knowledge/b.md": "b\n"})
	if got := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"); got != res.New.String() {
		t.Fatalf("rev-parse = %s, want %s", got, res.New)
	}
	fsck(t, dir)
}

func TestOpenBare(t *testing.T) {
	dir := testenv.BareRemote(t)
	r := open(t, dir)
	checkDirs(t, r, dir, dir, "")
	writeAndCheck(t, r, dir)
}

func TestOpenGitDirEnv(t *testing.T) {
	dir := testenv.NewRepo(t)
	elsewhere := t.TempDir()
	t.Setenv("GIT_DIR", filepath.Join(dir, ".git"))
	t.Setenv("GIT_WORK_TREE", dir)
	r := open(t, elsewhere)
	checkDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), dir)

	// GIT_DIR alone: the current directory (the path given) is the work tree, as in git.
	t.Setenv("GIT_WORK_TREE", "")
	os.Unsetenv("GIT_WORK_TREE")
	r = open(t, elsewhere)
	checkDirs(t, r, filepath.Join(dir, ".git"), filepath.Join(dir, ".git"), elsewhere)

	// GIT_DIR naming something that is not a repository.
	t.Setenv("GIT_DIR", elsewhere)
	if _, err := gitstore.Open(bg, dir); !errors.Is(err, gitstore.ErrNotRepository) {
		t.Fatalf("Open with a bad GIT_DIR: %v, want ErrNotRepository", err)
	}
}

func TestOpenNotARepository(t *testing.T) {
	dir := t.TempDir()
	if _, err := testenv.GitErr(dir, "rev-parse", "--git-dir"); err == nil {
		t.Skip("the temp dir is inside a git repository")
	}
	_, err := gitstore.Open(bg, dir)
	if !errors.Is(err, gitstore.ErrNotRepository) {
		t.Fatalf("Open(%s) = %v, want ErrNotRepository", dir, err)
	}
	// A .git file that is not a gitfile is not a repository either.
	writeFile(t, filepath.Join(dir, "x", ".git"), "garbage\n")
	if _, err := gitstore.Open(bg, filepath.Join(dir, "x")); !errors.Is(err, gitstore.ErrNotRepository) {
		t.Fatalf("Open with a bad .git file = %v, want ErrNotRepository", err)
	}
}

// TestOpenRefusesSHA256: a repository made with `git init --object-format=sha256` is refused before
// anything is written (ctx wrote SHA-1 objects and a 40-hex ref there, which git reads as broken and its
// gc fails on: second tester); a sha1 one named explicitly opens.
func TestOpenRefusesSHA256(t *testing.T) {
	for _, format := range []string{"sha256", "sha1"} {
		dir := t.TempDir()
		testenv.Git(t, dir, "init", "-q", "--object-format="+format)
		r, err := gitstore.Open(bg, dir)
		if format == "sha1" {
			if err != nil {
				t.Fatalf("sha1: %v", err)
			}
			r.Close()
			continue
		}
		if !errors.Is(err, gitstore.ErrObjectFormat) {
			t.Fatalf("sha256: Open = %v, want ErrObjectFormat", err)
		}
		if out := testenv.Git(t, dir, "for-each-ref"); out != "" {
			t.Errorf("refs written: %s", out)
		}
	}
}
