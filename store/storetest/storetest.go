// Package storetest has test helpers for packages that use store: real git repositories made with the
// git CLI in t.TempDir() (no mocks), an initialised store on them, and checks that the user's HEAD,
// index and working tree are left alone (docs/architecture.md "Promises").
package storetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// Name and Email are the git identity of the repositories made by Repo.
const (
	Name  = "Ada Lovelace"
	Email = "ada@example.com"
)

// gitEnv isolates git from the caller's global and system configuration.
func gitEnv() []string {
	env := []string{}
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "GIT_") {
			continue
		}
		env = append(env, e)
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
}

// Git runs the git CLI in dir and returns its trimmed standard output; the test fails on an error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitErr runs the git CLI in dir and returns its trimmed combined output and error.
func GitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	b, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(b)), err
}

// Repo makes a git repository in a new temporary directory with the identity Name <Email>, one commit on
// main (README.md) and an untracked file (notes.txt), and returns its path.
func Repo(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "config", "user.name", Name)
	Git(t, dir, "config", "user.email", Email)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# project\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "add", "README.md")
	Git(t, dir, "commit", "-q", "-m", "initial")
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
	common := Git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
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
	return Git(t, dir, append(RefArgs(t, dir, ref), args...)...)
}

// Count is `git rev-list --count ref` (0 when the ref does not exist).
func Count(t testing.TB, dir, ref string) int {
	t.Helper()
	out, err := GitErr(dir, append(RefArgs(t, dir, ref), "rev-list", "--count", ref)...)
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
	s, err := GitErr(dir, append(RefArgs(t, dir, ref), "ls-tree", "-r", "--name-only", ref)...)
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

// Snapshot is the state of the user's side of a repository: HEAD, the index and `git status`.
type Snapshot struct {
	Head, HeadRef, Index, Status string
}

// Take records the user's HEAD, index (`git ls-files -s`) and `git status --porcelain`.
func Take(t testing.TB, dir string) Snapshot {
	t.Helper()
	return Snapshot{
		Head:    Git(t, dir, "rev-parse", "HEAD"),
		HeadRef: Git(t, dir, "symbolic-ref", "HEAD"),
		Index:   Git(t, dir, "ls-files", "-s"),
		Status:  Git(t, dir, "status", "--porcelain", "--untracked-files=all"),
	}
}

// Unchanged fails the test when the user's HEAD, index or status differ from the snapshot.
func (s Snapshot) Unchanged(t testing.TB, dir string) {
	t.Helper()
	if now := Take(t, dir); now != s {
		t.Fatalf("the user's repository changed:\nbefore %+v\nafter  %+v", s, now)
	}
}
