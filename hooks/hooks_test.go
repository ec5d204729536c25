package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

var bg = context.Background()

func TestInstallFreshRepo(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(repo, ".git", "hooks")
	if st.Dir != wantDir || st.Manager != NoManager || st.Snippet != "" {
		t.Fatalf("status = %+v, want dir %s and no manager", st, wantDir)
	}
	for _, h := range DefaultHooks {
		hs, _ := st.Hook(h)
		if !hs.Installed || !hs.Exists || !hs.Executable || hs.UserContent || !hs.Changed {
			t.Errorf("%s: %+v", h, hs)
		}
		fi, err := os.Stat(hs.Path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s mode %v, want 0755", h, fi.Mode().Perm())
		}
		golden(t, string(h)+".new", readFile(t, hs.Path))
	}
	if hs, _ := st.Hook(PrePush); hs.Exists || hs.Installed {
		t.Errorf("pre-push installed without opt-in: %+v", hs)
	}

	// The hooks call `ctx hooks run <name> <git's args>`.
	pathEnv, logFile := fakeCtx(t, "exit 0")
	old := gitIn(t, repo, pathEnv, "rev-parse", "HEAD")
	gitIn(t, repo, pathEnv, "checkout", "-q", "-b", "x")
	writeFile(t, filepath.Join(repo, "b.txt"), "b\n", 0o644)
	gitIn(t, repo, pathEnv, "add", "b.txt")
	gitIn(t, repo, pathEnv, "commit", "-q", "-m", "b")
	gitIn(t, repo, pathEnv, "checkout", "-q", "main")
	gitIn(t, repo, pathEnv, "merge", "-q", "--no-ff", "--no-edit", "x")
	gitIn(t, repo, pathEnv, "commit", "-q", "--amend", "-m", "merge x")
	gitIn(t, repo, pathEnv, "checkout", "-q", "--", "a.txt")
	x := gitIn(t, repo, pathEnv, "rev-parse", "x")
	want := []string{
		"hooks run post-checkout " + old + " " + old + " 1",
		"hooks run post-checkout " + x + " " + old + " 1",
		"hooks run post-merge 0",
		"hooks run post-rewrite amend",
	}
	got := readLog(t, logFile)
	if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("ctx calls:\n%s\nwant first:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The file checkout (flag 0) moves no branch: the shim does not start ctx for it.
	if len(got) != len(want) {
		t.Errorf("file checkout call: %q", got[len(want):])
	}

	// Install twice: same bytes, nothing rewritten.
	before := snapshot(t, st.Dir)
	st2, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, hs := range st2.Hooks {
		if hs.Changed {
			t.Errorf("second install rewrote %s", hs.Name)
		}
	}
	if after := snapshot(t, st.Dir); !reflect.DeepEqual(before, after) {
		t.Error("second install changed the hooks dir")
	}

	// Uninstall removes the files ctx created.
	st3, err := Uninstall(bg, repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, hs := range st3.Hooks {
		if hs.Exists || hs.Installed {
			t.Errorf("after uninstall %s: %+v", hs.Name, hs)
		}
	}
}

func TestPrePushOptIn(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	st, err := Install(bg, repo, Options{PrePush: true})
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := st.Hook(PrePush)
	if !hs.Installed {
		t.Fatalf("pre-push: %+v", hs)
	}
	golden(t, "pre-push.new", readFile(t, hs.Path))

	// A plain Install keeps the earlier opt-in.
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := Report(bg, repo, Options{}); !mustHook(t, st, PrePush).Installed {
		t.Fatal("plain install dropped pre-push")
	}

	// git push runs `ctx hooks run pre-push <remote> <url>`; a failing ctx
	// is reported on stderr and the push still succeeds.
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, repo, "", "init", "-q", "--bare", remote)
	gitIn(t, repo, "", "remote", "add", "origin", remote)
	pathEnv, logFile := fakeCtx(t, "echo 'remote said no' >&2; exit 1")
	out := gitIn(t, repo, pathEnv, "push", "-q", "origin", "main")
	if !strings.Contains(out, "remote said no") || !strings.Contains(out, "pushing the context branch failed") {
		t.Errorf("push output: %q", out)
	}
	if got := readLog(t, logFile); len(got) != 1 || got[0] != "hooks run pre-push origin "+remote {
		t.Errorf("ctx calls: %q", got)
	}
	if gitIn(t, remote, "", "rev-parse", "main") != gitIn(t, repo, "", "rev-parse", "main") {
		t.Error("push did not happen")
	}
}

func mustHook(t *testing.T, st Status, h Hook) HookStatus {
	t.Helper()
	hs, ok := st.Hook(h)
	if !ok {
		t.Fatalf("no %s in %+v", h, st)
	}
	return hs
}

// TestFailOpen: git commands succeed, in bounded time, whatever ctx does.
func TestFailOpen(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body string }{
		{"missing", ""},
		{"exit1", "echo broken >&2; exit 1"},
		{"reads-stdin", "cat >/dev/null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			if _, err := Install(bg, repo, Options{}); err != nil {
				t.Fatal(err)
			}
			pathEnv, logFile := "", ""
			if c.name != "missing" {
				pathEnv, logFile = fakeCtx(t, c.body)
			}
			// gitIn bounds each command by 8 s and fails on a non-zero exit.
			gitIn(t, repo, pathEnv, "checkout", "-q", "-b", "x")
			writeFile(t, filepath.Join(repo, "b.txt"), "b\n", 0o644)
			gitIn(t, repo, pathEnv, "add", "b.txt")
			gitIn(t, repo, pathEnv, "commit", "-q", "-m", "b")
			gitIn(t, repo, pathEnv, "checkout", "-q", "main")
			gitIn(t, repo, pathEnv, "merge", "-q", "--no-edit", "x")
			gitIn(t, repo, pathEnv, "commit", "-q", "--amend", "-m", "b2")
			if logFile != "" {
				got := readLog(t, logFile)
				if len(got) != 4 || !strings.HasPrefix(got[3], "hooks run post-rewrite amend") {
					t.Errorf("ctx calls: %q", got)
				}
			}
		})
	}
}

// TestShimStartsCtxDirectly: the shim starts ctx itself, with its time limit in CTX_HOOK_TIMEOUT (ctx
// bounds itself: cmd/ctx's hook watchdog), and no other process (timeout(1)) between the hook's shell and
// ctx.
func TestShimStartsCtxDirectly(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	// The fake ctx logs its argv, then its limit and the name of the process that started it.
	pathEnv, logFile := fakeCtx(t, `printf '%s %s\n' "$CTX_HOOK_TIMEOUT" "$(cat /proc/$PPID/comm)" >> "$(dirname "$0")/ctx.log"`)
	if _, err := os.Stat("/proc/self/comm"); err != nil {
		t.Skip("no /proc: cannot name the parent process")
	}
	gitIn(t, repo, pathEnv, "checkout", "-q", "-b", "x")
	got := readLog(t, logFile)
	if len(got) != 2 || !strings.HasPrefix(got[0], "hooks run post-checkout ") {
		t.Fatalf("ctx calls: %q", got)
	}
	if got[1] != "2 post-checkout" {
		t.Errorf("ctx started with limit and parent %q, want %q (the hook's shell)", got[1], "2 post-checkout")
	}
}

// TestShimStartsFullBesideCtx: the shim starts the ctx-full that sits beside the ctx `command -v` finds
// (what the lean front would execve for `ctx hooks run`), with the same arguments, limit and streams; it
// starts ctx by name when there is no executable file ctx-full there (a front or an older single program
// alone, a ctx-full folder or one without the x bit, a ctx reached through a symbolic link from another
// folder), and nothing when no ctx is on the PATH, whatever ctx-full is.
func TestShimStartsFullBesideCtx(t *testing.T) {
	t.Parallel()
	logLine := func(name string) string {
		return fmt.Sprintf("#!/bin/sh\nprintf '%s %%s|%%s\\n' \"$*\" \"$CTX_HOOK_TIMEOUT\" >> \"$(dirname \"$0\")/calls.log\"\n", name)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, bin string) string // returns the PATH entry to put first
		want  string                                // the program called ("" = none)
	}{
		{"beside", func(t *testing.T, bin string) string {
			writeFile(t, filepath.Join(bin, "ctx"), logLine("ctx"), 0o755)
			writeFile(t, filepath.Join(bin, "ctx-full"), logLine("ctx-full"), 0o755)
			return bin
		}, "ctx-full"},
		{"alone", func(t *testing.T, bin string) string {
			writeFile(t, filepath.Join(bin, "ctx"), logLine("ctx"), 0o755)
			return bin
		}, "ctx"},
		{"not executable", func(t *testing.T, bin string) string {
			writeFile(t, filepath.Join(bin, "ctx"), logLine("ctx"), 0o755)
			writeFile(t, filepath.Join(bin, "ctx-full"), logLine("ctx-full"), 0o644)
			return bin
		}, "ctx"},
		{"folder", func(t *testing.T, bin string) string {
			writeFile(t, filepath.Join(bin, "ctx"), logLine("ctx"), 0o755)
			if err := os.Mkdir(filepath.Join(bin, "ctx-full"), 0o755); err != nil {
				t.Fatal(err)
			}
			return bin
		}, "ctx"},
		{"link from elsewhere", func(t *testing.T, bin string) string {
			real := filepath.Join(bin, "real")
			writeFile(t, filepath.Join(real, "ctx"), logLine("ctx"), 0o755)
			writeFile(t, filepath.Join(real, "ctx-full"), logLine("ctx-full"), 0o755)
			links := filepath.Join(bin, "links")
			if err := os.Mkdir(links, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(real, "ctx"), filepath.Join(links, "ctx")); err != nil {
				t.Fatal(err)
			}
			return links
		}, "ctx"},
		{"no ctx", func(t *testing.T, bin string) string {
			writeFile(t, filepath.Join(bin, "ctx-full"), logLine("ctx-full"), 0o755)
			return bin
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			if _, err := Install(bg, repo, Options{}); err != nil {
				t.Fatal(err)
			}
			bin := t.TempDir()
			first := c.setup(t, bin)
			path := first + string(os.PathListSeparator) + pathWithoutCtx()
			gitIn(t, repo, path, "checkout", "-q", "-b", "x")
			gitIn(t, repo, path, "commit", "-q", "--amend", "-m", "amended") // post-rewrite
			logs, _ := filepath.Glob(filepath.Join(bin, "*", "calls.log"))
			if l, err := filepath.Glob(filepath.Join(bin, "calls.log")); err == nil {
				logs = append(logs, l...)
			}
			var got []string
			for _, l := range logs {
				got = append(got, readLog(t, l)...)
			}
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("calls without ctx on the PATH: %q", got)
				}
				return
			}
			// post-checkout starts ctx by name whatever is beside it: the lean front answers it on its happy
			// path (docs/hooks.md "The shim starts ctx-full"); post-rewrite starts the program of the case.
			sort.Strings(got)
			if len(got) != 2 || !strings.HasPrefix(got[0], "ctx hooks run post-checkout ") || !strings.HasSuffix(got[0], " 1|2") ||
				got[1] != c.want+" hooks run post-rewrite amend|2" {
				t.Fatalf("calls: %q, want ctx hooks run post-checkout OLD NEW 1 and %s hooks run post-rewrite amend, each with limit 2", got, c.want)
			}
		})
	}
}

// TestInstallUpgradesOldShim: a hook holding the block of an earlier ctx (the one that ran timeout(1)),
// among the user's lines, gets the current block in its place; the user's lines stay as they were.
func TestInstallUpgradesOldShim(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	old := readFile(t, filepath.Join(goldenDir, "post-checkout.user-exec.v1"))
	if !strings.Contains(old, "timeout -k 1 2 ctx hooks run") {
		t.Fatal("the fixture is not an old shim")
	}
	p := filepath.Join(repo, ".git", "hooks", "post-checkout")
	writeFile(t, p, old, 0o755)
	// Report says the block is another version's, and how to update it.
	rep, err := Report(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !mustHook(t, rep, PostCheckout).Outdated || !strings.Contains(strings.Join(rep.Notes, "\n"), "post-checkout was written by another version of ctx: run ctx hooks install") {
		t.Errorf("report of an old block: %+v", rep)
	}
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !mustHook(t, st, PostCheckout).Changed {
		t.Error("install left the old block in place")
	}
	if mustHook(t, st, PostCheckout).Outdated {
		t.Error("the block just installed is reported outdated")
	}
	if rep, err = Report(bg, repo, Options{}); err != nil || mustHook(t, rep, PostCheckout).Outdated || strings.Contains(strings.Join(rep.Notes, "\n"), "another version") {
		t.Errorf("report after install: %+v %v", rep, err)
	}
	got := readFile(t, p)
	if strings.Contains(got, "timeout") {
		t.Errorf("the upgraded hook still runs timeout(1):\n%s", got)
	}
	if !strings.Contains(got, Block(PostCheckout, false)) {
		t.Errorf("the upgraded hook lacks the current block:\n%s", got)
	}
	userOld, _, err := RemoveBlocks([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	userNew, _, err := RemoveBlocks([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if string(userOld) != string(userNew) {
		t.Errorf("the user's lines changed:\n%s\nwant\n%s", userNew, userOld)
	}
}

// TestCTXHooksOffInShim: CTX_HOOKS=0 and CTX_IN_HOOK keep the shim from
// starting ctx at all.
func TestCTXHooksOffInShim(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	pathEnv, logFile := fakeCtx(t, "")
	for _, env := range []string{"CTX_HOOKS=0", "CTX_IN_HOOK=1"} {
		cmd := exec.Command("git", "-C", repo, "checkout", "-q", "-b", "off-"+strings.Split(env, "=")[0])
		cmd.Env = append(os.Environ(), "PATH="+pathEnv, env)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	if got := readLog(t, logFile); len(got) != 0 {
		t.Errorf("ctx ran: %q", got)
	}
}

const userHook = `#!/bin/sh
# my post-checkout
echo "user hook $1" >> "$HOOK_LOG"
if [ "$3" = 1 ]; then
	echo branch >> "$HOOK_LOG"
fi

exec some-cmd "$@"
`

func TestExistingUserHook(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	p := filepath.Join(repo, ".git", "hooks", "post-checkout")
	writeFile(t, p, userHook, 0o750)
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := mustHook(t, st, PostCheckout)
	if !hs.Installed || !hs.UserContent || !hs.Changed {
		t.Fatalf("%+v", hs)
	}
	got := readFile(t, p)
	golden(t, "post-checkout.user-exec", got)
	// Block before the exec line, user lines unchanged around it.
	i := strings.Index(got, BeginMarker)
	j := strings.Index(got, "exec some-cmd")
	if i < 0 || j < i {
		t.Fatalf("block not before exec:\n%s", got)
	}
	blk := Block(PostCheckout, false)
	if strings.Replace(got, blk, "", 1) != userHook {
		t.Errorf("user lines changed:\n%s", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode %v, want 0750 kept", fi.Mode().Perm())
	}
	// Install twice = same bytes.
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	if again := readFile(t, p); again != got {
		t.Errorf("second install changed the file:\n%s", again)
	}
	// The user's hook still runs (exec included) with ctx's block in it.
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "some-cmd"), "#!/bin/sh\necho \"some-cmd $*\" >> \"$HOOK_LOG\"\n", 0o755)
	hookLog := filepath.Join(t.TempDir(), "hook.log")
	pathEnv, ctxLog := fakeCtx(t, "exit 3")
	cmd := exec.Command("git", "-C", repo, "checkout", "-q", "-b", "y")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+pathEnv, "HOOK_LOG="+hookLog)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("checkout: %v\n%s", err, out)
	}
	head := gitIn(t, repo, "", "rev-parse", "HEAD")
	if got, want := readLog(t, hookLog), []string{"user hook " + head, "branch", "some-cmd " + head + " " + head + " 1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("user hook log %q, want %q", got, want)
	}
	if got := readLog(t, ctxLog); len(got) != 1 {
		t.Errorf("ctx calls %q", got)
	}
	// Uninstall restores the file byte for byte, mode kept.
	if _, err := Uninstall(bg, repo); err != nil {
		t.Fatal(err)
	}
	if back := readFile(t, p); back != userHook {
		t.Errorf("uninstall left:\n%s", back)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode %v after uninstall", fi.Mode().Perm())
	}
	// The other hooks, created by ctx, are gone.
	if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "post-merge")); !os.IsNotExist(err) {
		t.Errorf("post-merge still there: %v", err)
	}
}

// TestExitStatusKept: appending the block does not change what the user's
// hook returns to git.
func TestExitStatusKept(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"0", "1", "7"} {
		content := "#!/bin/sh\necho hi >/dev/null\nsh -c 'exit " + code + "'\n"
		out, err := AddBlock([]byte(content), PostMerge)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "post-merge")
		writeFile(t, p, string(out), 0o755)
		pathEnv, _ := fakeCtx(t, "exit 0")
		for _, sh := range []string{"sh", "bash", "dash"} {
			if _, err := exec.LookPath(sh); err != nil {
				continue
			}
			cmd := exec.Command(sh, p, "0")
			cmd.Env = append(os.Environ(), "PATH="+pathEnv)
			err := cmd.Run()
			got := "0"
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				got = strings.TrimPrefix(ee.Error(), "exit status ")
			} else if err != nil {
				t.Fatal(err)
			}
			if got != code {
				t.Errorf("%s: hook exit %s, want %s", sh, got, code)
			}
		}
	}
}

func TestHooksPathFolder(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitIn(t, repo, "", "config", "core.hooksPath", ".githooks")
	writeFile(t, filepath.Join(repo, ".githooks", "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
	gitIn(t, repo, "", "add", ".githooks")
	gitIn(t, repo, "", "commit", "-qm", "team hooks")
	// The folder is the user's files: without InWorkTree, nothing is written, and the snippet says what to add.
	st, err := Install(bg, repo, Options{PrePush: true})
	if err != nil {
		t.Fatal(err)
	}
	if !st.InWorkTree || st.Manager != NoManager || !strings.Contains(st.Snippet, "--in-work-tree") ||
		!strings.Contains(st.Snippet, "# "+filepath.Join(repo, ".githooks", "pre-push")+"\n"+shellLine(PrePush, `"$@"`)+"\n") {
		t.Errorf("Install into .githooks without InWorkTree: %+v", st)
	}
	for _, hs := range st.Hooks {
		if hs.Changed || hs.Installed || hs.Exists {
			t.Errorf("Install without InWorkTree: %+v", hs)
		}
	}
	if got := gitIn(t, repo, "", "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Fatalf("Install without InWorkTree changed the work tree:\n%s", got)
	}
	if st, err := Report(bg, repo, Options{}); err != nil || !st.InWorkTree || st.Snippet == "" || strings.Contains(st.Snippet, "pre-push") {
		t.Errorf("Report: %+v %v", st, err)
	}
	// With pre-push opted in (sync.push-with-git), the report names its line too, as Install does.
	if rep, err := Report(bg, repo, Options{PrePush: true}); err != nil || rep.Snippet != st.Snippet {
		t.Errorf("Report with PrePush: %q %v, want Install's %q", rep.Snippet, err, st.Snippet)
	}
	st, err = Install(bg, repo, Options{InWorkTree: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Snippet != "" || !st.InWorkTree {
		t.Errorf("Install with InWorkTree: %+v", st)
	}
	if want := filepath.Join(repo, ".githooks"); st.Dir != want {
		t.Fatalf("dir %s, want %s", st.Dir, want)
	}
	for _, hs := range st.Hooks[:3] {
		if !hs.Installed || filepath.Dir(hs.Path) != st.Dir {
			t.Errorf("%+v", hs)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "post-checkout")); !os.IsNotExist(err) {
		t.Error("wrote into .git/hooks despite core.hooksPath")
	}
	if v := gitIn(t, repo, "", "config", "core.hooksPath"); v != ".githooks" {
		t.Errorf("core.hooksPath changed to %q", v)
	}
	// Dir from a subdirectory is the same.
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if d, err := Dir(bg, sub); err != nil || d != st.Dir {
		t.Errorf("Dir(sub) = %s, %v", d, err)
	}
	pathEnv, logFile := fakeCtx(t, "")
	gitIn(t, repo, pathEnv, "checkout", "-q", "-b", "z")
	if got := readLog(t, logFile); len(got) != 1 || !strings.HasPrefix(got[0], "hooks run post-checkout") {
		t.Errorf("ctx calls %q", got)
	}
}

func TestLinkedWorktree(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, repo, "", "worktree", "add", "-q", "-b", "wtb", wt)
	d1, err := Dir(bg, repo)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := Dir(bg, wt)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 || d1 != filepath.Join(repo, ".git", "hooks") {
		t.Fatalf("Dir main %s, worktree %s", d1, d2)
	}
	st, err := Install(bg, wt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Dir != d1 || len(st.Notes) != 0 {
		t.Errorf("status %+v", st)
	}
	pathEnv, logFile := fakeCtx(t, "")
	gitIn(t, wt, pathEnv, "checkout", "-q", "-b", "wt2")
	if got := readLog(t, logFile); len(got) != 1 {
		t.Errorf("ctx calls %q", got)
	}
}

func TestOutsideHooksPathNote(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	shared := filepath.Join(t.TempDir(), "shared-hooks")
	gitIn(t, repo, "", "config", "core.hooksPath", shared)
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Dir != shared || len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "outside this repository") {
		t.Errorf("%+v", st)
	}
}

func TestManagers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		want  Manager
		setup func(t *testing.T, repo string)
	}{
		{"husky", Husky, func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, ".husky", "pre-commit"), "npm test\n", 0o644)
			writeFile(t, filepath.Join(repo, ".husky", "_", "h"), "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/husky.sh\"\n", 0o755)
			writeFile(t, filepath.Join(repo, ".husky", "_", "pre-commit"), "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n", 0o755)
			gitIn(t, repo, "", "config", "core.hooksPath", ".husky/_")
		}},
		{"lefthook", Lefthook, func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, "lefthook.yml"), "pre-commit:\n  commands:\n    lint:\n      run: make lint\n", 0o644)
		}},
		{"lefthook-hook-file", Lefthook, func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\n\nif [ \"$LEFTHOOK\" = \"0\" ]; then\n  exit 0\nfi\nlefthook run \"pre-commit\" \"$@\"\n", 0o755)
		}},
		{"pre-commit", PreCommit, func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, ".pre-commit-config.yaml"), "repos: []\n", 0o644)
		}},
		{"pre-commit-hook-file", PreCommit, func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n# ID: 138fd403232d2ddd5efb44317e38bf03\n", 0o755)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			c.setup(t, repo)
			dir, err := Dir(bg, repo)
			if err != nil {
				t.Fatal(err)
			}
			if m := DetectManager(bg, repo, dir); m != c.want {
				t.Fatalf("DetectManager = %q, want %q", m, c.want)
			}
			beforeHooks, beforeHusky := snapshot(t, dir), snapshot(t, filepath.Join(repo, ".husky"))
			st, err := Install(bg, repo, Options{PrePush: true})
			if err != nil {
				t.Fatal(err)
			}
			if st.Manager != c.want || st.Snippet == "" || st.Snippet != SnippetFor(c.want, Options{PrePush: true}) {
				t.Errorf("status %+v", st)
			}
			for _, hs := range st.Hooks {
				if hs.Installed || hs.Changed {
					t.Errorf("%s written: %+v", hs.Name, hs)
				}
			}
			if !reflect.DeepEqual(beforeHooks, snapshot(t, dir)) || !reflect.DeepEqual(beforeHusky, snapshot(t, filepath.Join(repo, ".husky"))) {
				t.Error("Install changed files of the manager")
			}
			if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "post-checkout")); !os.IsNotExist(err) {
				t.Error("post-checkout written")
			}
			if r, err := Report(bg, repo, Options{}); err != nil || r.Manager != c.want || r.Snippet != Snippet(c.want) {
				t.Errorf("report %+v %v", r, err)
			}
		})
	}
}

func TestSnippetsGolden(t *testing.T) {
	t.Parallel()
	for _, m := range []Manager{Husky, Lefthook, PreCommit} {
		golden(t, "snippet."+string(m), SnippetFor(m, Options{PrePush: true}))
		if !strings.Contains(Snippet(m), "post-rewrite") || strings.Contains(Snippet(m), "pre-push") {
			t.Errorf("Snippet(%s):\n%s", m, Snippet(m))
		}
	}
	if Snippet(NoManager) != "" {
		t.Error("snippet without manager")
	}
	// The husky snippet lines are valid sh.
	for _, h := range AllHooks {
		if out, err := exec.Command("sh", "-n", "-c", shellLine(h, `"$@"`)).CombinedOutput(); err != nil {
			t.Errorf("%s: %v %s", h, err, out)
		}
	}
}

func TestSkippedFiles(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	hooks := filepath.Join(repo, ".git", "hooks")
	py := "#!/usr/bin/env python3\nprint('hi')\n"
	writeFile(t, filepath.Join(hooks, "post-merge"), py, 0o755)
	target := filepath.Join(t.TempDir(), "shared-post-rewrite")
	writeFile(t, target, "#!/bin/sh\necho shared\n", 0o755)
	if err := os.Symlink(target, filepath.Join(hooks, "post-rewrite")); err != nil {
		t.Fatal(err)
	}
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hs := mustHook(t, st, PostMerge); hs.Installed || !strings.Contains(hs.Skipped, "not a shell script") {
		t.Errorf("%+v", hs)
	}
	if hs := mustHook(t, st, PostRewrite); hs.Installed || !strings.Contains(hs.Skipped, "symlink") {
		t.Errorf("%+v", hs)
	}
	if readFile(t, filepath.Join(hooks, "post-merge")) != py || readFile(t, target) != "#!/bin/sh\necho shared\n" {
		t.Error("skipped files changed")
	}
	if hs := mustHook(t, st, PostCheckout); !hs.Installed {
		t.Errorf("%+v", hs)
	}
}

func TestUninstallKeepsUserLinesInCreatedFile(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := mustHook(t, st, PostMerge).Path
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("echo mine\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := Report(bg, repo, Options{}); !mustHook(t, st, PostMerge).UserContent {
		t.Error("user content not reported")
	}
	if _, err := Uninstall(bg, repo); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "#!/bin/sh\necho mine\n" {
		t.Errorf("left %q", got)
	}
}

// TestUninstallKeepsEditedBlock: a line the user added inside ctx's block (or a line of it changed) no
// longer matches the block's SHA-256 line: uninstall leaves that file as it is and says why (Skipped),
// and still removes the untouched blocks of the other hooks. A block without the checksum line (an older
// ctx wrote it) is removed as before.
func TestUninstallKeepsEditedBlock(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := mustHook(t, st, PostMerge).Path
	edited := strings.Replace(readFile(t, p), "ctx_hook_rc=$?\n", "ctx_hook_rc=$?\necho MINE\n", 1)
	writeFile(t, p, edited, 0o755)
	pc := mustHook(t, st, PostCheckout).Path
	st, err = Uninstall(bg, repo)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != edited {
		t.Errorf("the edited hook was changed:\n%s", got)
	}
	if hs := mustHook(t, st, PostMerge); hs.Changed || !strings.Contains(hs.Skipped, "edited by hand") {
		t.Errorf("post-merge: %+v", hs)
	}
	if _, err := os.Stat(pc); !os.IsNotExist(err) {
		t.Errorf("post-checkout, not edited, is still there: %v", err)
	}
	// Legacy block: no checksum line, removed whole.
	legacy := regexp.MustCompile(`(?m)^# ctx-block-sha256: [0-9a-f]+\n`).ReplaceAllString(readFile(t, p), "")
	writeFile(t, p, legacy, 0o755)
	if _, err := Uninstall(bg, repo); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a block without checksum was not removed: %v", err)
	}
}

func TestNotExecutableNote(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	p := filepath.Join(repo, ".git", "hooks", "post-merge")
	writeFile(t, p, "#!/bin/sh\necho off\n", 0o644)
	st, err := Install(bg, repo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := mustHook(t, st, PostMerge)
	if !hs.Installed || hs.Executable || len(st.Notes) != 1 {
		t.Errorf("%+v %q", hs, st.Notes)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}
}

func TestDirNotARepo(t *testing.T) {
	t.Parallel()
	if _, err := Install(bg, t.TempDir(), Options{}); err == nil {
		t.Error("Install outside a repository succeeded")
	}
}

// An empty core.hooksPath: git looks for each hook at "/<name>" and runs none (git rev-parse --git-path
// hooks/x prints /x). Status and Install fail with ErrHooksPath; Install writes nothing (not into the work
// tree, which `--git-path hooks` names as "./", nor into .git/hooks).
func TestEmptyHooksPath(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitIn(t, repo, "", "config", "core.hooksPath", "")
	if _, err := Report(bg, repo, Options{}); !errors.Is(err, ErrHooksPath) || !strings.Contains(err.Error(), "git config --unset core.hooksPath") {
		t.Errorf("Report: %v", err)
	}
	if _, err := Install(bg, repo, Options{}); !errors.Is(err, ErrHooksPath) {
		t.Errorf("Install: %v", err)
	}
	for _, p := range []string{filepath.Join(repo, "post-checkout"), filepath.Join(repo, ".git", "hooks", "post-checkout")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s written", p)
		}
	}
	// What git itself does: the hook runs without the setting, and not with it.
	writeFile(t, filepath.Join(repo, ".git", "hooks", "post-checkout"), "#!/bin/sh\ntouch ran\n", 0o755)
	gitIn(t, repo, "", "-c", "core.hooksPath=.git/hooks", "checkout", "-q", "-b", "one")
	if _, err := os.Stat(filepath.Join(repo, "ran")); err != nil {
		t.Fatalf("the hook did not run with a set core.hooksPath: %v", err)
	}
	os.Remove(filepath.Join(repo, "ran"))
	gitIn(t, repo, "", "checkout", "-q", "-b", "other")
	if _, err := os.Stat(filepath.Join(repo, "ran")); !os.IsNotExist(err) {
		t.Errorf("git ran .git/hooks/post-checkout with an empty core.hooksPath: the premise changed")
	}
}

// TestHuskyV8SnippetAsTold runs the husky snippet as the user is told to, in a husky v8 repository
// (core.hooksPath=.husky, git runs .husky/<hook> itself): the hooks it makes are run by git and call ctx.
// An existing hook file without a final newline keeps its command; running the snippet twice adds nothing.
func TestHuskyV8SnippetAsTold(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, ".husky", "_", "husky.sh"), "#!/usr/bin/env sh\n", 0o644)
	mine := "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\n\ntouch merged-by-user"
	writeFile(t, filepath.Join(repo, ".husky", "post-merge"), mine, 0o755)
	gitIn(t, repo, "", "config", "core.hooksPath", ".husky")
	st, err := Report(bg, repo, Options{})
	if err != nil || st.Manager != Husky {
		t.Fatalf("report: %+v %v", st, err)
	}
	for range 2 {
		cmd := exec.Command("sh", "-c", st.Snippet)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("snippet: %v\n%s", err, out)
		}
	}
	// A stand-in ctx on PATH records its calls.
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	writeFile(t, filepath.Join(bin, "ctx"), "#!/bin/sh\necho \"$*\" >>"+log+"\n", 0o755)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("checkout", "-q", "-b", "feature")
	writeFile(t, filepath.Join(repo, "b.txt"), "b\n", 0o644)
	run("add", "b.txt")
	run("commit", "-q", "-m", "b")
	run("checkout", "-q", "main")
	run("merge", "-q", "--no-edit", "--no-ff", "feature")
	calls := readFile(t, log)
	for _, want := range []string{"hooks run post-checkout ", "hooks run post-merge "} {
		if !strings.Contains(calls, want) {
			t.Errorf("git did not run ctx's %q; calls:\n%s", want, calls)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "merged-by-user")); err != nil {
		t.Errorf("the user's own post-merge command was lost: %v", err)
	}
	pm := readFile(t, filepath.Join(repo, ".husky", "post-merge"))
	if !strings.HasPrefix(pm, mine+"\n") || strings.Count(pm, "ctx hooks run post-merge") != 1 {
		t.Errorf(".husky/post-merge:\n%s", pm)
	}
	pc := readFile(t, filepath.Join(repo, ".husky", "post-checkout"))
	if !strings.HasPrefix(pc, "#!/usr/bin/env sh\n") || strings.Count(pc, "ctx hooks run post-checkout") != 1 {
		t.Errorf(".husky/post-checkout:\n%s", pc)
	}
}

// TestPostCommitOptIn: Install with Blame adds post-commit, a plain Install keeps it, and a real git commit
// runs `ctx hooks run post-commit` with git's environment (the agent's session variable included), which
// Run turns into the Note action.
func TestPostCommitOptIn(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if st, _ := Install(bg, repo, Options{}); mustHook(t, st, PostCommit).Installed {
		t.Fatal("post-commit installed without the opt-in")
	}
	st, err := Install(bg, repo, Options{Blame: true})
	if err != nil || !mustHook(t, st, PostCommit).Installed {
		t.Fatalf("post-commit: %+v %v", st, err)
	}
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := Report(bg, repo, Options{}); !mustHook(t, st, PostCommit).Installed {
		t.Fatal("plain install dropped post-commit")
	}
	pathEnv, logFile := fakeCtx(t, `echo "thread=$CODEX_THREAD_ID" >>"$(dirname "$0")/ctx.log"`)
	cmd := exec.Command("git", "-C", repo, "commit", "-q", "--allow-empty", "-m", "by an agent")
	cmd.Env = append(os.Environ(), "PATH="+pathEnv, "CODEX_THREAD_ID=t-1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v %s", err, out)
	}
	if got := readLog(t, logFile); len(got) != 2 || got[0] != "hooks run post-commit" || got[1] != "thread=t-1" {
		t.Errorf("ctx calls: %q", got)
	}
	noted := 0
	ran, _, err := Run(bg, repo, PostCommit, nil, Actions{Note: func(ctx context.Context, wt string) error { noted++; return nil }})
	if !ran || err != nil || noted != 1 {
		t.Errorf("Run post-commit: %v %v %d", ran, err, noted)
	}
	for _, m := range []Manager{Husky, Lefthook, PreCommit} {
		if !strings.Contains(SnippetFor(m, Options{Blame: true}), "ctx hooks run post-commit") || strings.Contains(SnippetFor(m, Options{}), "post-commit") {
			t.Errorf("%s snippet and post-commit", m)
		}
	}
}

// TestNotesRewriteConfig: Install with Blame adds refs/notes/ctx to notes.rewriteRef once; Uninstall
// gives the config file back its bytes. A value the user already had that covers it (a glob) is kept by
// both, and Install adds nothing then; notes.rewrite.amend=false is reported.
func TestNotesRewriteConfig(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	cfg := filepath.Join(repo, ".git", "config")
	read := func() string {
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := read()
	for range 2 {
		if _, err := Install(bg, repo, Options{Blame: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got := testenv.Git(t, repo, "config", "--get-all", "notes.rewriteRef"); got != BlameNotesRef || !NotesRewriteConfigured(bg, repo) {
		t.Fatalf("notes.rewriteRef = %q", got)
	}
	if _, err := Uninstall(bg, repo); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != before {
		t.Fatalf("config after uninstall:\n%s\nwant:\n%s", got, before)
	}

	testenv.Git(t, repo, "config", "notes.rewriteRef", "refs/notes/*")
	testenv.Git(t, repo, "config", "notes.rewrite.amend", "false")
	mine := read()
	st, err := Install(bg, repo, Options{Blame: true})
	if err != nil || read() != mine {
		t.Fatalf("install over the user's glob changed the config: %v\n%s", err, read())
	}
	if !strings.Contains(strings.Join(st.Notes, "\n"), "notes.rewrite.amend is false") {
		t.Errorf("notes: %q", st.Notes)
	}
	if _, err := Uninstall(bg, repo); err != nil || read() != mine {
		t.Fatalf("uninstall removed the user's value: %v\n%s", err, read())
	}
}

// TestHuskyUninstallSnippetAsTold: what `ctx hooks uninstall` prints for husky, run as told after the
// install snippet, deletes ctx's lines from .husky/<hook> and nothing else: the user's own lines and the
// file's exec bit stay, a hook with no ctx line is untouched, and running it twice changes nothing more.
// (It used to print the install commands, which added the lines back.)
func TestHuskyUninstallSnippetAsTold(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	mine := "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\n\ntouch merged-by-user\n"
	writeFile(t, filepath.Join(repo, ".husky", "post-merge"), mine, 0o755)
	writeFile(t, filepath.Join(repo, ".husky", "pre-commit"), "#!/usr/bin/env sh\nnpm test\n", 0o755)
	gitIn(t, repo, "", "config", "core.hooksPath", ".husky")
	sh := func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("snippet: %v\n%s", err, out)
		}
	}
	sh(SnippetFor(Husky, Options{PrePush: true, Blame: true}))
	if !strings.Contains(readFile(t, filepath.Join(repo, ".husky", "post-merge")), "ctx hooks run post-merge ") {
		t.Fatal("install snippet added no line: the premise changed")
	}
	st, err := Uninstall(bg, repo)
	if err != nil || st.Manager != Husky || strings.Contains(st.Snippet, "ctx_hook ") {
		t.Fatalf("uninstall: %v, snippet:\n%s", err, st.Snippet)
	}
	for range 2 {
		sh(st.Snippet)
	}
	if got := readFile(t, filepath.Join(repo, ".husky", "post-merge")); got != mine {
		t.Errorf(".husky/post-merge:\n%q\nwant\n%q", got, mine)
	}
	if got := readFile(t, filepath.Join(repo, ".husky", "pre-commit")); got != "#!/usr/bin/env sh\nnpm test\n" {
		t.Errorf(".husky/pre-commit changed:\n%s", got)
	}
	for _, h := range []string{"post-checkout", "post-merge", "post-rewrite", "pre-push", "post-commit"} {
		p := filepath.Join(repo, ".husky", h)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&0o100 == 0 || strings.Contains(readFile(t, p), "ctx hooks run") {
			t.Errorf("%s: %v %v\n%s", h, fi, err, readFile(t, p))
		}
		if _, err := os.Stat(p + ".ctx-tmp"); !os.IsNotExist(err) {
			t.Errorf("%s.ctx-tmp left behind", h)
		}
	}
}

// TestHuskyFolderWithoutHooksPath: a .husky/ folder (empty, or husky's files before `npm install` ran
// `husky`) with core.hooksPath unset is not husky in charge: git runs .git/hooks, so ctx installs there;
// once core.hooksPath points into .husky/ (husky v9: .husky/_), husky is in charge.
func TestHuskyFolderWithoutHooksPath(t *testing.T) {
	t.Parallel()
	for _, files := range [][2]string{{}, {"pre-commit", "npm test\n"}} {
		repo := newRepo(t)
		if err := os.MkdirAll(filepath.Join(repo, ".husky"), 0o755); err != nil {
			t.Fatal(err)
		}
		if files[0] != "" {
			writeFile(t, filepath.Join(repo, ".husky", files[0]), files[1], 0o644)
		}
		st, err := Install(bg, repo, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Manager != NoManager {
			t.Fatalf(".husky/ %v without core.hooksPath: manager %q", files, st.Manager)
		}
		if b := readFile(t, filepath.Join(repo, ".git", "hooks", "post-merge")); !strings.Contains(b, "# >>> ctx hooks >>>") {
			t.Fatalf(".git/hooks/post-merge:\n%s", b)
		}
		// Now husky v9 takes over: it is in charge, and the blocks already in .git/hooks are still reported.
		gitIn(t, repo, "", "config", "core.hooksPath", ".husky/_")
		if m := DetectManager(bg, repo, filepath.Join(repo, ".husky", "_")); m != Husky {
			t.Fatalf("core.hooksPath=.husky/_: manager %q", m)
		}
	}
}

// TestHooksPathDevNull: core.hooksPath=/dev/null (hooks turned off) is ErrHooksPath for Report and
// Install, saying hooks are disabled by it (Report used to offer ctx hooks install, which then failed to
// create /dev/null as a folder).
func TestHooksPathDevNull(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitIn(t, repo, "", "config", "core.hooksPath", "/dev/null")
	if _, err := Report(bg, repo, Options{}); !errors.Is(err, ErrHooksPath) || !strings.Contains(err.Error(), "core.hooksPath is /dev/null") || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("Report: %v", err)
	}
	if _, err := Install(bg, repo, Options{}); !errors.Is(err, ErrHooksPath) {
		t.Errorf("Install: %v", err)
	}
}
