package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// Repository layouts a user's git works in (docs/architecture.md): linked worktrees, bare repositories,
// GIT_DIR/GIT_WORK_TREE, a repository moved after init, submodules.

// TestLayoutLinkedWorktrees: each worktree has its own .context/; the context branch and the lock are
// shared through the common dir, so a write in one shows in the other's .context/ after its next ctx
// write or checkout.
func TestLayoutLinkedWorktrees(t *testing.T) {
	main := testenv.NewRepo(t)
	mustCtx(t, main, nil, 0, "init")
	mustCtx(t, main, nil, 0, "knowledge", "set", "shared", "from main")
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, main, "worktree", "add", "-q", "-b", "feature", wt) // post-checkout fills wt/.context
	if got, ok := readCtxFile(wt, "knowledge/shared.md"); !ok || !strings.Contains(got, "from main") {
		t.Fatalf("the new worktree's .context/ lacks the entry: %q", got)
	}
	if st := testenv.Git(t, wt, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("the worktree's .context/ shows in git status: %s", st)
	}

	// A write in wt: main's .context/ follows after main's next ctx write...
	mustCtx(t, wt, nil, 0, "knowledge", "set", "from-wt", "written in the worktree")
	if got := mustCtx(t, main, nil, 0, "knowledge", "get", "from-wt").stdout; got != "written in the worktree\n" {
		t.Fatalf("main reads %q", got)
	}
	mustCtx(t, main, nil, 0, "convention", "set", "style", "gofmt")
	if _, ok := readCtxFile(main, "knowledge/from-wt.md"); !ok {
		t.Errorf("main's .context/ lacks wt's write after main's next ctx write")
	}
	// ...and wt's after its next checkout.
	if _, ok := readCtxFile(wt, "conventions/style.md"); ok {
		t.Fatalf("wt's .context/ changed without a checkout")
	}
	testenv.Git(t, wt, "checkout", "-q", "-b", "feature-2")
	if _, ok := readCtxFile(wt, "conventions/style.md"); !ok {
		t.Errorf("wt's .context/ lacks main's write after git checkout")
	}
	// One branch, one lock: the shared state lives in the common dir only.
	common := filepath.Join(main, ".git")
	if _, err := os.Stat(filepath.Join(common, "ctx", "config.json")); err != nil {
		t.Errorf("no ctx state in the common dir: %v", err)
	}
	wtGitDir := testenv.Git(t, wt, "rev-parse", "--absolute-git-dir")
	if _, err := os.Stat(filepath.Join(wtGitDir, "ctx", "lock")); err == nil {
		t.Errorf("the worktree has its own lock %s", filepath.Join(wtGitDir, "ctx", "lock"))
	}
	if _, err := os.Stat(filepath.Join(wtGitDir, "refs", "heads", "ctx")); err == nil {
		t.Errorf("the worktree has its own context branch")
	}
	if n := testenv.Git(t, main, "rev-list", "--count", "ctx"); n != "4" {
		t.Errorf("ctx has %s commits, want 4", n)
	}
}

// TestLayoutBare: ctx init in a bare repository works (no checked-out tree, no hooks), and reads come from
// the ref; a bare clone of a repository with a context branch reads it too.
func TestLayoutBare(t *testing.T) {
	bare := testenv.BareRemote(t)
	out := mustCtx(t, bare, nil, 0, "init").stdout
	if strings.Contains(out, "checked-out tree") {
		t.Errorf("bare init mentions a checked-out tree:\n%s", out)
	}
	mustCtx(t, bare, nil, 0, "knowledge", "set", "arch", "from the bare repo")
	if got := mustCtx(t, bare, nil, 0, "knowledge", "get", "arch").stdout; got != "from the bare repo\n" {
		t.Errorf("bare get: %q", got)
	}
	if _, err := os.Stat(filepath.Join(bare, ".context")); err == nil {
		t.Errorf("bare repository got a .context/")
	}
	for _, h := range []string{"post-checkout", "post-merge"} {
		if _, err := os.Stat(filepath.Join(bare, "hooks", h)); err == nil {
			t.Errorf("bare repository got hook %s", h)
		}
	}
	mustCtx(t, bare, nil, 0, "status")

	// A bare clone of a work repository: the ref is there, the tree is not.
	src := testenv.NewRepo(t)
	mustCtx(t, src, nil, 0, "init", "--no-hooks")
	mustCtx(t, src, nil, 0, "decision", "add", "Use Go", "--context", "c", "--decision", "d", "--consequences", "q")
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	testenv.Git(t, "", "clone", "-q", "--bare", src, mirror)
	if got := mustCtx(t, mirror, nil, 0, "decision", "get", "Use Go").stdout; !strings.Contains(got, "Use Go") {
		t.Errorf("bare clone reads %q", got)
	}
	// From a subdirectory of the bare repository too.
	mustCtx(t, filepath.Join(mirror, "refs"), nil, 0, "decision", "get", "Use Go")
}

// TestLayoutGitDirEnv: GIT_DIR and GIT_WORK_TREE set, ctx run from elsewhere, uses that repository.
func TestLayoutGitDirEnv(t *testing.T) {
	repo := testenv.NewRepo(t)
	elsewhere := t.TempDir()
	env := []string{"GIT_DIR=" + filepath.Join(repo, ".git"), "GIT_WORK_TREE=" + repo}
	mustCtx(t, elsewhere, env, 0, "init", "--no-hooks")
	mustCtx(t, elsewhere, env, 0, "knowledge", "set", "k", "via GIT_DIR")
	if got := mustCtx(t, repo, nil, 0, "knowledge", "get", "k").stdout; got != "via GIT_DIR\n" {
		t.Errorf("read back in the repo: %q", got)
	}
	if _, ok := readCtxFile(repo, "knowledge/k.md"); !ok {
		t.Errorf("the checked-out tree is not in GIT_WORK_TREE")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("ctx wrote into the current directory: %v", entries)
	}
	if st := testenv.Git(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("git status: %s", st)
	}
	// GIT_DIR alone, from inside the work tree.
	mustCtx(t, repo, []string{"GIT_DIR=" + filepath.Join(repo, ".git")}, 0, "knowledge", "get", "k")
}

// TestLayoutMovedRepository: mv of the repository after init; ctx and its hooks keep working.
func TestLayoutMovedRepository(t *testing.T) {
	repo := testenv.NewRepo(t)
	mustCtx(t, repo, nil, 0, "init")
	mustCtx(t, repo, nil, 0, "knowledge", "set", "k", "before the move")
	testenv.Git(t, repo, "branch", "feature")
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(repo, moved); err != nil {
		t.Fatal(err)
	}
	mustCtx(t, moved, nil, 0, "knowledge", "set", "k2", "after the move")
	if got := mustCtx(t, moved, nil, 0, "knowledge", "get", "k").stdout; got != "before the move\n" {
		t.Errorf("after mv: %q", got)
	}
	if _, ok := readCtxFile(moved, "knowledge/k2.md"); !ok {
		t.Errorf("the checked-out tree did not follow the move")
	}
	st := mustCtx(t, moved, nil, 0, "status").stdout
	if !strings.Contains(st, "clean") || !strings.Contains(st, moved) {
		t.Errorf("status after the move:\n%s", st)
	}
	testenv.Git(t, moved, "update-ref", "refs/heads/ctx", "ctx~1")
	testenv.Git(t, moved, "checkout", "-q", "feature")
	if _, ok := readCtxFile(moved, "knowledge/k2.md"); ok {
		t.Errorf("the post-checkout hook did not refresh the moved repository")
	}
}

// TestLayoutSubmodule: ctx run inside a submodule's work tree uses the submodule's repository.
func TestLayoutSubmodule(t *testing.T) {
	lib := testenv.NewRepo(t)
	super := testenv.NewRepo(t)
	testenv.Git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	testenv.Git(t, super, "commit", "-qm", "add lib")
	sub := filepath.Join(super, "lib")
	superHead := testenv.Git(t, super, "rev-parse", "HEAD")

	mustCtx(t, sub, nil, 0, "init")
	mustCtx(t, sub, nil, 0, "knowledge", "set", "lib-only", "belongs to the submodule")
	if _, err := testenv.GitErr(sub, "rev-parse", "--verify", "-q", "refs/heads/ctx"); err != nil {
		t.Fatalf("the submodule has no context branch")
	}
	if _, err := testenv.GitErr(super, "rev-parse", "--verify", "-q", "refs/heads/ctx"); err == nil {
		t.Fatalf("the superproject got the submodule's context branch")
	}
	if _, ok := readCtxFile(sub, "knowledge/lib-only.md"); !ok {
		t.Errorf("no .context/ in the submodule's work tree")
	}
	if _, err := os.Stat(filepath.Join(super, ".context")); err == nil {
		t.Errorf("the superproject got a .context/")
	}
	if r := ctxEnv(super, nil, "knowledge", "get", "lib-only"); r.code != 4 {
		t.Errorf("the superproject (not initialized) reads the submodule's store: exit %d", r.code)
	}
	subGitDir := testenv.Git(t, sub, "rev-parse", "--absolute-git-dir")
	if _, err := os.Stat(filepath.Join(subGitDir, "ctx", "config.json")); err != nil {
		t.Errorf("no ctx state in the submodule's git dir %s", subGitDir)
	}
	if st := testenv.Git(t, super, "status", "--porcelain"); st != "" {
		t.Errorf("the superproject's status changed: %q", st)
	}
	if testenv.Git(t, super, "rev-parse", "HEAD") != superHead {
		t.Errorf("the superproject's HEAD moved")
	}
	// The superproject gets its own store.
	mustCtx(t, super, nil, 0, "init", "--no-hooks")
	if r := ctxEnv(super, nil, "knowledge", "get", "lib-only"); r.code != 3 {
		t.Errorf("the superproject's store has the submodule's entry: exit %d", r.code)
	}
}
