package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// The user's branches are not ctx's (docs/security.md "Trust boundaries: the user's branches"): a
// teammate who can only push to main commits a symbolic link named .context, or files under .context/,
// and git checks them out over ctx's ignored folder. End to end with a bare remote, clones, the real git
// CLI and ctx's hooks installed: ctx never writes through the link, never takes a tracked file for a hand
// edit, and the remote's context branch does not move.

// ctxDirTeam is a bare remote whose context branch holds knowledge/arch.md ("orig"), and Ada's clone that
// pushed it, with ctx's hooks installed. It returns the remote and Ada's clone.
func ctxDirTeam(t *testing.T) (remote, ada string) {
	t.Helper()
	_, remote = seededRemote(t, "R.git")
	ada = cloneURL(t, remote, "ada")
	mustCtx(t, ada, nil, 0, "init")
	mustCtx(t, ada, nil, 0, "knowledge", "set", "arch", "orig")
	mustCtx(t, ada, nil, 0, "push")
	if !strings.Contains(hookFile(t, ada, "post-merge"), "\"$ctx_bin\" hooks run post-merge") {
		t.Fatal("ctx init installed no post-merge hook")
	}
	return remote, ada
}

// pushToMain makes Bob's clone of remote, runs change in it (which stages what it commits), commits and
// pushes to main with plain git.
func pushToMain(t *testing.T, remote string, change func(bob string)) {
	t.Helper()
	bob := cloneURL(t, remote, "bob")
	change(bob)
	testenv.Git(t, bob, "commit", "-q", "-m", "bob's change")
	testenv.Git(t, bob, "push", "-q", "origin", "main")
}

func remoteCtx(t *testing.T, remote string) string {
	t.Helper()
	return testenv.Git(t, remote, "rev-parse", "refs/heads/ctx")
}

// emptyDir fails unless dir holds nothing.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Fatalf("ctx wrote outside the repository, into the symbolic link's target %s: %v", dir, names)
	}
}

// TestContextSymlinkOnMain: a symbolic link named .context committed on main. A fresh clone's ctx pull
// refuses before fetching (naming the link and the fix), writes nothing into the link's target, and
// status, doctor, sync and commit say so; in a clone that had .context/ checked out with a hand edit, a
// plain git pull replaces the folder by the link, and the post-merge hook writes nothing through it (the
// git command succeeds); ctx status says hand edits were lost. After the fix (git rm --cached, rm, ctx
// restore) .context/ is a folder again.
func TestContextSymlinkOnMain(t *testing.T) {
	remote, ada := ctxDirTeam(t)
	if err := os.WriteFile(filepath.Join(ada, ".context", "knowledge", "arch.md"), []byte("ada's hand edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir() // outside every repository
	pushToMain(t, remote, func(bob string) {
		if err := os.Symlink(target, filepath.Join(bob, ".context")); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, bob, "add", "-f", ".context")
	})
	tip := remoteCtx(t, remote)

	// (a) A fresh clone.
	v := cloneURL(t, remote, "v")
	r := mustCtx(t, v, nil, 1, "pull")
	for _, want := range []string{"symbolic link", target, "git rm -r --cached .context", "ctx restore"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("ctx pull in a fresh clone should name %q:\n%s", want, r.stderr)
		}
	}
	emptyDir(t, target)
	if out := testenv.Git(t, v, "for-each-ref", "refs/heads/ctx"); out != "" {
		t.Errorf("ctx pull adopted the context branch through the link: %s", out)
	}

	// (b) Ada's clone, hooks installed, a hand edit pending: a plain git pull.
	cmd := exec.Command("git", "pull", "-q", "--no-rebase")
	cmd.Dir = ada
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pull failed (the hook must never fail it): %v\n%s", err, out)
	}
	if fi, err := os.Lstat(filepath.Join(ada, ".context")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("git did not check the link out: %v", err)
	}
	emptyDir(t, target)
	st := mustCtx(t, ada, nil, 0, "status").stdout
	for _, want := range []string{"symbolic link", "hand edits", "lost", "git rm -r --cached .context"} {
		if !strings.Contains(st, want) {
			t.Errorf("ctx status should say %q:\n%s", want, st)
		}
	}
	if r := mustCtx(t, ada, nil, 1, "doctor"); !strings.Contains(r.stdout, "symbolic link") {
		t.Errorf("ctx doctor:\n%s", r.stdout)
	}
	mustCtx(t, ada, nil, 1, "sync")
	mustCtx(t, ada, nil, 1, "commit", "-m", "x")
	mustCtx(t, ada, nil, 1, "restore")
	mustCtx(t, ada, nil, 0, "knowledge", "set", "later", "a write still commits") // its refresh warns
	emptyDir(t, target)
	if got := remoteCtx(t, remote); got != tip {
		t.Fatalf("the remote's context branch moved: %s -> %s", tip, got)
	}

	// The fix the messages name.
	testenv.Git(t, ada, "rm", "-q", "--cached", ".context")
	testenv.Git(t, ada, "commit", "-q", "-m", "untrack .context")
	if err := os.Remove(filepath.Join(ada, ".context")); err != nil {
		t.Fatal(err)
	}
	if out := mustCtx(t, ada, nil, 0, "restore").stdout; !strings.Contains(out, "checked .context/ out again") {
		t.Errorf("ctx restore:\n%s", out)
	}
	if got, _ := readCtxFile(ada, "knowledge/later.md"); !strings.Contains(got, "a write still commits") {
		t.Errorf(".context/knowledge/later.md after restore: %q", got)
	}
	mustCtx(t, ada, nil, 0, "doctor")
	emptyDir(t, target)
}

// TestContextSymlinkDangling: a link to a folder that does not exist is not made through (mkdir of the
// link's target), by a pull or by the MCP server's reads.
func TestContextSymlinkDangling(t *testing.T) {
	remote, _ := ctxDirTeam(t)
	missing := filepath.Join(t.TempDir(), "not-yet")
	pushToMain(t, remote, func(bob string) {
		if err := os.Symlink(missing, filepath.Join(bob, ".context")); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, bob, "add", "-f", ".context")
	})
	v := cloneURL(t, remote, "v")
	mustCtx(t, v, nil, 1, "pull")
	mustCtx(t, v, nil, 1, "sync")
	if _, err := os.Lstat(missing); err == nil {
		t.Fatalf("ctx made the link's target %s", missing)
	}
}

// TestTrackedFilesUnderContext: Bob commits .context/knowledge/arch.md ("INJECTED") to main. Ada's plain
// git pull (hooks installed) checks it out over her checkout; ctx status reports it as the branch's file,
// not as a hand edit; ctx commit and ctx sync refuse with the fix; ctx doctor exits 1; the remote's
// context branch does not move, and nothing writes INJECTED into it. After git rm -r --cached and a commit,
// ctx restore puts the context branch's version back.
func TestTrackedFilesUnderContext(t *testing.T) {
	remote, ada := ctxDirTeam(t)
	pushToMain(t, remote, func(bob string) {
		p := filepath.Join(bob, ".context", "knowledge", "arch.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("INJECTED\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, bob, "add", "-f", ".context/knowledge/arch.md")
	})
	tip := remoteCtx(t, remote)
	cmd := exec.Command("git", "pull", "-q", "--no-rebase")
	cmd.Dir = ada
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pull: %v\n%s", err, out)
	}
	st := mustCtx(t, ada, nil, 0, "status").stdout
	if strings.Contains(st, "modified") || !strings.Contains(st, ".context/knowledge/arch.md") || !strings.Contains(st, "git rm -r --cached .context && git commit") {
		t.Errorf("ctx status should report the tracked file with the fix, not a hand edit:\n%s", st)
	}
	js := mustCtx(t, ada, nil, 0, "status", "--json").stdout
	if !strings.Contains(js, `"checkout_problem"`) || strings.Contains(js, `"change": "modified"`) {
		t.Errorf("ctx status --json:\n%s", js)
	}
	for _, args := range [][]string{{"commit"}, {"sync"}, {"pull"}} {
		r := mustCtx(t, ada, nil, 1, args...)
		if !strings.Contains(r.stderr, "tracks files in .context/") {
			t.Errorf("ctx %s:\n%s", args[0], r.stderr)
		}
	}
	if r := mustCtx(t, ada, nil, 1, "doctor"); !strings.Contains(r.stdout, "tracks files in .context/") {
		t.Errorf("ctx doctor:\n%s", r.stdout)
	}
	mustCtx(t, ada, nil, 1, "doctor", "--json")
	// A write commits (its refresh does not overwrite the tracked file: that would change the user's
	// branch's file).
	mustCtx(t, ada, nil, 0, "knowledge", "set", "other", "fine")
	if got, _ := readCtxFile(ada, "knowledge/arch.md"); got != "INJECTED\n" {
		t.Errorf("the tracked file was overwritten: %q", got)
	}
	if got := remoteCtx(t, remote); got != tip {
		t.Fatalf("the remote's context branch moved: %s -> %s", tip, got)
	}
	if show := testenv.Git(t, ada, "show", "ctx:knowledge/arch.md"); strings.Contains(show, "INJECTED") {
		t.Fatalf("the injected text reached the context branch:\n%s", show)
	}
	// The fix. Untracked, the file git wrote is still there and differs from the branch: it is not Ada's
	// hand edit, and neither sync, pull nor commit records it in her name (a tester pushed a teammate's
	// text this way); ctx restore puts the branch's version back.
	testenv.Git(t, ada, "rm", "-r", "-q", "--cached", ".context")
	testenv.Git(t, ada, "commit", "-q", "-m", "untrack .context")
	for _, args := range [][]string{{"sync"}, {"pull"}, {"commit"}} {
		if r := mustCtx(t, ada, nil, 2, args...); !strings.Contains(r.stderr, "not edits of yours") || !strings.Contains(r.stderr, "knowledge/arch.md") {
			t.Errorf("ctx %s after untracking:\n%s", args[0], r.stderr)
		}
	}
	if show := testenv.Git(t, remote, "show", "ctx:knowledge/arch.md"); strings.Contains(show, "INJECTED") {
		t.Fatalf("the injected text reached the remote after untracking:\n%s", show)
	}
	mustCtx(t, ada, nil, 0, "restore", "knowledge/arch.md")
	if got, _ := readCtxFile(ada, "knowledge/arch.md"); !strings.Contains(got, "orig") {
		t.Errorf("ctx restore: %q", got)
	}
	mustCtx(t, ada, nil, 0, "doctor")
	mustCtx(t, ada, nil, 0, "sync")
	if show := testenv.Git(t, remote, "show", "ctx:knowledge/arch.md"); strings.Contains(show, "INJECTED") {
		t.Fatalf("the injected text reached the remote:\n%s", show)
	}
}

// TestMissingCheckout: a .context/ removed as a whole (rm -rf, git clean -fdX) is neither silently taken
// for clean nor checked out again behind the user's back, nor recorded as the deletion of every entry:
// ctx status says it is missing and how to bring it back, ctx commit, pull and sync refuse (the remote
// does not move), ctx restore checks it out again.
func TestMissingCheckout(t *testing.T) {
	remote, ada := ctxDirTeam(t)
	tip := remoteCtx(t, remote)
	for _, how := range []string{"rm", "git clean"} {
		if how == "rm" {
			if err := os.RemoveAll(filepath.Join(ada, ".context")); err != nil {
				t.Fatal(err)
			}
		} else {
			testenv.Git(t, ada, "clean", "-q", "-fdX")
		}
		if _, err := os.Lstat(filepath.Join(ada, ".context")); err == nil {
			t.Fatalf("%s: .context/ is still there", how)
		}
		st := mustCtx(t, ada, nil, 0, "status").stdout
		if !strings.Contains(st, "missing") || !strings.Contains(st, "ctx restore") || strings.Contains(st, ", clean") {
			t.Errorf("%s: ctx status:\n%s", how, st)
		}
		if _, err := os.Lstat(filepath.Join(ada, ".context")); err == nil {
			t.Fatalf("%s: ctx status checked .context/ out again", how)
		}
		for _, args := range [][]string{{"commit", "-m", "x"}, {"pull"}, {"sync"}} {
			if r := mustCtx(t, ada, nil, 1, args...); !strings.Contains(r.stderr, "ctx restore") {
				t.Errorf("%s: ctx %s:\n%s", how, args[0], r.stderr)
			}
		}
		mustCtx(t, ada, nil, 1, "doctor")
		if got := testenv.Git(t, ada, "ls-tree", "-r", "--name-only", "ctx"); !strings.Contains(got, "knowledge/arch.md") {
			t.Fatalf("%s: the context branch lost its entries:\n%s", how, got)
		}
		if got := remoteCtx(t, remote); got != tip {
			t.Fatalf("%s: the remote's context branch moved: %s -> %s", how, tip, got)
		}
		if out := mustCtx(t, ada, nil, 0, "restore").stdout; !strings.Contains(out, "checked .context/ out again") {
			t.Errorf("%s: ctx restore:\n%s", how, out)
		}
		if got, _ := readCtxFile(ada, "knowledge/arch.md"); !strings.Contains(got, "orig") {
			t.Fatalf("%s: .context/knowledge/arch.md after restore: %q", how, got)
		}
		if st := mustCtx(t, ada, nil, 0, "status").stdout; !strings.Contains(st, ", clean") {
			t.Errorf("%s: ctx status after restore:\n%s", how, st)
		}
	}
}

// gitEnv runs git in dir with env added, and fails the test on an error.
func gitEnv(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestCheckoutAwayFromTrackingBranch: a branch of Ada's tracks .context/knowledge/arch.md (someone ran git
// add -f). Checking out main makes git delete it. With the hooks, post-checkout puts the context branch's
// version back (the stamp holds: nothing of ctx's moved) and ctx sync changes nothing. Without them
// (CTX_HOOKS=0), ctx status names the deletion as git's and the branch, and ctx commit, pull and sync
// refuse it (exit 2): the remote keeps the entry. ctx restore puts it back; an explicit ctx knowledge rm
// still deletes the entry for everyone.
func TestCheckoutAwayFromTrackingBranch(t *testing.T) {
	remote, ada := ctxDirTeam(t)
	tip := remoteCtx(t, remote)
	gitEnv(t, ada, nil, "checkout", "-q", "-b", "feature")
	gitEnv(t, ada, nil, "add", "-f", ".context/knowledge")
	gitEnv(t, ada, nil, "commit", "-q", "-m", "track .context")
	gitEnv(t, ada, nil, "checkout", "-q", "main")
	if got, ok := readCtxFile(ada, "knowledge/arch.md"); !ok || !strings.Contains(got, "orig") {
		t.Fatalf("post-checkout did not put back the file git removed: %q", got)
	}
	if st := mustCtx(t, ada, nil, 0, "status").stdout; !strings.Contains(st, ", clean") {
		t.Errorf("ctx status after the hook:\n%s", st)
	}
	mustCtx(t, ada, nil, 0, "sync")
	if got := remoteCtx(t, remote); got != tip {
		t.Fatalf("the remote's context branch moved: %s -> %s", tip, got)
	}

	// Without the hooks.
	off := []string{"CTX_HOOKS=0"}
	gitEnv(t, ada, off, "checkout", "-q", "feature")
	gitEnv(t, ada, off, "checkout", "-q", "main")
	if _, ok := readCtxFile(ada, "knowledge/arch.md"); ok {
		t.Fatal("git did not remove the tracked file (the test's premise)")
	}
	st := mustCtx(t, ada, nil, 0, "status").stdout
	if !strings.Contains(st, "deleted by git") || !strings.Contains(st, "branch feature") || !strings.Contains(st, "ctx restore knowledge/arch.md") {
		t.Errorf("ctx status should name git's deletion and the branch:\n%s", st)
	}
	for _, args := range [][]string{{"commit"}, {"pull"}, {"sync"}} {
		if r := mustCtx(t, ada, nil, 2, args...); !strings.Contains(r.stderr, "deleted by git") || !strings.Contains(r.stderr, "feature") {
			t.Errorf("ctx %s:\n%s", args[0], r.stderr)
		}
	}
	if got := remoteCtx(t, remote); got != tip {
		t.Fatalf("the remote's context branch moved: %s -> %s", tip, got)
	}
	// Still refused once the branch is gone (remembered).
	gitEnv(t, ada, nil, "branch", "-q", "-D", "feature")
	mustCtx(t, ada, nil, 2, "commit")
	mustCtx(t, ada, nil, 0, "restore", "knowledge/arch.md")
	if got, _ := readCtxFile(ada, "knowledge/arch.md"); !strings.Contains(got, "orig") {
		t.Fatalf("ctx restore: %q", got)
	}
	if st := mustCtx(t, ada, nil, 0, "status").stdout; !strings.Contains(st, ", clean") {
		t.Errorf("ctx status after restore:\n%s", st)
	}
	// Deleting the entry for everyone is an explicit command.
	mustCtx(t, ada, nil, 0, "knowledge", "rm", "arch")
	mustCtx(t, ada, nil, 0, "sync")
	if got := testenv.Git(t, remote, "ls-tree", "-r", "--name-only", "ctx"); strings.Contains(got, "knowledge/arch.md") {
		t.Errorf("ctx knowledge rm did not delete the entry:\n%s", got)
	}
}

// TestDeletedContextBranch: `git branch -D ctx` leaves the only copy of an unpushed entry dangling. ctx
// status (exit 4) names the tip the checkout record knows and `git branch ctx <tip>`; ctx init starts over
// but keeps the tip under refs/ctx-orphaned/ and says so on stderr.
func TestDeletedContextBranch(t *testing.T) {
	dir := testenv.NewRepo(t)
	mustCtx(t, dir, nil, 0, "init")
	mustCtx(t, dir, nil, 0, "knowledge", "set", "precious", "only copy")
	tip := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"))
	testenv.Git(t, dir, "branch", "-q", "-D", "ctx")
	if r := mustCtx(t, dir, nil, 4, "status"); !strings.Contains(r.stderr, "git branch ctx "+tip) {
		t.Errorf("ctx status should name the orphaned tip:\n%s", r.stderr)
	}
	r := mustCtx(t, dir, nil, 0, "init")
	if !strings.Contains(r.stderr, tip[:12]) || !strings.Contains(r.stderr, "refs/ctx-orphaned/") {
		t.Errorf("ctx init should warn with the tip it kept:\n%s", r.stderr)
	}
	kept := testenv.Git(t, dir, "for-each-ref", "--format=%(objectname)", "refs/ctx-orphaned/")
	if strings.TrimSpace(kept) != tip {
		t.Fatalf("refs/ctx-orphaned/ holds %q, want %s", kept, tip)
	}
	if show := testenv.Git(t, dir, "show", tip+":knowledge/precious.md"); !strings.Contains(show, "only copy") {
		t.Errorf("the kept tip lost the entry:\n%s", show)
	}
}

// TestOrphanedRefsInDoctor: the tips ctx init and ctx pull keep under refs/ctx-orphaned/ are named by ctx
// doctor (ref, tip, date) with how to restore or delete each; ctx doctor --fix deletes only those the
// context branch holds already (a packed one too), never one whose entries exist nowhere else.
func TestOrphanedRefsInDoctor(t *testing.T) {
	dir := testenv.NewRepo(t)
	mustCtx(t, dir, nil, 0, "init")
	mustCtx(t, dir, nil, 0, "knowledge", "set", "precious", "only copy")
	tip := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"))
	testenv.Git(t, dir, "branch", "-q", "-D", "ctx")
	mustCtx(t, dir, nil, 0, "init")
	kept := strings.TrimSpace(testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx-orphaned/"))
	if !strings.HasPrefix(kept, "refs/ctx-orphaned/ctx-") {
		t.Fatalf("refs/ctx-orphaned/ holds %q", kept)
	}
	// A second kept tip that the new branch holds already (its first commit), packed as git gc leaves it.
	mustCtx(t, dir, nil, 0, "knowledge", "set", "later", "x")
	inBranch := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "refs/heads/ctx~1"))
	merged := "refs/ctx-orphaned/ctx-1700000000"
	testenv.Git(t, dir, "update-ref", merged, inBranch)
	testenv.Git(t, dir, "pack-refs", "--all")

	out := mustCtx(t, dir, nil, 0, "doctor").stdout
	for _, want := range []string{kept, tip[:12], "git log -p " + kept, "git update-ref -d " + kept, "git branch -f ctx " + tip,
		merged, "kept 2023-11-14T22:13:20Z", "the context branch holds it already"} {
		if !strings.Contains(out, want) {
			t.Errorf("ctx doctor does not say %q:\n%s", want, out)
		}
	}
	var d struct {
		Orphaned []struct {
			Ref, Tip, Date string
			Merged         bool
		}
	}
	if err := json.Unmarshal([]byte(mustCtx(t, dir, nil, 0, "doctor", "--json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Orphaned) != 2 || d.Orphaned[0].Ref != merged || !d.Orphaned[0].Merged || // sorted by name
		d.Orphaned[1].Ref != kept || d.Orphaned[1].Tip != tip || d.Orphaned[1].Merged || d.Orphaned[1].Date == "" {
		t.Errorf("ctx doctor --json: orphaned = %+v", d.Orphaned)
	}

	fix := mustCtx(t, dir, nil, 0, "doctor", "--fix").stdout
	// The deleted ref is named once (deleted), the kept one is listed with how to restore it.
	if !strings.Contains(fix, "deleted "+merged) || strings.Count(fix, merged) != 1 || !strings.Contains(fix, "git branch -f ctx "+tip) {
		t.Errorf("ctx doctor --fix:\n%s", fix)
	}
	left := strings.TrimSpace(testenv.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/ctx-orphaned/"))
	if left != kept+" "+tip {
		t.Errorf("after ctx doctor --fix, refs/ctx-orphaned/ holds %q; want only %s %s (its entries are nowhere else)", left, kept, tip)
	}
}
