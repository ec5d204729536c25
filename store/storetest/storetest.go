// Package storetest has the test helpers that know the context store: an initialised store on a real
// repository, and reads of a scope's ref with the git CLI wherever the ref lives. Isolation, git runs,
// repositories and snapshots of the user's side come from internal/testenv (the package's tests call
// testenv.Main from their TestMain).
package storetest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
)

// Repo makes the user's repository of store tests with testenv.NewRepo (one commit on main, README.md)
// and adds an untracked file, notes.txt, that no ctx write may touch; it returns its path.
func Repo(t testing.TB) string {
	t.Helper()
	dir := testenv.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("untracked\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Open opens the store of dir as actor (Agent "test-agent", Machine "laptop" and Session "s1" when
// empty) and initialises it.
func Open(t testing.TB, dir string, actor store.Actor) *store.Store {
	t.Helper()
	if actor.Agent == "" {
		actor.Agent = "test-agent"
	}
	if actor.Machine == "" {
		actor.Machine = "laptop"
	}
	if actor.Session == "" {
		actor.Session = "s1"
	}
	ctx := context.Background()
	s, err := store.Open(ctx, dir, actor)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	if _, err := s.Init(ctx, store.InitOptions{}); err != nil {
		t.Fatalf("store.Init: %v", err)
	}
	return s
}

// New makes a repository (Repo) with an initialised store (Open) and returns both.
func New(t testing.TB) (*store.Store, string) {
	t.Helper()
	dir := Repo(t)
	return Open(t, dir, store.Actor{}), dir
}

// LocalGitDir is the local-only repository of dir's store, <git common dir>/ctx/private.git, which holds
// the refs of the private and ephemeral scopes (store.RefPrivate, store.RefEphemeral).
func LocalGitDir(t testing.TB, dir string) string {
	t.Helper()
	common := testenv.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	return filepath.Join(common, "ctx", "private.git")
}

// RefArgs returns the git arguments that read ref of dir's store: ["--git-dir=<local store>"] for the
// private and ephemeral refs, none for the others. Use as git(append(RefArgs(t, dir, ref), "log", ref)...).
func RefArgs(t testing.TB, dir, ref string) []string {
	t.Helper()
	if ref == store.RefPrivate || ref == store.RefEphemeral {
		return []string{"--git-dir=" + LocalGitDir(t, dir)}
	}
	return nil
}

// GitRef runs git in dir with args, in the repository that holds ref (see RefArgs).
func GitRef(t testing.TB, dir, ref string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, append(RefArgs(t, dir, ref), args...)...)
}

// Count is `git rev-list --count ref` (0 when the ref does not exist).
func Count(t testing.TB, dir, ref string) int {
	t.Helper()
	out, err := testenv.GitErr(dir, append(RefArgs(t, dir, ref), "rev-list", "--count", ref)...)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("rev-list --count %s: %q", ref, out)
	}
	return n
}

// Files is `git ls-tree -r --name-only ref` as a set (empty when the ref does not exist).
func Files(t testing.TB, dir, ref string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	s, err := testenv.GitErr(dir, append(RefArgs(t, dir, ref), "ls-tree", "-r", "--name-only", ref)...)
	if err != nil {
		return out
	}
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out[l] = true
		}
	}
	return out
}

// Show is `git show ref:path`.
func Show(t testing.TB, dir, ref, path string) string {
	t.Helper()
	return GitRef(t, dir, ref, "show", ref+":"+path)
}

// LastMessage is the full message of ref's tip (`git log -1 --format=%B ref`).
func LastMessage(t testing.TB, dir, ref string) string {
	t.Helper()
	return GitRef(t, dir, ref, "log", "-1", "--format=%B", ref)
}
