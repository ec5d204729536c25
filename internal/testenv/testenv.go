// Package testenv is the one test harness of ctx: a hermetic environment for git and ctx (no user or
// system git configuration, a fixed identity, a private HOME), the real git CLI to run in tests,
// repositories made with it in t.TempDir() (NewRepo, EmptyRepo, BareRemote, Clone), a snapshot of the
// user's side of a repository (Take, Snapshot.Same) and builders of raw, possibly hostile, tree objects.
//
// A test package calls Main from its TestMain, so that the code under test (store, gitstore, the CLI,
// git hooks and the git it starts) and the git the tests run see the same environment:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// A test that needs another value of one variable changes it with t.Setenv (or Unsetenv).
package testenv

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The identity of every commit made in tests, through GIT_AUTHOR_* and GIT_COMMITTER_*.
const (
	Name  = "Ada Lovelace"
	Email = "ada@example.com"
)

// Machine is CTX_MACHINE in tests.
const Machine = "test-machine"

// GitConfig is the global git configuration of tests, the file GIT_CONFIG_GLOBAL names: "main" is the
// initial branch whatever git's version; file:// remotes are allowed (submodule tests); gc.autoDetach is
// off, so that a `git gc --auto` that ctx starts finishes before ctx returns instead of writing into a
// test's temporary folder while it is removed (reads racing a repack are tested in
// gitstore/repack_test.go); no signing, no advice on stderr.
const GitConfig = `[init]
	defaultBranch = main
[protocol "file"]
	allow = always
[gc]
	autoDetach = false
[commit]
	gpgsign = false
[tag]
	gpgsign = false
[advice]
	detachedHead = false
`

// cleared are the variables a hermetic environment removes: they would point git at another repository
// or index, or change what ctx records and whether its hooks run.
var cleared = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
	"GIT_NAMESPACE", "GIT_CONFIG", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS",
	"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "EMAIL", "CTX_AGENT", "CTX_SESSION", "CTX_HOOKS",
	"CTX_IN_HOOK", "CTX_HOOK_TIMEOUT", "CTX_HOOK_TIMEOUT_MIN", "CTX_TEST_NOW",
	// the session variables agents export (docs/blame.md): a test run inside an agent records none
	"CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID"}

// Vars returns the variables of the hermetic environment with home as HOME: XDG_CONFIG_HOME inside it,
// GIT_CONFIG_GLOBAL naming home/.gitconfig (which WriteConfig writes), no system config, the fixed
// identity, CTX_MACHINE, and no terminal prompt. Use it for an environment built from nothing (a test
// script's); Main sets them in the process.
func Vars(home string) map[string]string {
	return map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, ".gitconfig"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     Name,
		"GIT_AUTHOR_EMAIL":    Email,
		"GIT_COMMITTER_NAME":  Name,
		"GIT_COMMITTER_EMAIL": Email,
		"CTX_MACHINE":         Machine,
		"GIT_TERMINAL_PROMPT": "0",
		"GIT_EDITOR":          "true",
	}
}

// WriteConfig makes home and writes GitConfig into home/.gitconfig, the file Vars(home) names.
func WriteConfig(home string) error {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(GitConfig), 0o644); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	return nil
}

// Hermetic sets the hermetic environment in this process (Vars with a new temporary HOME, less the
// variables that point git elsewhere) and returns a function that removes the HOME. Go's GOPATH,
// GOMODCACHE and GOCACHE are pinned to their values before, so that tests that build binaries keep
// using the caches. Call it before any test runs (Main does); a test package that needs its own TestMain
// wrapper (testscript's) calls it there.
func Hermetic() (cleanup func(), err error) {
	if out, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output(); err == nil {
		v := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(v) == 3 {
			os.Setenv("GOPATH", v[0])
			os.Setenv("GOMODCACHE", v[1])
			os.Setenv("GOCACHE", v[2])
		}
	}
	home, err := os.MkdirTemp("", "ctx-test-home-")
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	if err := WriteConfig(home); err != nil {
		os.RemoveAll(home)
		return nil, err
	}
	for k, v := range Vars(home) {
		os.Setenv(k, v)
	}
	for _, k := range cleared {
		os.Unsetenv(k)
	}
	return func() { os.RemoveAll(home) }, nil
}

// Main runs a package's tests in the hermetic environment and exits with their status: a TestMain of
// one line.
func Main(m *testing.M) {
	cleanup, err := Hermetic()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Unsetenv removes the variables keys for the rest of the test (t.Setenv restores them after it): for
// the tests of what happens when one is not set at all, which an empty value is not to git.
func Unsetenv(t testing.TB, keys ...string) {
	t.Helper()
	for _, k := range keys {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// Git runs git with args in dir and returns its trimmed stdout; the test fails on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s (in %s): %v", strings.Join(args, " "), dir, err)
	}
	return out
}

// GitErr runs git with args in dir and returns its trimmed stdout, or an error holding its stderr.
func GitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return strings.TrimSpace(stdout.String()), &GitError{Args: args, Stderr: stderr.String(), Err: err}
	}
	return strings.TrimSpace(stdout.String()), nil
}

// GitEnv is Git with the environment changed by env (see Environ).
func GitEnv(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Environ(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s (in %s): %v: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// Environ is this process's environment changed by extra, a list of "KEY=value": each KEY is set to its
// value, and a "KEY=" with no value removes KEY.
func Environ(extra []string) []string {
	drop := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	for _, kv := range extra {
		if !strings.HasSuffix(kv, "=") {
			out = append(out, kv)
		}
	}
	return out
}

// GitError is a failed git command.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	return "git " + strings.Join(e.Args, " ") + ": " + e.Err.Error() + ": " + strings.TrimSpace(e.Stderr)
}

// NewRepo makes a non-bare repository with one commit on main (a README) and returns its path.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	Git(t, "", "init", "-q", "-b", "main", dir)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "add", "README.md")
	Git(t, dir, "commit", "-q", "-m", "initial commit")
	return dir
}

// EmptyRepo makes a repository with no commits.
func EmptyRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "empty")
	Git(t, "", "init", "-q", "-b", "main", dir)
	return dir
}

// BareRemote makes a bare repository to push to and returns its path.
func BareRemote(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	Git(t, "", "init", "-q", "--bare", "-b", "main", dir)
	return dir
}

// Clone clones url into a new folder named name under a temporary directory and returns its path.
func Clone(t testing.TB, url, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	Git(t, "", "clone", "-q", url, dir)
	return dir
}

// Snapshot is what a ctx write must leave untouched in the user's repository (docs/architecture.md
// "Promises"): HEAD's commit and the ref it names, the index file's bytes, its entries (`git ls-files
// -s`) and `git status --porcelain` with untracked files.
type Snapshot struct {
	Head, HeadRef, Status, Entries string
	Index                          []byte
}

// Take records a Snapshot of the repository at dir. It does not write the index itself.
func Take(t testing.TB, dir string) Snapshot {
	t.Helper()
	head, _ := GitErr(dir, "rev-parse", "-q", "--verify", "HEAD")
	headRef, _ := GitErr(dir, "symbolic-ref", "-q", "HEAD")
	gitDir := Git(t, dir, "rev-parse", "--absolute-git-dir")
	// --no-optional-locks: a plain `git status` may rewrite the index to refresh its stat data, which
	// would make the snapshot itself change the index.
	status := Git(t, dir, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all")
	entries := Git(t, dir, "ls-files", "-s")
	idx, _ := os.ReadFile(filepath.Join(gitDir, "index"))
	return Snapshot{Head: head, HeadRef: headRef, Status: status, Entries: entries, Index: idx}
}

// Same fails the test when the repository's HEAD, index or status differ from s, naming each difference.
func (s Snapshot) Same(t testing.TB, dir string) {
	t.Helper()
	now := Take(t, dir)
	if now.Head != s.Head || now.HeadRef != s.HeadRef {
		t.Errorf("HEAD moved: %s %s -> %s %s", s.HeadRef, s.Head, now.HeadRef, now.Head)
	}
	if now.Status != s.Status {
		t.Errorf("git status changed:\nbefore:\n%s\nafter:\n%s", s.Status, now.Status)
	}
	if now.Entries != s.Entries {
		t.Errorf("the index changed:\nbefore:\n%s\nafter:\n%s", s.Entries, now.Entries)
	} else if !bytes.Equal(now.Index, s.Index) {
		t.Errorf("the index file changed")
	}
}

// TreeEntry is one entry of a raw tree object: Mode as git writes it ("100644", "40000", "120000",
// "160000"), Name (any bytes but NUL), Hash (40 hex digits).
type TreeEntry struct {
	Mode, Name, Hash string
}

// GitIn runs git with args in dir with stdin and returns its trimmed stdout; the test fails on error.
func GitIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s (in %s): %v: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// Blob stores data as a blob in the repository at dir and returns its name.
func Blob(t testing.TB, dir, data string) string {
	t.Helper()
	return GitIn(t, dir, data, "hash-object", "-w", "--stdin")
}

// RawTree stores a tree object holding exactly entries, in the order given, and returns its name. It
// writes the object with `git hash-object -t tree --literally`, so names git mktree refuses ("..", "a/b",
// ".git") can be built: the hostile trees of tests.
func RawTree(t testing.TB, dir string, entries ...TreeEntry) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		h, err := hex.DecodeString(e.Hash)
		if err != nil || len(h) != 20 {
			t.Fatalf("RawTree: bad hash %q", e.Hash)
		}
		b.WriteString(e.Mode + " " + e.Name + "\x00")
		b.Write(h)
	}
	f := filepath.Join(t.TempDir(), "tree")
	if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return Git(t, dir, "hash-object", "-t", "tree", "--literally", "-w", f)
}

// LsTree returns the entries of tree (any tree-ish) in the repository at dir.
func LsTree(t testing.TB, dir, tree string) []TreeEntry {
	t.Helper()
	out := Git(t, dir, "ls-tree", "-z", tree)
	var es []TreeEntry
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, name, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		mode := strings.TrimLeft(f[0], "0")
		es = append(es, TreeEntry{Mode: mode, Name: name, Hash: f[2]})
	}
	return es
}

// WithEntry returns a tree made of tree (a tree-ish of the repository at dir) with the entry at the path
// given by names (raw names: "..", "a/b" are single names) set to mode and hash; the trees on the way are
// made or replaced. Entries are kept in git's order (so that git fsck finds nothing but the names).
func WithEntry(t testing.TB, dir, tree string, names []string, mode, hash string) string {
	t.Helper()
	var es []TreeEntry
	if tree != "" {
		es = LsTree(t, dir, tree)
	}
	var sub string
	rest := es[:0:0]
	for _, e := range es {
		if e.Name == names[0] {
			if e.Mode == "40000" {
				sub = e.Hash
			}
			continue
		}
		rest = append(rest, e)
	}
	entry := TreeEntry{Mode: mode, Name: names[0], Hash: hash}
	if len(names) > 1 {
		entry = TreeEntry{Mode: "40000", Name: names[0], Hash: WithEntry(t, dir, sub, names[1:], mode, hash)}
	}
	es = append(rest, entry)
	sort.Slice(es, func(i, j int) bool { return sortKey(es[i]) < sortKey(es[j]) })
	return RawTree(t, dir, es...)
}

// sortKey orders tree entries as git does: a folder sorts as if its name ended in "/".
func sortKey(e TreeEntry) string {
	if e.Mode == "40000" {
		return e.Name + "/"
	}
	return e.Name
}

// CommitTree makes a commit of tree with parent (none when "") and message in the repository at dir.
func CommitTree(t testing.TB, dir, tree, parent, msg string) string {
	t.Helper()
	args := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return Git(t, dir, args...)
}
