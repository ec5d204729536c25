package hooks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPushDryRun: git's command lines read as git push's parse-options reads them.
func TestPushDryRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		argv      string
		dry, push bool
	}{
		{"git push origin main", false, true},
		{"git push --dry-run origin main", true, true},
		{"git push origin main --dry-run", true, true},
		{"git push -n origin", true, true},
		{"git push -vnf origin", true, true},
		{"git push --dry origin", true, true},
		{"git push --dry-run --no-dry-run origin", false, true},
		{"git push --no-dry origin -n", true, true},
		{"git push -o n origin", false, true},
		{"git push -on origin", false, true},
		{"git push --push-option -n origin", false, true},
		{"git push --push-option=x -n origin", true, true},
		{"git push --repo -n", false, true},
		{"git push origin -- -n", false, true},
		{"git push --delete origin x", false, true},
		{"/usr/lib/git-core/git push -n origin HEAD", true, true},
		{"git -C dir -c push.default=current --no-pager push -n", true, true},
		{"git -c alias.push=x pn origin", false, false},
		{"git-push -n origin", true, true},
		{"git fetch -n", false, false},
		{"/bin/sh .git/hooks/pre-push origin url", false, false},
	} {
		sub, rest, ok := gitCommand(strings.Fields(c.argv))
		push := ok && sub == "push"
		if push != c.push {
			t.Errorf("%q: push %v, want %v", c.argv, push, c.push)
			continue
		}
		if push && pushDryRun(rest) != c.dry {
			t.Errorf("%q: dry run %v, want %v", c.argv, !c.dry, c.dry)
		}
	}
}

// TestGitPushDryRunFromProc: the walk up the process table (a fake /proc) finds the nearest git and reads
// its command line past the hook's shell.
func TestGitPushDryRunFromProc(t *testing.T) {
	root := t.TempDir()
	proc := func(pid, ppid int, argv ...string) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		writeFile(t, filepath.Join(dir, "cmdline"), strings.Join(argv, "\x00")+"\x00", 0o644)
		writeFile(t, filepath.Join(dir, "stat"), strconv.Itoa(pid)+" (a) b) S "+strconv.Itoa(ppid)+" 1 1\n", 0o644)
	}
	old := procRoot
	procRoot = root
	t.Cleanup(func() { procRoot = old })
	me := os.Getppid()
	proc(me, 7001, "/bin/sh", ".git/hooks/pre-push", "origin", "url")
	proc(7001, 7002, "git", "-c", "x=y", "push", "--dry-run", "origin")
	if dry, known := gitPushDryRun(); !dry || !known {
		t.Errorf("git push --dry-run: %v %v", dry, known)
	}
	proc(7001, 7002, "git", "push", "origin")
	if dry, known := gitPushDryRun(); dry || !known {
		t.Errorf("git push: %v %v", dry, known)
	}
	proc(7001, 7002, "git", "rebase", "-n")
	if dry, known := gitPushDryRun(); dry || known {
		t.Errorf("git rebase: %v %v", dry, known)
	}
	if err := os.RemoveAll(filepath.Join(root, "7001")); err != nil {
		t.Fatal(err)
	}
	if dry, known := gitPushDryRun(); dry || known {
		t.Errorf("no parent: %v %v", dry, known)
	}
}

// TestPushTarget: the context goes only to the remote ctx syncs with, named or by one of its URLs.
func TestPushTarget(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	base := t.TempDir()
	origin, fork := filepath.Join(base, "origin.git"), filepath.Join(base, "fork.git")
	gitIn(t, "", "", "init", "-q", "--bare", origin)
	gitIn(t, "", "", "init", "-q", "--bare", fork)
	gitIn(t, repo, "", "remote", "add", "origin", origin)
	gitIn(t, repo, "", "remote", "add", "fork", fork)
	gitIn(t, repo, "", "remote", "add", "same", origin)
	gitIn(t, repo, "", "config", "url.https://example.com/.insteadOf", "ex:")
	gitIn(t, repo, "", "remote", "add", "web", "ex:team/repo.git")
	rel, err := filepath.Rel(repo, origin)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		configured, remote, url, want string
	}{
		{"origin", "origin", origin, "origin"},
		{"origin", origin, origin, "origin"},
		{"origin", rel, rel, "origin"},
		{"origin", "same", origin, "origin"},
		{"origin", "fork", fork, ""},
		{"origin", fork, fork, ""},
		{"origin", "https://u:secret@example.com/x.git", "https://u:secret@example.com/x.git", ""},
		{"web", "https://example.com/team/repo.git", "https://example.com/team/repo.git", "web"},
		{"", "origin", origin, ""},
	} {
		got, skip := PushTarget(bg, repo, c.configured, c.remote, c.url)
		if got != c.want || (got == "") == (skip == "") {
			t.Errorf("PushTarget(%q, %q, %q) = %q, %q; want %q", c.configured, c.remote, c.url, got, skip, c.want)
		}
		if strings.Contains(skip, "secret") {
			t.Errorf("the skip line shows the URL's password: %s", skip)
		}
	}
}
