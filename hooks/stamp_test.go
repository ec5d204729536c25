package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStamp: a successful refresh hook writes the stamp (the refs, their values read before the
// refresh, then * or HEAD); a failed one, or refs named so that the shim could not pass them to git
// safely, leaves none, and an older stamp is removed before the refresh runs.
func TestRunStamp(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitIn(t, repo, "", "update-ref", "refs/heads/ctx", "HEAD")
	head := gitIn(t, repo, "", "rev-parse", "HEAD")
	stampPath := filepath.Join(repo, ".git", StampFile)
	refs := func(context.Context, string) ([]string, error) {
		return []string{"refs/heads/ctx", "refs/ctx/private"}, nil
	}
	follows := false
	a := Actions{
		Refresh:       func(context.Context, string) error { return nil },
		StampRefs:     refs,
		FollowsBranch: func(context.Context, string) (bool, error) { return follows, nil },
	}
	read := func() string {
		b, err := os.ReadFile(stampPath)
		if err != nil {
			return ""
		}
		return string(b)
	}
	if _, _, err := Run(bg, repo, PostCheckout, []string{head, head, "1"}, a); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), "refs/heads/ctx refs/ctx/private|refs/heads/ctx="+head+" *\n"; got != want {
		t.Errorf("stamp = %q, want %q", got, want)
	}
	follows = true
	if _, _, err := Run(bg, repo, PostCheckout, []string{head, head, "1"}, a); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), "refs/heads/ctx refs/ctx/private|refs/heads/ctx="+head+" refs/heads/main\n"; got != want {
		t.Errorf("stamp when following the branch = %q, want %q", got, want)
	}
	// post-merge does not record the branch: its stamp names HEAD.
	follows = false
	if _, _, err := Run(bg, repo, PostMerge, []string{"0"}, a); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "refs/heads/ctx refs/ctx/private|refs/heads/ctx="+head+" refs/heads/main\n" {
		t.Errorf("post-merge stamp = %q", got)
	}

	failing := a
	failing.Refresh = func(context.Context, string) error { return errors.New("broken store") }
	if _, _, err := Run(bg, repo, PostCheckout, []string{head, head, "1"}, failing); err == nil {
		t.Fatal("a failed refresh returned no error")
	}
	if got := read(); got != "" {
		t.Errorf("a failed refresh left the stamp %q", got)
	}

	for _, bad := range []string{"--exec=x", "refs/heads/a b", "refs/heads/*", "HEAD"} {
		odd := a
		odd.StampRefs = func(context.Context, string) ([]string, error) { return []string{bad}, nil }
		if _, _, err := Run(bg, repo, PostCheckout, []string{head, head, "1"}, odd); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != "" {
			t.Errorf("ref %q: stamp %q", bad, got)
		}
	}
}

// TestShimStamp: the installed post-checkout shim skips ctx only when the stamp matches the refs and the
// checkout record exists; a stamp whose refs would reach git as options or globs runs ctx instead, and
// git never sees them.
func TestShimStamp(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "", "update-ref", "refs/heads/ctx", "HEAD")
	gitIn(t, repo, "", "branch", "other")
	head := gitIn(t, repo, "", "rev-parse", "HEAD")
	pathEnv, logFile := fakeCtx(t, "exit 0")
	if err := os.MkdirAll(filepath.Join(repo, ".context"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, CheckoutRecord), "{}", 0o644)
	stampPath := filepath.Join(repo, ".git", StampFile)
	calls := 0
	for i, c := range []struct {
		stamp string
		skip  bool
	}{
		{"refs/heads/ctx|refs/heads/ctx=" + head + " *\n", true},
		{"refs/heads/ctx|refs/heads/ctx=" + head + " refs/heads/other\n", true}, // checkout other: HEAD matches
		{"refs/heads/ctx|refs/heads/ctx=" + head + " refs/heads/main\n", false},
		{"refs/heads/ctx|refs/heads/ctx=0000000000000000000000000000000000000000 *\n", false},
		{"--output=pwned refs/heads/ctx|refs/heads/ctx=" + head + " *\n", false},
		{"refs/heads/* |refs/heads/ctx=" + head + " *\n", false},
		{"refs/heads/ctx;touch${IFS}pwned|refs/heads/ctx=" + head + " *\n", false},
	} {
		writeFile(t, stampPath, c.stamp, 0o644)
		to := "other"
		if i%2 == 1 {
			to = "main"
		}
		if i == 1 || i == 2 {
			to = "other" // the stamp names HEAD after the checkout
			gitIn(t, repo, pathEnv, "checkout", "-q", "main")
			calls = len(readLog(t, logFile))
			writeFile(t, stampPath, c.stamp, 0o644)
		}
		gitIn(t, repo, pathEnv, "checkout", "-q", to)
		got := len(readLog(t, logFile))
		if skipped := got == calls; skipped != c.skip {
			t.Errorf("stamp %q: skipped=%v, want %v", c.stamp, skipped, c.skip)
		}
		calls = got
	}
	if _, err := os.Stat(filepath.Join(repo, "pwned")); err == nil {
		t.Error("a stamp's refs reached git or the shell")
	}
	// Without the checkout record the shim runs ctx whatever the stamp says.
	writeFile(t, stampPath, "refs/heads/ctx|refs/heads/ctx="+head+" *\n", 0o644)
	if err := os.Remove(filepath.Join(repo, CheckoutRecord)); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, pathEnv, "checkout", "-q", "main")
	if len(readLog(t, logFile)) == calls {
		t.Error("no checkout record: the shim skipped ctx")
	}
}

// gitLocal is Local answered by git processes (the store's own, store.TestHookLocalMatchesGit, is
// compared with these answers).
type gitLocal struct {
	t    *testing.T
	repo string
}

func (l gitLocal) GitPath(name string) string { return filepath.Join(l.repo, ".git", name) }

func (l gitLocal) RefValues(_ context.Context, refs []string) ([]string, error) {
	out := gitIn(l.t, l.repo, "", append([]string{"for-each-ref", "--format=%(refname)=%(objectname)"}, refs...)...)
	return strings.Fields(out), nil
}

func (l gitLocal) Head(context.Context) (string, error) {
	return gitIn(l.t, l.repo, "", "rev-parse", "--symbolic-full-name", "HEAD"), nil
}

// TestRunNothingMoved: started while the stamp still holds (a hook manager's snippet has no ctx_fresh),
// a refresh hook does nothing and keeps the stamp; a moved ref, another branch when the stamp names HEAD,
// or a missing checkout record runs the refresh. post-rewrite always runs.
func TestRunNothingMoved(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitIn(t, repo, "", "update-ref", "refs/heads/ctx", "HEAD")
	gitIn(t, repo, "", "branch", "other")
	head := gitIn(t, repo, "", "rev-parse", "HEAD")
	if err := os.MkdirAll(filepath.Join(repo, ".context"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, CheckoutRecord), "{}", 0o644)
	refreshes := 0
	follows := true
	a := Actions{
		Refresh:       func(context.Context, string) error { refreshes++; return nil },
		StampRefs:     func(context.Context, string) ([]string, error) { return []string{"refs/heads/ctx"}, nil },
		FollowsBranch: func(context.Context, string) (bool, error) { return follows, nil },
		Local:         func(context.Context, string) (Local, error) { return gitLocal{t, repo}, nil },
	}
	args := []string{head, head, "1"}
	step := func(name string, h Hook, wantRefresh bool) {
		t.Helper()
		before := refreshes
		ran, why, err := Run(bg, repo, h, args, a)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := refreshes > before; got != wantRefresh {
			t.Errorf("%s: refreshed=%v (ran=%v, %q), want %v", name, got, ran, why, wantRefresh)
		}
		if !wantRefresh && why != NothingMoved {
			t.Errorf("%s: why %q, want %q", name, why, NothingMoved)
		}
	}
	step("first", PostCheckout, true)
	step("again", PostCheckout, false)
	step("post-merge", PostMerge, false)
	step("post-rewrite", PostRewrite, true)
	step("after post-rewrite", PostCheckout, false)
	gitIn(t, repo, "", "checkout", "-q", "other") // no hooks installed: the stamp names refs/heads/main
	step("other branch", PostCheckout, true)
	step("other branch again", PostCheckout, false)
	gitIn(t, repo, "", "commit", "-q", "--allow-empty", "-m", "moved")
	gitIn(t, repo, "", "update-ref", "refs/heads/ctx", "HEAD")
	step("ref moved", PostCheckout, true)
	step("ref moved again", PostCheckout, false)
	if err := os.Remove(filepath.Join(repo, CheckoutRecord)); err != nil {
		t.Fatal(err)
	}
	step("no record", PostCheckout, true)
	writeFile(t, filepath.Join(repo, CheckoutRecord), "{}", 0o644)
	step("record back", PostCheckout, false)
	writeFile(t, filepath.Join(repo, ".git", StampFile), "--upload-pack=x|refs/heads/ctx="+head+" *\n", 0o644)
	step("odd stamp", PostCheckout, true)
}

// TestShimReadsLooseRef: the post-checkout shim, run as git runs it, reads a stamp's ref that is a loose
// file itself: a value the stamp does not name runs ctx without a git process; the value the stamp names,
// a ref only in packed-refs, or a symbolic ref leave the answer to git for-each-ref, which still decides
// (skip or run) as before.
func TestShimReadsLooseRef(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	head := gitIn(t, repo, "", "rev-parse", "HEAD")
	writeFile(t, filepath.Join(repo, CheckoutRecord), "{}", 0o644)
	pathEnv, ctxLog := fakeCtx(t, "exit 0")
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	gitBin := t.TempDir()
	gitLog := filepath.Join(gitBin, "git.log")
	writeFile(t, filepath.Join(gitBin, "git"), fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$1\" >> '%s'\nexec '%s' \"$@\"\n", gitLog, realGit), 0o755)
	moved := gitIn(t, repo, "", "commit-tree", head+"^{tree}", "-p", head, "-m", "moved")
	stamp := "refs/ctx/ephemeral refs/ctx/private refs/heads/ctx|refs/heads/ctx=" + head + " *\n"
	for _, c := range []struct {
		name     string
		setup    func()
		ran, git bool // ctx started; git for-each-ref started
	}{
		{"loose, as stamped", func() { gitIn(t, repo, "", "update-ref", "refs/heads/ctx", head) }, false, true},
		{"loose, moved", func() { gitIn(t, repo, "", "update-ref", "refs/heads/ctx", moved) }, true, false},
		{"packed only, as stamped", func() {
			gitIn(t, repo, "", "update-ref", "refs/heads/ctx", head)
			gitIn(t, repo, "", "pack-refs", "--all", "--prune")
		}, false, true},
		{"packed only, moved", func() {
			gitIn(t, repo, "", "update-ref", "refs/heads/ctx", moved)
			gitIn(t, repo, "", "pack-refs", "--all", "--prune")
		}, true, true},
		{"symbolic", func() { gitIn(t, repo, "", "symbolic-ref", "refs/heads/ctx", "refs/heads/main") }, false, true},
		{"private loose, moved", func() {
			gitIn(t, repo, "", "update-ref", "--no-deref", "refs/heads/ctx", head)
			gitIn(t, repo, "", "update-ref", "refs/ctx/private", head)
		}, true, false},
	} {
		c.setup()
		writeFile(t, filepath.Join(repo, ".git", StampFile), stamp, 0o644)
		_ = os.Remove(ctxLog)
		_ = os.Remove(gitLog)
		cmd := exec.Command("sh", filepath.Join(repo, ".git", "hooks", "post-checkout"), head, head, "1")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "PATH="+gitBin+string(os.PathListSeparator)+pathEnv)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: the hook: %v: %s", c.name, err, out)
		}
		ran := len(readLog(t, ctxLog)) > 0
		ranGit := strings.Contains(strings.Join(readLog(t, gitLog), " "), "for-each-ref")
		if ran != c.ran || ranGit != c.git {
			t.Errorf("%s: ctx started %v (want %v), git for-each-ref %v (want %v)", c.name, ran, c.ran, ranGit, c.git)
		}
		gitIn(t, repo, "", "update-ref", "-d", "refs/ctx/private")
	}
}
