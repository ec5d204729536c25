package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
)

// gitSeesContext fails the test when git sees a file of .context/ as untracked (git status) or would stage
// one (git add -A --dry-run): what a plain git add -A would put on the user's branch.
func gitSeesContext(t *testing.T, dir, when string) {
	t.Helper()
	if st := testenv.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, store.CheckoutDir) {
		t.Fatalf("%s: git status shows .context/:\n%s", when, st)
	}
	if add := testenv.Git(t, dir, "add", "-A", "--dry-run"); strings.Contains(add, store.CheckoutDir) {
		t.Fatalf("%s: git add -A would stage files of .context/:\n%s", when, add)
	}
}

// TestCheckoutIgnoredOverGitignore: a repository .gitignore that includes .context/ again (the whitelist
// style "*, !*/, !*.md", "!.*", or "!.context/**" outright) wins over info/exclude; ctx's own
// .context/.gitignore, deeper, wins over it, so a private entry is never one git add -A away from the
// user's branch (docs/security.md "Private entries on disk"). A .context/ without it (an older ctx's) or
// with it edited gets it back at the next ctx status, never as a hand edit.
func TestCheckoutIgnoredOverGitignore(t *testing.T) {
	for name, ignore := range map[string]string{
		"whitelist": "*\n!*/\n!*.go\n!*.md\n!*.json\n!.gitignore\n",
		"dotfiles":  "*.log\n!.*\n",
		"explicit":  "*\n!*/\n!*.md\n!.context/**\n!.context/.gitignore\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := testenv.NewRepo(t)
			if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(ignore), 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, dir, "add", "-f", ".gitignore")
			testenv.Git(t, dir, "commit", "-q", "-m", "ignore")
			run(t, dir, 0, "init", "--no-hooks")
			run(t, dir, 0, "knowledge", "set", "secret", "PRIVATE STUFF", "--scope", "private")
			run(t, dir, 0, "knowledge", "set", "team", "a team fact")
			gitSeesContext(t, dir, "after a private write")
			if v := testenv.Git(t, dir, "check-ignore", "-v", ".context/knowledge/secret.md"); !strings.HasPrefix(v, ".context/.gitignore:") {
				t.Fatalf("git check-ignore -v: %q, want the rule of .context/.gitignore", v)
			}
			if out := run(t, dir, 0, "status"); !strings.Contains(out, "clean") || strings.Contains(out, store.IgnoreFile) {
				t.Fatalf("ctx status:\n%s", out)
			}
			if out := run(t, dir, 0, "commit"); !strings.Contains(out, "nothing to commit") {
				t.Fatalf("ctx commit: %s", out)
			}

			// The .context/ of an older ctx (no .gitignore, no exclude line), and one whose .gitignore was
			// edited: ctx status puts it back.
			ig := filepath.Join(dir, store.CheckoutDir, store.IgnoreFile)
			for _, edit := range []func(){
				func() {
					if err := os.Remove(ig); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				},
				func() {
					if err := os.WriteFile(ig, []byte("nothing\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				},
			} {
				edit()
				if st := testenv.Git(t, dir, "status", "--porcelain"); !strings.Contains(st, store.CheckoutDir) {
					t.Fatalf("the setup did not make .context/ visible to git: %q", st)
				}
				if out := run(t, dir, 0, "status"); !strings.Contains(out, "clean") {
					t.Fatalf("ctx status:\n%s", out)
				}
				gitSeesContext(t, dir, "after ctx status")
				if b, err := os.ReadFile(ig); err != nil || string(b) != store.IgnoreContent {
					t.Fatalf(".context/.gitignore: %q, %v", b, err)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude")); !strings.Contains(string(b), "/.context/") {
				t.Fatalf("info/exclude: %q", b)
			}
			// Never on the context branch.
			if ls := testenv.Git(t, dir, "ls-tree", "-r", "--name-only", "ctx"); strings.Contains(ls, store.IgnoreFile) {
				t.Fatalf("the context branch holds %s:\n%s", store.IgnoreFile, ls)
			}
		})
	}
}

// TestStatusSaysGitSeesCheckout: when ctx cannot keep its .gitignore in .context/ (a folder stands at its
// name) and the repository's .gitignore includes .context/ again, ctx status does not say "clean": it
// names what git sees there.
func TestStatusSaysGitSeesCheckout(t *testing.T) {
	dir := testenv.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n!*/\n!*.md\n!*.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "-f", ".gitignore")
	testenv.Git(t, dir, "commit", "-q", "-m", "ignore")
	run(t, dir, 0, "init", "--no-hooks")
	run(t, dir, 0, "knowledge", "set", "team", "a team fact")
	ig := filepath.Join(dir, store.CheckoutDir, store.IgnoreFile)
	if err := os.Remove(ig); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ig, "x.md"), 0o777); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCode(dir, "", "status")
	if code != 0 || strings.Contains(stdout, "clean") || !strings.Contains(stdout, "not ignored by git") ||
		!strings.Contains(stdout, "knowledge/team.md") {
		t.Fatalf("ctx status: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestFirstCheckoutExcluded: a context branch that came from plain git (git fetch origin ctx:ctx, or a
// git checkout of it and back) and was never pulled by ctx: the first ctx write or ctx status checks
// .context/ out ignored by git, and lists it in info/exclude too (issue A11).
func TestFirstCheckoutExcluded(t *testing.T) {
	remote := testenv.BareRemote(t)
	a := testenv.Clone(t, remote, "a")
	testenv.Git(t, a, "commit", "-q", "--allow-empty", "-m", "i")
	testenv.Git(t, a, "push", "-q", "origin", "HEAD")
	run(t, a, 0, "init", "--no-hooks")
	run(t, a, 0, "knowledge", "set", "team", "team fact")
	run(t, a, 0, "push")
	for name, first := range map[string][]string{
		"fetch then write":     {"knowledge", "set", "mine", "PRIVATE NOTE", "--scope", "private"},
		"checkout then status": {"status"},
	} {
		t.Run(name, func(t *testing.T) {
			b := testenv.Clone(t, remote, "b")
			if name == "fetch then write" {
				testenv.Git(t, b, "fetch", "-q", "origin", "ctx:ctx")
			} else {
				testenv.Git(t, b, "checkout", "-q", "ctx")
				testenv.Git(t, b, "checkout", "-q", "-")
			}
			run(t, b, 0, first...)
			if _, err := os.Stat(filepath.Join(b, store.CheckoutDir, "knowledge", "team.md")); err != nil {
				t.Fatalf("not checked out: %v", err)
			}
			gitSeesContext(t, b, "after ctx "+first[0])
			if ex, _ := os.ReadFile(filepath.Join(b, ".git", "info", "exclude")); !strings.Contains(string(ex), "/.context/") {
				t.Fatalf("info/exclude: %q", ex)
			}
		})
	}
}

// TestUserBranchNamedCtxNotRead: a code branch of the user's named ctx (no manifest.json) is no store:
// ctx status says so as a write does (exit 4, the ctx init --branch hint) and checks nothing out, and the
// later ctx init --branch NAME starts clean, keeping no ref of the user's code under refs/ctx-orphaned/,
// even after an older ctx left a checkout record naming that branch's commit (issue A7).
func TestUserBranchNamedCtxNotRead(t *testing.T) {
	dir := testenv.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "main.go")
	testenv.Git(t, dir, "commit", "-q", "-m", "code")
	testenv.Git(t, dir, "branch", "ctx")
	code := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "ctx"))
	run(t, dir, 2, "init", "--no-hooks")
	stdout, stderr, exit := runCode(dir, "", "status")
	if exit != 4 || !strings.Contains(stderr, "not a context store") || !strings.Contains(stderr, "ctx init --branch NAME") {
		t.Fatalf("ctx status: exit %d\nstdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, store.CheckoutDir)); err == nil {
		t.Fatal("ctx status made .context/ from the user's branch")
	}
	if st := testenv.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status: %q", st)
	}
	// What an older ctx's status left: a record naming the user's commit as the mirrored public tip.
	if err := os.MkdirAll(filepath.Join(dir, store.CheckoutDir), 0o777); err != nil {
		t.Fatal(err)
	}
	rec := `{"commits":{"public":"` + code + `"},"files":{}}`
	if err := os.WriteFile(filepath.Join(dir, store.CheckoutDir, store.RecordFile), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, exit = runCode(dir, "", "init", "--no-hooks", "--branch", "ctxstore")
	if exit != 0 || strings.Contains(stderr, "deleted") || strings.Contains(stdout+stderr, "ctx-orphaned") {
		t.Fatalf("ctx init --branch ctxstore: exit %d\nstdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}
	if refs := testenv.Git(t, dir, "for-each-ref", "refs/ctx-orphaned"); refs != "" {
		t.Fatalf("refs/ctx-orphaned: %q", refs)
	}
	if got := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "ctx")); got != code {
		t.Fatalf("the user's branch ctx moved: %s, was %s", got, code)
	}
	run(t, dir, 0, "knowledge", "set", "k", "v")
	gitSeesContext(t, dir, "after init --branch ctxstore")
}

// TestFIFOInCheckout: a named pipe in .context/ (a FIFO nothing writes to) is never opened for reading:
// ctx status lists it as a hand edit that ctx commit refuses, naming what it is, and ctx commit refuses it,
// both at once instead of waiting for a writer for good (issue A10).
func TestFIFOInCheckout(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	run(t, dir, 0, "knowledge", "set", "k", "v")
	if err := syscall.Mkfifo(filepath.Join(dir, store.CheckoutDir, "knowledge", "fifo.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{{[]string{"status"}, 0}, {[]string{"commit"}, 2}} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, ctxBin, c.args...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		if timedOut {
			t.Fatalf("ctx %s waited on the FIFO (killed after 3 minutes)", c.args[0])
		}
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(out.String()+errb.String(), "named pipe") {
			t.Fatalf("ctx %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.args[0], code, c.code, out.String(), errb.String())
		}
	}
}
