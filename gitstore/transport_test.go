package gitstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

const spec = "refs/heads/ctx:refs/heads/ctx"

type remoteKind struct {
	name string
	url  func(path string) string
}

var remoteKinds = []remoteKind{
	{"path", func(p string) string { return p }},
	{"file-url", func(p string) string { return "file://" + filepath.ToSlash(p) }},
}

// transferScenario runs the push/fetch scenario of the brief against a bare remote. gitDir is the git
// binary's directory when the test runs without git on PATH (the CLI helpers then need it explicitly).
func transferScenario(t *testing.T, kind remoteKind, noGit bool) {
	dir := testenv.NewRepo(t)
	bare := testenv.BareRemote(t)
	url := kind.url(bare)
	r := open(t, dir)
	first := set(t, r, pub, "one", map[string]string{"knowledge/a.md": "a"})
	if noGit {
		hideGit(t)
	}

	// Push a new ref.
	if err := r.Push(bg, url, spec, gitstore.TransferOptions{}); err != nil {
		t.Fatalf("push new ref: %v", err)
	}
	if got := gitWithPath(t, bare, "rev-parse", "refs/heads/ctx"); got != first.New.String() {
		t.Fatalf("remote ctx = %s, want %s", got, first.New)
	}
	// Again: up to date.
	if err := r.Push(bg, url, spec, gitstore.TransferOptions{}); err != nil {
		t.Fatalf("push up to date: %v", err)
	}
	// Forced refspecs are refused.
	if err := r.Push(bg, url, "+"+spec, gitstore.TransferOptions{}); err == nil {
		t.Fatal("forced push accepted")
	}

	// A second clone moves the remote; our push is then a non-fast-forward.
	other := filepath.Join(t.TempDir(), "other")
	gitWithPath(t, "", "clone", "-q", bare, other)
	ro := open(t, other)
	if found, err := ro.Fetch(bg, url, "refs/heads/ctx:refs/heads/ctx", gitstore.TransferOptions{}); err != nil || !found {
		t.Fatalf("fetch into the second clone: %v %v", found, err)
	}
	theirs := set(t, ro, pub, "theirs", map[string]string{"knowledge/b.md": "b"})
	if err := ro.Push(bg, url, spec, gitstore.TransferOptions{}); err != nil {
		t.Fatalf("push from the second clone: %v", err)
	}
	set(t, r, pub, "mine", map[string]string{"knowledge/c.md": "c"})
	err := r.Push(bg, url, spec, gitstore.TransferOptions{})
	var te *gitstore.TransferError
	if !errors.Is(err, gitstore.ErrNonFastForward) || !errors.As(err, &te) || te.Op != "push" {
		t.Fatalf("non-fast-forward push: %v (%T), want a TransferError wrapping ErrNonFastForward", err, err)
	}
	if got := gitWithPath(t, bare, "rev-parse", "refs/heads/ctx"); got != theirs.New.String() {
		t.Fatalf("remote moved by a rejected push: %s", got)
	}

	// Fetch their commit into a tracking ref.
	found, err := r.Fetch(bg, url, "+refs/heads/ctx:refs/remotes/origin/ctx", gitstore.TransferOptions{})
	if err != nil || !found {
		t.Fatalf("fetch: %v, %v", found, err)
	}
	if h, _ := r.Resolve(bg, "refs/remotes/origin/ctx"); h != theirs.New {
		t.Fatalf("tracking ref = %s, want %s", h, theirs.New)
	}
	// Fetch again: nothing new, still found.
	if found, err := r.Fetch(bg, url, "+refs/heads/ctx:refs/remotes/origin/ctx", gitstore.TransferOptions{}); err != nil || !found {
		t.Fatalf("fetch up to date: %v, %v", found, err)
	}
	// An optional ref the remote lacks: found=false, no error; not optional: an error.
	found, err = r.Fetch(bg, url, "?refs/heads/nope:refs/remotes/origin/nope", gitstore.TransferOptions{})
	if err != nil || found {
		t.Fatalf("fetch of a missing optional ref: found=%v err=%v", found, err)
	}
	if _, err := r.Fetch(bg, url, "refs/heads/nope:refs/remotes/origin/nope", gitstore.TransferOptions{}); err == nil {
		t.Fatal("fetch of a missing required ref succeeded")
	}

	// Unreachable remote.
	missing := filepath.Join(t.TempDir(), "does-not-exist.git")
	for _, u := range []string{missing, kind.url(missing)} {
		err = r.Push(bg, u, spec, gitstore.TransferOptions{})
		if !errors.As(err, &te) || te.Reason == "" {
			t.Errorf("push to %s: %v (%T), want a TransferError with a reason", u, err, err)
		} else {
			t.Logf("push to a missing remote: %v", err)
		}
		_, err = r.Fetch(bg, u, "+refs/heads/ctx:refs/remotes/x/ctx", gitstore.TransferOptions{})
		if !errors.As(err, &te) || te.Reason == "" {
			t.Errorf("fetch from %s: %v (%T), want a TransferError with a reason", u, err, err)
		}
		_, err = r.Fetch(bg, u, "?refs/heads/ctx:refs/remotes/x/ctx", gitstore.TransferOptions{})
		if err == nil {
			t.Errorf("optional fetch from a missing remote %s succeeded", u)
		}
	}
}

func TestTransfer(t *testing.T) {
	for _, k := range remoteKinds {
		t.Run(k.name, func(t *testing.T) { transferScenario(t, k, false) })
	}
}

// TestTransferWithoutGit runs the same scenario with no git on PATH: go-git's transport serves.
func TestTransferWithoutGit(t *testing.T) {
	for _, k := range remoteKinds {
		t.Run(k.name, func(t *testing.T) { transferScenario(t, k, true) })
	}
}

func TestPushRejectedByHook(t *testing.T) {
	for _, k := range remoteKinds {
		t.Run(k.name, func(t *testing.T) {
			dir := testenv.NewRepo(t)
			bare := testenv.BareRemote(t)
			hook := filepath.Join(bare, "hooks", "pre-receive")
			if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"protected branch: ctx may not be pushed here\" >&2\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := open(t, dir)
			set(t, r, pub, "one", map[string]string{"a": "a"})
			err := r.Push(bg, k.url(bare), spec, gitstore.TransferOptions{})
			var te *gitstore.TransferError
			if !errors.As(err, &te) {
				t.Fatalf("push refused by a hook: %v (%T), want TransferError", err, err)
			}
			if errors.Is(err, gitstore.ErrNonFastForward) {
				t.Fatalf("hook refusal reported as non-fast-forward: %v", err)
			}
			if !strings.Contains(te.Reason, "protected branch") || !strings.Contains(err.Error(), "protected branch") {
				t.Fatalf("reason lacks the remote's words: %q", te.Reason)
			}
			t.Logf("hook refusal: %v", err)
			if out, _ := testenv.GitErr(bare, "rev-parse", "-q", "--verify", "refs/heads/ctx"); out != "" {
				t.Fatal("the remote got the ref anyway")
			}
		})
	}
}

// TestFetchByRemoteName uses a configured remote name (origin) rather than a URL.
func TestFetchByRemoteName(t *testing.T) {
	bare := testenv.BareRemote(t)
	seed := testenv.Clone(t, bare, "seed")
	rs := open(t, seed)
	c := set(t, rs, pub, "seed", map[string]string{"a": "a"})
	if err := rs.Push(bg, "origin", spec, gitstore.TransferOptions{}); err != nil {
		t.Fatal(err)
	}
	clone := testenv.Clone(t, bare, "clone")
	r := open(t, clone)
	found, err := r.Fetch(bg, "origin", "?+refs/heads/ctx:refs/remotes/origin/ctx", gitstore.TransferOptions{})
	if err != nil || !found {
		t.Fatalf("fetch origin: %v %v", found, err)
	}
	if h, _ := r.Resolve(bg, "refs/remotes/origin/ctx"); h != c.New {
		t.Fatalf("origin/ctx = %s", h)
	}
	rems, err := r.Remotes(bg)
	if err != nil || len(rems) != 1 || rems[0].Name != "origin" || rems[0].URL != bare {
		t.Fatalf("Remotes = %+v, %v", rems, err)
	}
}

var realGit string

// hideGit empties PATH for the rest of the test, remembering where git was for gitWithPath.
func hideGit(t *testing.T) {
	t.Helper()
	if realGit == "" {
		p, err := findGit()
		if err != nil {
			t.Fatal(err)
		}
		realGit = p
	}
	t.Setenv("PATH", t.TempDir())
	if gitstore.HasGit() {
		t.Fatal("git still found")
	}
}

func findGit() (string, error) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, "git")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("git not on PATH")
}

// gitWithPath runs git even when the test hid it from PATH.
func gitWithPath(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if gitstore.HasGit() {
		return testenv.Git(t, dir, args...)
	}
	old := os.Getenv("PATH")
	os.Setenv("PATH", filepath.Dir(realGit))
	defer os.Setenv("PATH", old)
	return testenv.Git(t, dir, args...)
}

// TestTransferWithoutGitWorktreeConfig: the go-git fallback works in a repository go-git's Open refuses.
func TestTransferWithoutGitWorktreeConfig(t *testing.T) {
	dir := testenv.NewRepo(t)
	testenv.Git(t, dir, "config", "core.repositoryformatversion", "1")
	testenv.Git(t, dir, "config", "extensions.worktreeConfig", "true")
	bare := testenv.BareRemote(t)
	testenv.Git(t, dir, "remote", "add", "origin", bare)
	r := open(t, dir)
	c := set(t, r, pub, "one", map[string]string{"a": "a"})
	hideGit(t)
	if err := r.Push(bg, "origin", spec, gitstore.TransferOptions{}); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got := gitWithPath(t, bare, "rev-parse", "refs/heads/ctx"); got != c.New.String() {
		t.Fatalf("remote ctx = %s", got)
	}
	if found, err := r.Fetch(bg, "origin", "+refs/heads/ctx:refs/remotes/origin/ctx", gitstore.TransferOptions{}); err != nil || !found {
		t.Fatalf("fetch: %v %v", found, err)
	}
	if h, _ := r.Resolve(bg, "refs/remotes/origin/ctx"); h != c.New {
		t.Fatalf("origin/ctx = %s", h)
	}
}
