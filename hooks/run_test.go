package hooks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGuardRebaseInProgress(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if run, why := Guard(bg, repo); !run {
		t.Fatalf("Guard false on a clean repo: %s", why)
	}
	gitIn(t, repo, "", "checkout", "-q", "-b", "topic")
	writeFile(t, filepath.Join(repo, "t.txt"), "t\n", 0o644)
	gitIn(t, repo, "", "add", "t.txt")
	gitIn(t, repo, "", "commit", "-q", "-m", "t")
	gitIn(t, repo, "", "checkout", "-q", "main")
	writeFile(t, filepath.Join(repo, "m.txt"), "m\n", 0o644)
	gitIn(t, repo, "", "add", "m.txt")
	gitIn(t, repo, "", "commit", "-q", "-m", "m")
	gitIn(t, repo, "", "checkout", "-q", "topic")
	// `git rebase -i` stopped by `exec false`.
	cmd := exec.Command("git", "-C", repo, "rebase", "-i", "--exec", "false", "main")
	cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=true")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("rebase did not stop: %s", out)
	}
	run, why := Guard(bg, repo)
	if run || why != "rebase in progress" {
		t.Errorf("Guard during rebase = %v %q", run, why)
	}
	if run, _ := GuardHook(bg, repo, PostCheckout, []string{"a", "b", "1"}); run {
		t.Error("GuardHook post-checkout ran during rebase")
	}
	// post-rewrite "rebase" is the end of the rebase: allowed.
	if run, why := GuardHook(bg, repo, PostRewrite, []string{"rebase"}); !run {
		t.Errorf("GuardHook post-rewrite rebase = false %q", why)
	}
	gitIn(t, repo, "", "rebase", "--abort")
	if run, why := Guard(bg, repo); !run {
		t.Errorf("Guard after abort: %s", why)
	}
}

// TestHooksDuringRebase: with the hooks installed, the fake ctx sees the
// rebase's post-checkout and its closing post-rewrite, and Guard inside the
// hook says no to the first and yes to the second.
func TestHooksDuringRebase(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if _, err := Install(bg, repo, Options{}); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "", "checkout", "-q", "-b", "topic")
	writeFile(t, filepath.Join(repo, "t.txt"), "t\n", 0o644)
	gitIn(t, repo, "", "add", "t.txt")
	gitIn(t, repo, "", "commit", "-q", "-m", "t")
	gitIn(t, repo, "", "checkout", "-q", "main")
	writeFile(t, filepath.Join(repo, "m.txt"), "m\n", 0o644)
	gitIn(t, repo, "", "add", "m.txt")
	gitIn(t, repo, "", "commit", "-q", "-m", "m")
	gitIn(t, repo, "", "checkout", "-q", "topic")
	// The fake ctx records whether a rebase dir exists when it runs.
	pathEnv, logFile := fakeCtx(t, `if [ -d "$(git rev-parse --git-path rebase-merge)" ]; then echo in-rebase >> "$(dirname "$0")/ctx.log"; fi`)
	gitIn(t, repo, pathEnv, "rebase", "-q", "main")
	got := readLog(t, logFile)
	want := []string{"hooks run post-checkout", "in-rebase", "hooks run post-rewrite rebase", "in-rebase"}
	if len(got) != len(want) {
		t.Fatalf("ctx calls %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("ctx calls %q, want prefixes %q", got, want)
		}
	}
}

func TestGuardMergeInProgress(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitIn(t, repo, "", "checkout", "-q", "-b", "topic")
	writeFile(t, filepath.Join(repo, "t.txt"), "t\n", 0o644)
	gitIn(t, repo, "", "add", "t.txt")
	gitIn(t, repo, "", "commit", "-q", "-m", "t")
	gitIn(t, repo, "", "checkout", "-q", "main")
	gitIn(t, repo, "", "merge", "-q", "--no-ff", "--no-commit", "topic")
	// MERGE_HEAD exists (as it does while post-merge runs): not a reason.
	if run, why := GuardHook(bg, repo, PostMerge, []string{"0"}); !run {
		t.Errorf("GuardHook post-merge with MERGE_HEAD = false %q", why)
	}
}

func TestGuardCTXHooksOff(t *testing.T) {
	repo := newRepo(t)
	t.Setenv("CTX_HOOKS", "0")
	if run, why := Guard(bg, repo); run || why != "CTX_HOOKS=0" {
		t.Errorf("Guard = %v %q", run, why)
	}
	t.Setenv("CTX_HOOKS", "1")
	if run, why := Guard(bg, repo); !run {
		t.Errorf("Guard with CTX_HOOKS=1 = false %q", why)
	}
}

func TestGuardHookFileCheckout(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if run, why := GuardHook(bg, repo, PostCheckout, []string{"a", "a", "0"}); run || why != "file checkout" {
		t.Errorf("= %v %q", run, why)
	}
	if run, _ := GuardHook(bg, repo, Hook("pre-commit"), nil); run {
		t.Error("unknown hook ran")
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	gitIn(t, repo, "", "checkout", "-q", "-b", "feature")
	var calls []string
	a := Actions{
		Refresh: func(ctx context.Context, wt string) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("no deadline")
			}
			calls = append(calls, "refresh")
			return nil
		},
		Activity: func(ctx context.Context, wt, branch string) error {
			calls = append(calls, "activity "+branch)
			return nil
		},
		Push: func(ctx context.Context, wt, remote, url string) error {
			calls = append(calls, "push "+remote)
			return errors.New("rejected")
		},
	}
	for _, c := range []struct {
		h    Hook
		args []string
		ran  bool
	}{
		{PostCheckout, []string{"x", "y", "1"}, true},
		{PostCheckout, []string{"x", "y", "0"}, false},
		{PostMerge, []string{"0"}, true},
		{PostRewrite, []string{"amend"}, true},
	} {
		ran, why, err := Run(bg, repo, c.h, c.args, a)
		if ran != c.ran || err != nil {
			t.Errorf("Run %s %v = %v %q %v", c.h, c.args, ran, why, err)
		}
	}
	ran, _, err := Run(bg, repo, PrePush, []string{"origin", "url"}, a)
	if !ran || err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("pre-push: %v %v", ran, err)
	}
	want := "refresh,activity feature,refresh,refresh,push origin"
	if got := strings.Join(calls, ","); got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
}

func TestTimeout(t *testing.T) {
	t.Setenv("CTX_HOOK_TIMEOUT", "")
	if Timeout(PostCheckout) != 2*time.Second || Timeout(PrePush) != 30*time.Second {
		t.Error("defaults")
	}
	t.Setenv("CTX_HOOK_TIMEOUT", "0.5")
	if Timeout(PostMerge) != 500*time.Millisecond {
		t.Error("env")
	}
	t.Setenv("CTX_HOOK_TIMEOUT", "bogus")
	if Timeout(PostMerge) != 2*time.Second {
		t.Error("bogus env")
	}
}

// TestTimeoutMin: CTX_HOOK_TIMEOUT_MIN raises the shim's limit (CTX_HOOK_TIMEOUT=2, which the shim sets
// whatever the environment holds) and the defaults, never lowers them; a value that is no positive
// number of seconds up to a day is ignored.
func TestTimeoutMin(t *testing.T) {
	t.Setenv("CTX_HOOK_TIMEOUT", "2")
	t.Setenv("CTX_HOOK_TIMEOUT_MIN", "120")
	if got := Timeout(PostCommit); got != 120*time.Second {
		t.Errorf("shim 2 s, min 120 s: %v", got)
	}
	t.Setenv("CTX_HOOK_TIMEOUT", "")
	if got := Timeout(PrePush); got != 120*time.Second {
		t.Errorf("pre-push default 30 s, min 120 s: %v", got)
	}
	t.Setenv("CTX_HOOK_TIMEOUT_MIN", "1")
	if Timeout(PostCheckout) != 2*time.Second || Timeout(PrePush) != 30*time.Second {
		t.Error("a lower min changed the defaults")
	}
	for _, bad := range []string{"bogus", "-5", "0", "NaN", "1e9"} {
		t.Setenv("CTX_HOOK_TIMEOUT_MIN", bad)
		if got := Timeout(PostMerge); got != 2*time.Second {
			t.Errorf("CTX_HOOK_TIMEOUT_MIN=%s: %v", bad, got)
		}
	}
}
