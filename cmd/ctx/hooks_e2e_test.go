package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// The git hooks end to end (docs/hooks.md): the real ctx binary on PATH (TestMain puts it there),
// real git commands firing the hooks.

func hookFile(t testing.TB, repo, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, ".git", "hooks", name))
	if err != nil {
		return ""
	}
	return string(b)
}

func readCtxFile(dir, rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ".context", filepath.FromSlash(rel)))
	return string(b), err == nil
}

// userSide is what the hooks must never change in the user's branch: main's commit, the status.
func userSide(t testing.TB, dir string) string {
	t.Helper()
	return testenv.Git(t, dir, "rev-parse", "refs/heads/main") + "\n" +
		testenv.Git(t, dir, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all")
}

func TestHooksInstallStatusUninstall(t *testing.T) {
	repo := testenv.NewRepo(t)
	out := mustCtx(t, repo, nil, 0, "init").stdout
	if !strings.Contains(out, "hooks installed") {
		t.Errorf("ctx init should say it installed the hooks:\n%s", out)
	}
	for _, h := range []string{"post-checkout", "post-merge", "post-rewrite"} {
		run := "\"$ctx_bin\" hooks run " + h
		if h == "post-checkout" {
			run = " ctx hooks run " + h // the lean front answers it (docs/hooks.md "The shim starts ctx-full")
		}
		if !strings.Contains(hookFile(t, repo, h), run) {
			t.Errorf("%s not installed by ctx init", h)
		}
	}
	if hookFile(t, repo, "pre-push") != "" {
		t.Errorf("pre-push installed without sync.push-with-git")
	}
	st := mustCtx(t, repo, nil, 0, "hooks", "status").stdout
	if !strings.Contains(st, "post-checkout") || !strings.Contains(st, "post-rewrite") {
		t.Errorf("ctx hooks status:\n%s", st)
	}
	mustCtx(t, repo, nil, 0, "hooks", "uninstall")
	for _, h := range []string{"post-checkout", "post-merge", "post-rewrite"} {
		if hookFile(t, repo, h) != "" {
			t.Errorf("%s still there after uninstall", h)
		}
	}
	js := mustCtx(t, repo, nil, 0, "hooks", "status", "--json").stdout
	if strings.Contains(js, `"Installed": true`) {
		t.Errorf("status after uninstall:\n%s", js)
	}

	other := testenv.NewRepo(t)
	mustCtx(t, other, nil, 0, "init", "--no-hooks")
	for _, h := range []string{"post-checkout", "post-merge", "post-rewrite", "pre-push"} {
		if hookFile(t, other, h) != "" {
			t.Errorf("ctx init --no-hooks installed %s", h)
		}
	}
}

// TestHooksRefreshFollowsTheBranch: wherever the context branch is moved from (ctx in another worktree,
// `git fetch origin ctx:ctx`, `git update-ref`), the next `git checkout` of another branch makes .context/
// mirror the new tip; a hand edit pending in .context/ is never overwritten and `ctx status` reports it;
// the hooks never stage or commit anything in the user's branches.
func TestHooksRefreshFollowsTheBranch(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init")
	mustCtx(t, a, nil, 0, "knowledge", "set", "first", "one")
	mustCtx(t, a, nil, 0, "push")
	testenv.Git(t, a, "branch", "feature")
	user := userSide(t, a)

	// 1. ctx in another worktree of the same repository moves the branch.
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, a, "worktree", "add", "-q", "-b", "side", wt, "main")
	mustCtx(t, wt, nil, 0, "knowledge", "set", "from-worktree", "two")
	if _, ok := readCtxFile(a, "knowledge/from-worktree.md"); ok {
		t.Fatalf("A's .context/ changed before any checkout (nothing should refresh it yet)")
	}
	testenv.Git(t, a, "checkout", "-q", "feature")
	if _, ok := readCtxFile(a, "knowledge/from-worktree.md"); !ok {
		t.Fatalf("after git checkout, A's .context/ lacks the worktree's write")
	}

	// 2. C git fetches the context branch: git fetch origin ctx:ctx.
	b := cloneURL(t, remote, "b")
	mustCtx(t, b, nil, 0, "pull")
	mustCtx(t, b, nil, 0, "knowledge", "set", "from-b", "three")
	mustCtx(t, b, nil, 0, "pull")
	mustCtx(t, a, nil, 0, "push")
	mustCtx(t, b, nil, 0, "sync") // merges A's push, then moves the shared branch
	testenv.Git(t, a, "fetch", "-q", "origin", "ctx:ctx")
	if _, ok := readCtxFile(a, "knowledge/from-b.md"); ok {
		t.Fatalf("A's .context/ changed before the checkout")
	}
	testenv.Git(t, a, "checkout", "-q", "main")
	if got, ok := readCtxFile(a, "knowledge/from-b.md"); !ok || !strings.Contains(got, "three") {
		t.Fatalf("after git fetch origin ctx:ctx and git checkout, .context/knowledge/from-b.md = %q", got)
	}

	// 3. C git moves the ref by hand: back to the commit before B's write.
	tip := testenv.Git(t, a, "rev-parse", "ctx")
	before := testenv.Git(t, a, "rev-list", "-1", "ctx", "--", "knowledge/from-b.md")
	testenv.Git(t, a, "update-ref", "refs/heads/ctx", before+"^")
	testenv.Git(t, a, "checkout", "-q", "feature")
	if _, ok := readCtxFile(a, "knowledge/from-b.md"); ok {
		t.Fatalf("after git update-ref to an older commit and git checkout, from-b.md is still in .context/")
	}
	testenv.Git(t, a, "update-ref", "refs/heads/ctx", tip)
	testenv.Git(t, a, "checkout", "-q", "main")
	if _, ok := readCtxFile(a, "knowledge/from-b.md"); !ok {
		t.Fatalf("after git update-ref back to the tip and git checkout, from-b.md is missing")
	}

	// 4. A hand edit pending in .context/ survives a refresh that would change the file.
	edited := filepath.Join(a, ".context", "knowledge", "first.md")
	hand := []byte("---\nauthor: me\n---\nedited by hand\n")
	if err := os.WriteFile(edited, hand, 0o644); err != nil {
		t.Fatal(err)
	}
	mustCtx(t, wt, nil, 0, "knowledge", "set", "first", "changed in the worktree")
	testenv.Git(t, a, "checkout", "-q", "feature")
	if got, _ := os.ReadFile(edited); string(got) != string(hand) {
		t.Fatalf("the hand edit was overwritten: %q", got)
	}
	st := mustCtx(t, a, nil, 0, "status").stdout
	if !strings.Contains(st, "knowledge/first.md") || !strings.Contains(st, "hand edit") {
		t.Errorf("ctx status should report the pending hand edit:\n%s", st)
	}
	// Other files still followed the branch.
	if _, ok := readCtxFile(a, "knowledge/from-worktree.md"); !ok {
		t.Errorf("refresh with a kept hand edit dropped other files")
	}

	testenv.Git(t, a, "checkout", "-q", "main")
	if got := userSide(t, a); got != user {
		t.Errorf("the hooks changed the user's side:\nbefore:\n%s\nafter:\n%s", user, got)
	}
	if n := testenv.Git(t, a, "rev-list", "--count", "main"); n != "1" {
		t.Errorf("main has %s commits, want 1", n)
	}
}

// TestHooksFailOpen: a broken store never fails `git checkout`; nothing runs while a rebase is in
// progress.
func TestHooksFailOpen(t *testing.T) {
	repo := testenv.NewRepo(t)
	mustCtx(t, repo, nil, 0, "init")
	mustCtx(t, repo, nil, 0, "knowledge", "set", "k", "v1")
	testenv.Git(t, repo, "branch", "feature")

	// A corrupt config: ctx itself fails, git checkout does not.
	cfg := filepath.Join(repo, ".git", "ctx", "config.json")
	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := ctxEnv(repo, nil, "status"); r.code == 0 {
		t.Fatalf("ctx status with a corrupt config succeeded")
	}
	out, err := testenv.GitErr(repo, "checkout", "-q", "feature")
	if err != nil {
		t.Fatalf("git checkout failed because of ctx's broken store: %v %s", err, out)
	}
	testenv.Git(t, repo, "checkout", "-q", "main")
	if err := os.WriteFile(cfg, good, 0o644); err != nil {
		t.Fatal(err)
	}

	// A missing object database entry for the ref: the ref points at a commit that does not exist.
	refFile := filepath.Join(repo, ".git", "refs", "heads", "ctx")
	tip, _ := os.ReadFile(refFile)
	if err := os.WriteFile(refFile, []byte(strings.Repeat("1", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.GitErr(repo, "checkout", "-q", "feature"); err != nil {
		t.Fatalf("git checkout failed with a dangling context ref: %v", err)
	}
	if err := os.WriteFile(refFile, tip, 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "checkout", "-q", "main")

	// A rebase in progress (stopped at a `break`): while it lasts, neither `ctx hooks run post-checkout`
	// nor a `git checkout` refreshes .context/ after C git moved the context branch back.
	mustCtx(t, repo, nil, 0, "knowledge", "set", "last", "x")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "add", "a.txt")
	testenv.Git(t, repo, "commit", "-qm", "a")
	user := userSide(t, repo)
	testenv.GitEnv(t, repo, []string{"GIT_SEQUENCE_EDITOR=sed -i 1ibreak"}, "rebase", "-q", "-i", "HEAD~1")
	if _, err := os.Stat(filepath.Join(repo, ".git", "rebase-merge")); err != nil {
		t.Fatalf("the rebase did not stop: %v", err)
	}
	testenv.Git(t, repo, "update-ref", "refs/heads/ctx", "ctx~1") // drops knowledge/last.md
	mustCtx(t, repo, []string{"CTX_HOOKS="}, 0, "hooks", "run", "post-checkout", "HEAD", "HEAD", "1")
	if _, ok := readCtxFile(repo, "knowledge/last.md"); !ok {
		t.Errorf("ctx hooks run post-checkout refreshed .context/ during a rebase")
	}
	testenv.Git(t, repo, "checkout", "-q", "HEAD~0")
	if _, ok := readCtxFile(repo, "knowledge/last.md"); !ok {
		t.Errorf("git checkout during a rebase refreshed .context/")
	}
	testenv.Git(t, repo, "rebase", "--abort")
	if _, err := os.Stat(filepath.Join(repo, ".git", "rebase-merge")); err == nil {
		t.Fatalf("the rebase is still in progress")
	}
	testenv.Git(t, repo, "checkout", "-q", "feature")
	testenv.Git(t, repo, "checkout", "-q", "main")
	if _, ok := readCtxFile(repo, "knowledge/last.md"); ok {
		t.Errorf("after the rebase, git checkout did not refresh .context/")
	}
	if got := userSide(t, repo); got != user {
		t.Errorf("the hooks changed the user's side:\nbefore:\n%s\nafter:\n%s", user, got)
	}
}

// TestHooksPrePushWithGit: `ctx config sync.push-with-git true` installs pre-push, and a plain `git push`
// of the user's branch then also publishes refs/heads/ctx.
func TestHooksPrePushWithGit(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init")
	mustCtx(t, a, nil, 0, "config", "sync.push-with-git", "true")
	if !strings.Contains(hookFile(t, a, "pre-push"), "\"$ctx_bin\" hooks run pre-push") {
		t.Fatalf("pre-push not installed:\n%s", hookFile(t, a, "pre-push"))
	}
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	if err := os.WriteFile(filepath.Join(a, "code.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, a, "add", "code.go")
	testenv.Git(t, a, "commit", "-qm", "code")
	testenv.Git(t, a, "push", "-q", "origin", "main")
	if got, want := testenv.Git(t, remote, "rev-parse", "refs/heads/ctx"), testenv.Git(t, a, "rev-parse", "refs/heads/ctx"); got != want {
		t.Fatalf("after git push the remote's ctx is %s, want %s", got, want)
	}
	if got, want := testenv.Git(t, remote, "rev-parse", "main"), testenv.Git(t, a, "rev-parse", "main"); got != want {
		t.Fatalf("git push of main did not go through: %s vs %s", got, want)
	}
	// A remote refusing ctx does not block the user's push.
	hook := "#!/bin/sh\nwhile read o n r; do [ \"$r\" = refs/heads/ctx ] && { echo no ctx here >&2; exit 1; }; done; exit 0\n"
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	mustCtx(t, a, nil, 0, "knowledge", "set", "k2", "v2")
	if err := os.WriteFile(filepath.Join(a, "code.go"), []byte("package y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, a, "commit", "-qam", "code 2")
	out, err := testenv.GitErr(a, "push", "-q", "origin", "main")
	if err != nil {
		t.Fatalf("git push blocked by the refused context branch: %v %s", err, out)
	}
	if got, want := testenv.Git(t, remote, "rev-parse", "main"), testenv.Git(t, a, "rev-parse", "main"); got != want {
		t.Fatalf("main not pushed")
	}
}

// TestHookShimSkipsWhenNothingMoved: after a refresh hook, a `git checkout` that moves none of the context
// refs does not start ctx at all (the shim compares the refs and HEAD with the stamp in the git dir); a
// write by ctx, a ref moved by git, a removed .context/ or (with an active activity entry) another branch
// starts it again, and .context/ then mirrors the new tip.
func TestHookShimSkipsWhenNothingMoved(t *testing.T) {
	repo := testenv.NewRepo(t)
	mustCtx(t, repo, nil, 0, "init")
	// A ctx on PATH that logs each start, then runs the real one.
	wrap := t.TempDir()
	logFile := filepath.Join(wrap, "log")
	script := "#!/bin/sh\necho \"$*\" >>" + logFile + "\nexec " + ctxBin + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(wrap, "ctx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + wrap + string(os.PathListSeparator) + os.Getenv("PATH")}
	starts := func() int {
		b, _ := os.ReadFile(logFile)
		return strings.Count(string(b), "hooks run")
	}
	checkout := func(args ...string) {
		t.Helper()
		testenv.GitEnv(t, repo, env, append([]string{"checkout", "-q"}, args...)...)
	}
	stampPath := filepath.Join(repo, ".git", "ctx-hook-stamp")

	checkout("-b", "x")
	if starts() != 1 {
		t.Fatalf("the first checkout started ctx %d times", starts())
	}
	st, err := os.ReadFile(stampPath)
	if err != nil || !strings.HasSuffix(string(st), " *\n") || !strings.Contains(string(st), "refs/heads/ctx=") {
		t.Fatalf("stamp after the first checkout: %q, %v", st, err)
	}
	checkout("main")
	checkout("x")
	testenv.GitEnv(t, repo, env, "checkout", "-q", "--", ".")
	if starts() != 1 {
		t.Errorf("checkouts that moved no context ref started ctx: %d starts", starts())
	}

	// ctx's own write moves refs/heads/ctx: the next checkout runs the hook once.
	mustCtx(t, repo, nil, 0, "knowledge", "set", "k1", "one")
	checkout("main")
	checkout("x")
	if starts() != 2 {
		t.Errorf("after a write: %d starts, want 2", starts())
	}

	// git moves the branch by itself (a teammate's commit fetched with git): the hook checks it out.
	tip := testenv.Git(t, repo, "rev-parse", "refs/heads/ctx")
	tree := testenv.WithEntry(t, repo, testenv.Git(t, repo, "rev-parse", "refs/heads/ctx^{tree}"),
		[]string{"knowledge", "k2.md"}, "100644", testenv.Blob(t, repo, "---\nauthor: A <a@example.com>\n---\ntwo\n"))
	next := testenv.CommitTree(t, repo, tree, tip, "ctx: set knowledge k2")
	testenv.Git(t, repo, "update-ref", "refs/heads/ctx", next, tip)
	checkout("main")
	if starts() != 3 {
		t.Errorf("after git moved the branch: %d starts, want 3", starts())
	}
	if got, ok := readCtxFile(repo, "knowledge/k2.md"); !ok || !strings.Contains(got, "two") {
		t.Errorf(".context/knowledge/k2.md after the hook: %q", got)
	}

	// Without the checkout record (a removed .context/), the hook runs.
	if err := os.Remove(filepath.Join(repo, ".context", ".ctx-checkout.json")); err != nil {
		t.Fatal(err)
	}
	checkout("x")
	if starts() != 4 {
		t.Errorf("without the checkout record: %d starts, want 4", starts())
	}

	// With an active activity entry of this machine, the stamp names HEAD: another branch runs the hook,
	// which records the branch; the same branch again (once that record is stamped) does not.
	mustCtx(t, repo, nil, 0, "activity", "check-in", "some task")
	checkout("main")
	n := starts()
	checkout("-b", "y")
	if starts() != n+1 {
		t.Errorf("checkout of another branch with an active entry: %d starts, want %d", starts(), n+1)
	}
	if st, _ := os.ReadFile(stampPath); !strings.HasSuffix(string(st), " refs/heads/y\n") {
		t.Errorf("stamp with an active entry: %q", st)
	}
	if got := testenv.Git(t, repo, "grep", "-h", "branch", "refs/heads/ctx", "--", "activity"); !strings.Contains(got, `"y"`) {
		t.Errorf("activity entry after checkout of y: %s", got)
	}
	// The run that recorded the branch moved refs/heads/ctx after it read the refs: one more run finds
	// nothing to record and leaves a stamp that holds.
	checkout("y")
	n = starts()
	checkout("y")
	if starts() != n {
		t.Errorf("checkout of the same branch started ctx")
	}
}

// gitStderr runs git with args in dir and returns its exit status and stderr (the hooks' stderr, which git
// passes on).
func gitStderr(t testing.TB, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("git %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestHooksSayWhyTheRefreshFailed: the refresh hooks are silent when all went well (git checkout, merge,
// pull, rebase, commit --amend after the context branch moved), and when the refresh fails (checkout lock
// held, .context a symbolic link of the user's branch, a broken config) git's stderr says why and that the
// git command succeeded; the git command still succeeds. Before, the shim sent ctx's stderr to /dev/null.
func TestHooksSayWhyTheRefreshFailed(t *testing.T) {
	repo := testenv.NewRepo(t)
	mustCtx(t, repo, nil, 0, "init")
	mustCtx(t, repo, nil, 0, "knowledge", "set", "k", "v1")
	testenv.Git(t, repo, "branch", "feature")
	moved := func(v string) { // the context branch moves behind .context/'s back
		t.Helper()
		mustCtx(t, repo, nil, 0, "knowledge", "set", "k", v)
		testenv.Git(t, repo, "update-ref", "refs/heads/ctx", "ctx~1")
	}
	quiet := func(args ...string) {
		t.Helper()
		if code, stderr := gitStderr(t, repo, args...); code != 0 || stderr != "" {
			t.Errorf("git %v: exit %d, stderr %q (want 0 and nothing)", args, code, stderr)
		}
	}
	moved("v2")
	quiet("checkout", "-q", "feature")
	if got, _ := readCtxFile(repo, "knowledge/k.md"); !strings.Contains(got, "v1") {
		t.Fatalf("the checkout did not refresh .context/: %q", got)
	}
	testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "f")
	moved("v3")
	quiet("checkout", "-q", "main")
	moved("v4")
	quiet("merge", "-q", "--no-edit", "feature")
	moved("v5")
	quiet("commit", "-q", "--amend", "--allow-empty", "-m", "f2")

	// The checkout lock held by another process past the hook's time limit.
	moved("v6")
	lock, err := os.OpenFile(filepath.Join(repo, ".git", "ctx", "checkout.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	code, stderr := gitStderr(t, repo, "checkout", "-q", "feature")
	_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	_ = lock.Close()
	if code != 0 || !strings.Contains(stderr, "post-checkout: refresh .context") || !strings.Contains(stderr, "checkout lock") ||
		!strings.Contains(stderr, "git's own command succeeded") {
		t.Errorf("git checkout with the checkout lock held: exit %d, stderr:\n%s", code, stderr)
	}

	// A broken config: ctx cannot open the store.
	cfg := filepath.Join(repo, ".git", "ctx", "config.json")
	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr = gitStderr(t, repo, "checkout", "-q", "main")
	if code != 0 || !strings.Contains(stderr, "config.json") || !strings.Contains(stderr, "git's own command succeeded") {
		t.Errorf("git checkout with a broken config: exit %d, stderr:\n%s", code, stderr)
	}
	if err := os.WriteFile(cfg, good, 0o644); err != nil {
		t.Fatal(err)
	}

	// The user's branch puts a symbolic link at .context.
	testenv.Git(t, repo, "checkout", "-q", "-b", "evil")
	if err := os.RemoveAll(filepath.Join(repo, ".context")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(repo, ".context")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "add", "-f", ".context")
	testenv.Git(t, repo, "commit", "-q", "-m", "link")
	testenv.Git(t, repo, "checkout", "-q", "main")
	code, stderr = gitStderr(t, repo, "checkout", "-q", "evil")
	if code != 0 || !strings.Contains(stderr, "symbolic link") || !strings.Contains(stderr, "git's own command succeeded") {
		t.Errorf("git checkout of a branch with a .context link: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestHookTimeoutMin: the shim sets CTX_HOOK_TIMEOUT=2 for a refresh hook whatever the environment holds;
// CTX_HOOK_TIMEOUT_MIN in git's environment raises it (a loaded machine, the tests of the hooks): with the
// checkout lock held 4 s by another process, past the 2 s limit, the post-checkout refresh waits for it
// (saying so) and brings .context/ up to date instead of failing at 2 s (TestHooksSayWhyTheRefreshFailed).
func TestHookTimeoutMin(t *testing.T) {
	repo := testenv.NewRepo(t)
	mustCtx(t, repo, nil, 0, "init")
	mustCtx(t, repo, nil, 0, "knowledge", "set", "k", "v1")
	testenv.Git(t, repo, "branch", "feature")
	mustCtx(t, repo, nil, 0, "knowledge", "set", "k", "v2")
	testenv.Git(t, repo, "update-ref", "refs/heads/ctx", "ctx~1") // .context/ holds v2, the branch v1
	lock, err := os.OpenFile(filepath.Join(repo, ".git", "ctx", "checkout.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fd := int(lock.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// The lock is released 4 s later on another goroutine, which the test waits for before it closes the
	// file (the descriptor is read once, here: lock.Fd on two goroutines is a race).
	unlocked := make(chan struct{})
	go func() {
		defer close(unlocked)
		time.Sleep(4 * time.Second)
		_ = syscall.Flock(fd, syscall.LOCK_UN)
	}()
	defer func() {
		<-unlocked
		_ = lock.Close()
	}()
	t.Setenv("CTX_HOOK_TIMEOUT_MIN", "120")
	start := time.Now()
	code, stderr := gitStderr(t, repo, "checkout", "-q", "feature")
	if code != 0 || strings.Contains(stderr, "git's own command succeeded") || strings.Contains(stderr, "time limit") {
		t.Errorf("git checkout with the lock held 4 s and CTX_HOOK_TIMEOUT_MIN=120: exit %d, stderr %q (want 0, the hook waiting, not failing)", code, stderr)
	}
	if took := time.Since(start); took < 4*time.Second {
		t.Errorf("the checkout took %v: the hook did not wait for the lock", took)
	}
	if got, _ := readCtxFile(repo, "knowledge/k.md"); !strings.Contains(got, "v1") {
		t.Errorf("the hook did not refresh .context/ after the lock was released: %q", got)
	}
}

// gitCombined runs git in dir and returns its standard output and error together; the test fails on error.
func gitCombined(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// refsOf lists the refs of the bare repository remote, one "OID NAME" a line.
func refsOf(t testing.TB, remote string) string {
	t.Helper()
	return testenv.Git(t, remote, "for-each-ref", "--format=%(objectname) %(refname)")
}

// TestHooksPrePushOnlyToTheContextRemote: with sync.push-with-git, a `git push --dry-run` pushes nothing of
// the context (git runs pre-push for it too), a push of the code to a fork (by its name or by its URL)
// publishes no context there, and a push to the remote ctx syncs with (by its name, or by its URL)
// publishes it (docs/hooks.md "pre-push: which remote, and dry runs").
func TestHooksPrePushOnlyToTheContextRemote(t *testing.T) {
	base, remote := seededRemote(t, "remote.git")
	fork := filepath.Join(base, "fork.git")
	testenv.Git(t, "", "init", "-q", "--bare", "-b", "main", fork)
	a := cloneURL(t, remote, "a")
	testenv.Git(t, a, "remote", "add", "fork", fork)
	mustCtx(t, a, nil, 0, "init")
	mustCtx(t, a, nil, 0, "config", "sync.push-with-git", "true")
	mustCtx(t, a, nil, 0, "config", "remote", "origin")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	commit := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(a, "code.go"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, a, "add", "code.go")
		testenv.Git(t, a, "commit", "-qm", body)
	}
	commit("package x\n")

	before := refsOf(t, remote)
	for _, args := range [][]string{{"push", "--dry-run", "origin", "main"}, {"push", "-nq", "origin", "main"},
		{"-c", "alias.pn=push -n", "pn", "origin", "main"}} {
		out := gitCombined(t, a, args...)
		if got := refsOf(t, remote); got != before {
			t.Fatalf("git %s wrote to the remote:\nbefore:\n%s\nafter:\n%s", strings.Join(args, " "), before, got)
		}
		if !strings.Contains(out, "ctx: git push --dry-run: the context branch is not pushed") {
			t.Errorf("git %s does not say the context was not pushed:\n%s", strings.Join(args, " "), out)
		}
	}

	for _, to := range []string{"fork", fork} {
		out := gitCombined(t, a, "push", "-q", to, "main")
		if got := refsOf(t, fork); strings.Contains(got, "refs/heads/ctx") || strings.Contains(got, "refs/ctx/") {
			t.Fatalf("git push %s published the context to the fork:\n%s", to, got)
		}
		if !strings.Contains(out, "ctx: not pushing the context branch to "+to+": ctx syncs with origin") || strings.Count(out, "\n") != 1 {
			t.Errorf("git push %s: want one line saying why nothing was pushed, got:\n%s", to, out)
		}
	}
	if got, want := testenv.Git(t, fork, "rev-parse", "main"), testenv.Git(t, a, "rev-parse", "main"); got != want {
		t.Fatalf("the code did not reach the fork: %s, want %s", got, want)
	}

	// The remote ctx syncs with, by its URL, then by its name.
	gitCombined(t, a, "push", "-q", remote, "main")
	if got, want := testenv.Git(t, remote, "rev-parse", "refs/heads/ctx"), testenv.Git(t, a, "rev-parse", "refs/heads/ctx"); got != want {
		t.Fatalf("git push by the URL of origin: the remote's ctx is %s, want %s", got, want)
	}
	mustCtx(t, a, nil, 0, "knowledge", "set", "k2", "v2")
	commit("package y\n")
	gitCombined(t, a, "push", "-q", "origin", "main")
	if got, want := testenv.Git(t, remote, "rev-parse", "refs/heads/ctx"), testenv.Git(t, a, "rev-parse", "refs/heads/ctx"); got != want {
		t.Fatalf("git push origin: the remote's ctx is %s, want %s", got, want)
	}
}

// TestHooksPathInWorkTree: a hooks folder the repository tracks (core.hooksPath=.githooks) is the user's
// files: ctx init writes nothing there and prints the lines to add, so `git status` stays clean and a
// checkout of a commit that changes a hook goes through; `ctx hooks install --in-work-tree` edits them on
// request, and the hooks then run ctx (docs/hooks.md "Where the hooks go").
func TestHooksPathInWorkTree(t *testing.T) {
	repo := testenv.NewRepo(t)
	hook := filepath.Join(repo, ".githooks", "post-checkout")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho team hook\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "add", ".githooks")
	testenv.Git(t, repo, "commit", "-qm", "team hooks")
	testenv.Git(t, repo, "config", "core.hooksPath", ".githooks")
	testenv.Git(t, repo, "checkout", "-q", "-b", "newer")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho team hook v2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "commit", "-qam", "v2")
	testenv.Git(t, repo, "checkout", "-q", "main")

	user := userSide(t, repo)
	out := mustCtx(t, repo, nil, 0, "init").stdout
	if got := userSide(t, repo); got != user {
		t.Fatalf("ctx init changed the user's side:\nbefore:\n%s\nafter:\n%s", user, got)
	}
	if !strings.Contains(out, "ctx hooks install --in-work-tree") || !strings.Contains(out, "ctx hooks run post-merge \"$@\"") {
		t.Errorf("ctx init does not say how to add the hooks:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("ctx init wrote .git/hooks/post-checkout, which git does not run with core.hooksPath")
	}
	gitCombined(t, repo, "checkout", "-q", "newer")
	gitCombined(t, repo, "checkout", "-q", "main")
	mustCtx(t, repo, nil, 0, "config", "sync.push-with-git", "true")
	if got := userSide(t, repo); got != user {
		t.Fatalf("ctx config sync.push-with-git changed the user's side:\n%s", got)
	}
	if st := mustCtx(t, repo, nil, 0, "hooks", "status", "--json").stdout; !strings.Contains(st, `"in_work_tree": true`) {
		t.Errorf("ctx hooks status --json:\n%s", st)
	}
	// Status prints every line to add, pre-push too now that sync.push-with-git is on (as install does).
	if st := mustCtx(t, repo, nil, 0, "hooks", "status").stdout; !strings.Contains(st, filepath.Join(repo, ".githooks", "pre-push")+"\n") ||
		!strings.Contains(st, "ctx hooks run pre-push \"$@\"") || !strings.Contains(st, "ctx hooks run post-checkout \"$@\"") {
		t.Errorf("ctx hooks status does not print the pre-push line to add:\n%s", st)
	}

	// On request: the blocks go in, and git runs them.
	mustCtx(t, repo, nil, 0, "hooks", "install", "--in-work-tree")
	b, err := os.ReadFile(hook)
	if err != nil || !strings.HasPrefix(string(b), "#!/bin/sh\necho team hook\n") || !strings.Contains(string(b), " ctx hooks run post-checkout") {
		t.Fatalf(".githooks/post-checkout after install --in-work-tree: %q %v", b, err)
	}
	mustCtx(t, repo, nil, 0, "knowledge", "set", "k", "v")
	if _, ok := readCtxFile(repo, "knowledge/k.md"); !ok {
		t.Fatal("ctx knowledge set wrote no .context/knowledge/k.md")
	}
	testenv.Git(t, repo, "update-ref", "refs/heads/ctx", "refs/heads/ctx~1")
	testenv.Git(t, repo, "checkout", "-q", "-b", "other")
	if _, ok := readCtxFile(repo, "knowledge/k.md"); ok {
		t.Errorf("the post-checkout hook in .githooks did not refresh .context/ after the branch moved back")
	}
}
