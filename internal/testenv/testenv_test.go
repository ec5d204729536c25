package testenv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// outerHome is HOME as the test binary found it, read before TestMain changes it.
var outerHome = os.Getenv("HOME")

func TestMain(m *testing.M) { testenv.Main(m) }

// TestHermetic: git sees only the generated global config, no system config, the fixed identity, and a
// HOME that is not the caller's.
func TestHermetic(t *testing.T) {
	home := os.Getenv("HOME")
	if home == outerHome || !strings.Contains(home, "ctx-test-home-") {
		t.Fatalf("HOME = %q (outside: %q)", home, outerHome)
	}
	if got := os.Getenv("GIT_CONFIG_GLOBAL"); got != filepath.Join(home, ".gitconfig") {
		t.Fatalf("GIT_CONFIG_GLOBAL = %q", got)
	}
	dir := testenv.NewRepo(t)
	// Every config value git reads comes from the generated file or the repository's own config.
	for _, line := range strings.Split(testenv.Git(t, dir, "config", "--list", "--show-origin"), "\n") {
		origin, _, _ := strings.Cut(line, "\t")
		if origin != "file:"+filepath.Join(home, ".gitconfig") && origin != "file:.git/config" {
			t.Errorf("config from outside the harness: %s", line)
		}
	}
	for key, want := range map[string]string{"init.defaultBranch": "main", "gc.autoDetach": "false", "protocol.file.allow": "always"} {
		if got := testenv.Git(t, dir, "config", "--get", key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if got := testenv.Git(t, dir, "var", "GIT_AUTHOR_IDENT"); !strings.HasPrefix(got, testenv.Name+" <"+testenv.Email+"> ") {
		t.Errorf("author %q", got)
	}
	if got := testenv.Git(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("HEAD %q", got)
	}
	remote := testenv.BareRemote(t)
	testenv.Git(t, dir, "push", "-q", remote, "main")
	clone := testenv.Clone(t, remote, "c")
	if a, b := testenv.Git(t, dir, "rev-parse", "HEAD"), testenv.Git(t, clone, "rev-parse", "HEAD"); a != b {
		t.Errorf("clone at %s, repository at %s", b, a)
	}
}

// TestEnviron: KEY=value sets, KEY= removes.
func TestEnviron(t *testing.T) {
	t.Setenv("CTX_TEST_A", "a")
	t.Setenv("CTX_TEST_B", "b")
	env := strings.Join(testenv.Environ([]string{"CTX_TEST_A=", "CTX_TEST_B=c"}), "\n")
	if strings.Contains(env, "CTX_TEST_A=") || !strings.Contains(env, "CTX_TEST_B=c") || strings.Contains(env, "CTX_TEST_B=b") {
		t.Errorf("Environ:\n%s", env)
	}
}

// recorder is a testing.TB that records the failures reported to it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestSnapshotSame: each change of the user's side is reported, and nothing else is.
func TestSnapshotSame(t *testing.T) {
	for name, change := range map[string]func(dir string){
		"":            func(string) {},
		"HEAD moved":  func(dir string) { testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "x") },
		"HEAD moved ": func(dir string) { testenv.Git(t, dir, "checkout", "-q", "-b", "other") },
		"git status changed": func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"the index changed": func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, dir, "add", "README.md")
		},
		"the index file changed": func(dir string) {
			testenv.Git(t, dir, "update-index", "--index-version", "4")
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := testenv.NewRepo(t)
			snap := testenv.Take(t, dir)
			change(dir)
			r := &recorder{TB: t}
			snap.Same(r, dir)
			want := strings.TrimSpace(name)
			found := false
			for _, e := range r.errs {
				found = found || strings.HasPrefix(e, want)
			}
			if want == "" && len(r.errs) != 0 || want != "" && !found {
				t.Errorf("reported %q, want %q", r.errs, want)
			}
		})
	}
}
