package hooks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment switches read by the shim in the hook files and by Guard.
const (
	// EnvHooks: CTX_HOOKS=0 turns ctx's hooks off (shim and Guard).
	EnvHooks = "CTX_HOOKS"
	// EnvInHook is set by the shim for the ctx it starts; a shim that sees it
	// does nothing. Whatever runs `git push` for ctx (sync) should set
	// CTX_IN_HOOK=1 in git's environment too, so that a plain `ctx push` does
	// not start a second `ctx push` from the user's pre-push hook.
	EnvInHook = "CTX_IN_HOOK"
	// EnvTimeout carries the shim's time limit in seconds (see Timeout).
	EnvTimeout = "CTX_HOOK_TIMEOUT"
	// EnvTimeoutMin raises the time limit of every hook to at least that many seconds (see Timeout): the
	// shim sets EnvTimeout itself, so a slow or loaded machine (or a test) raises the limit through this
	// one, which the shim passes on untouched (docs/hooks.md "The shim").
	EnvTimeoutMin = "CTX_HOOK_TIMEOUT_MIN"
)

// Guard tells `ctx hooks run` whether to do anything at all. It returns
// false, with the reason, when:
//   - CTX_HOOKS=0 (the user switched ctx's hooks off);
//   - a rebase is in progress (rebase-merge/ or rebase-apply/ in the git
//     dir): git checks out and commits many times during a rebase and the
//     work tree is in between states;
//   - a cherry-pick or revert is stopped (CHERRY_PICK_HEAD, REVERT_HEAD).
//
// A merge in progress (MERGE_HEAD) is not a reason: git 2.39 still has
// MERGE_HEAD in place while it runs post-merge after a successful merge, so
// refusing would turn post-merge off. Use GuardHook for a hook's own rules.
func Guard(ctx context.Context, workTree string) (run bool, why string) {
	return guard(ctx, workTree, nil)
}

// guard is Guard; with loc, the paths come from it instead of a git process.
func guard(ctx context.Context, workTree string, loc Local) (run bool, why string) {
	if v, ok := os.LookupEnv(EnvHooks); ok && strings.TrimSpace(v) == "0" {
		return false, "CTX_HOOKS=0"
	}
	states := []struct{ name, why string }{
		{"rebase-merge", "rebase in progress"},
		{"rebase-apply", "rebase or am in progress"},
		{"CHERRY_PICK_HEAD", "cherry-pick in progress"},
		{"REVERT_HEAD", "revert in progress"},
	}
	paths := make([]string, len(states))
	if loc != nil {
		for i, st := range states {
			paths[i] = loc.GitPath(st.name)
		}
	} else {
		// One git process for the four paths (the hook runs on every checkout: keep it fast).
		args := []string{"rev-parse"}
		for _, st := range states {
			args = append(args, "--git-path", st.name)
		}
		out, err := git(ctx, workTree, args...)
		if err != nil {
			return false, fmt.Sprintf("not a git repository: %v", err)
		}
		paths = strings.Split(out, "\n")
		if len(paths) != len(states) {
			return false, fmt.Sprintf("git rev-parse --git-path: unexpected output %q", out)
		}
	}
	for i, st := range states {
		path, err := absFrom(workTree, strings.TrimSpace(paths[i]))
		if err != nil {
			return false, err.Error()
		}
		if _, err := os.Stat(path); err == nil {
			return false, st.why
		}
	}
	return true, ""
}

// GuardHook is Guard with the rules of hook h given git's arguments args
// (githooks(5)):
//   - post-checkout runs only for branch checkouts (third argument "1");
//     a file checkout (`git checkout -- f`, "0") changes no branch;
//   - post-rewrite "rebase" runs although rebase-merge/ still exists: git
//     2.39's sequencer calls post-rewrite just before it removes its state,
//     and that call is the signal that the rebase is complete.
func GuardHook(ctx context.Context, workTree string, h Hook, args []string) (run bool, why string) {
	return guardHook(ctx, workTree, h, args, nil)
}

func guardHook(ctx context.Context, workTree string, h Hook, args []string, loc Local) (run bool, why string) {
	if !h.Valid() {
		return false, fmt.Sprintf("unknown hook %q", h)
	}
	if h == PostCheckout && len(args) >= 3 && args[2] != "1" {
		return false, "file checkout"
	}
	run, why = guard(ctx, workTree, loc)
	if !run && h == PostRewrite && len(args) >= 1 && args[0] == "rebase" &&
		(why == "rebase in progress" || why == "rebase or am in progress") {
		return true, ""
	}
	return run, why
}

// NothingMoved is Run's reason when a refresh hook had nothing to do: the stamp (StampFile) still holds
// for the refs and HEAD, and the checkout record is there.
const NothingMoved = "nothing moved since the last refresh hook"

// Timeout returns how long `ctx hooks run h` may take: CTX_HOOK_TIMEOUT
// (seconds, as the shim sets it; a decimal like 0.5 works) when valid, else
// 2 s for the refresh hooks and 30 s for pre-push; raised to CTX_HOOK_TIMEOUT_MIN
// seconds when that is valid and more (at most a day).
func Timeout(h Hook) time.Duration {
	d := time.Duration(timeoutSeconds(h)) * time.Second
	if s, ok := envSeconds(EnvTimeout, math.MaxInt64/float64(time.Second)); ok {
		d = s
	}
	if s, ok := envSeconds(EnvTimeoutMin, 86400); ok && s > d {
		d = s
	}
	return d
}

// envSeconds reads the environment variable name as a positive number of seconds of at most most (a
// decimal like 0.5 works); ok is false when it is unset or not such a number.
func envSeconds(name string, most float64) (time.Duration, bool) {
	v := os.Getenv(name)
	if v == "" {
		return 0, false
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || !(s > 0) || s > most {
		return 0, false
	}
	return time.Duration(s * float64(time.Second)), true
}

// Actions are what the hooks do; cmd/ctx supplies them from the store, so
// this package needs no store to run. A nil action is skipped.
type Actions struct {
	// CheckoutRemoved, for post-checkout, puts back the files of .context/ that git removed in the checkout
	// from commit old to commit new (git's first two arguments): files old tracks there (a branch where
	// someone ran `git add -f .context/...`), new does not, missing now (docs/hooks.md "Files git removed
	// in a checkout"). It runs before the stamp is looked at, which says nothing about them.
	CheckoutRemoved func(ctx context.Context, workTree, old, new string) error
	// Refresh brings .context/ up to date with the context refs.
	Refresh func(ctx context.Context, workTree string) error
	// Activity records this machine's current branch ("" when detached).
	Activity func(ctx context.Context, workTree, branch string) error
	// Push publishes the context branch; remote and url are git's pre-push arguments (the remote's name,
	// or its URL when pushing to a URL; the URL git pushes to). Run does not call it for a dry run it can
	// see (DryRunSkip); which remote to push to is the action's (PushTarget).
	Push func(ctx context.Context, workTree, remote, url string) error
	// Note records the active agent session (from the environment) on the commit HEAD names.
	Note func(ctx context.Context, workTree string) error
	// Rewrite records, after `git commit --amend` or `git rebase` (command), which commit each rewritten
	// commit was made from (docs/blame.md "Rewrites").
	Rewrite func(ctx context.Context, workTree, command string) error
	// StampRefs names the context refs .context/ mirrors; with it, a successful refresh hook writes
	// StampFile, which lets the shim skip ctx while they and HEAD stay where they were (nil: no stamp).
	StampRefs func(ctx context.Context, workTree string) ([]string, error)
	// FollowsBranch says whether Activity has something to keep in step with HEAD (this machine has an
	// active activity entry); when it says no, post-checkout's stamp does not name HEAD (nil: it does).
	FollowsBranch func(ctx context.Context, workTree string) (bool, error)
	// Local, when set, answers in process what Run otherwise asks git (the guard's and the stamp's paths,
	// the refs' values, HEAD): each git process is a few milliseconds of the user's checkout
	// (docs/hooks.md "A checkout after the context branch moved"). An error falls back to git.
	Local func(ctx context.Context, workTree string) (Local, error)
}

// Local is what a hook reads of the repository without starting git.
type Local interface {
	// GitPath is `git rev-parse --git-path name` for a file git keeps per worktree (HEAD's neighbours:
	// rebase-merge, CHERRY_PICK_HEAD, ctx's hook stamp), as an absolute path.
	GitPath(name string) string
	// RefValues is what `git for-each-ref --format='%(refname)=%(objectname)' REF...` prints for full ref
	// names: REF=OID of each ref that exists, sorted by name.
	RefValues(ctx context.Context, refs []string) ([]string, error)
	// Head is `git rev-parse --symbolic-full-name HEAD`: the full name of HEAD's branch, or "HEAD" when it
	// is detached.
	Head(ctx context.Context) (string, error)
}

// Run runs hook h with git's arguments args in workTree, for
// `ctx hooks run`. It returns ran=false and the reason when GuardHook says
// no. The work is bounded by Timeout(h). What each hook does:
//
//	post-checkout  Refresh, then Activity(branch) when Refresh succeeded
//	post-merge     Refresh
//	post-rewrite   Refresh, then Rewrite(command)
//	pre-push       Push(remote, url), unless git's command is `git push --dry-run` (DryRunSkip)
//	post-commit    Note
//
// Errors are returned for `ctx hooks run` to print; the shim in the hook
// file ignores its exit status, so they never fail the user's git command.
func Run(ctx context.Context, workTree string, h Hook, args []string, a Actions) (ran bool, why string, err error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout(h))
	defer cancel()
	var loc Local
	if a.Local != nil {
		if l, err := a.Local(ctx, workTree); err == nil {
			loc = l
		}
	}
	if run, why := guardHook(ctx, workTree, h, args, loc); !run {
		return false, why, nil
	}
	var errs []error
	if h == PostCheckout && a.CheckoutRemoved != nil && len(args) >= 2 && args[0] != args[1] {
		if err := a.CheckoutRemoved(ctx, workTree, args[0], args[1]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h, err))
		}
	}
	// What the shim checks before it starts ctx, for a caller that does not (a hook manager's snippet, an
	// older shim, CTX_HOOKS switched back on): nothing moved, nothing to do, nothing written.
	if refreshHook(h) && loc != nil && len(errs) == 0 && fresh(ctx, workTree, loc) {
		return false, NothingMoved, nil
	}
	switch h {
	case PostCheckout, PostMerge, PostRewrite:
		st := beginStamp(ctx, workTree, a, loc)
		refreshed := true
		if a.Refresh != nil {
			if err := a.Refresh(ctx, workTree); err != nil {
				errs = append(errs, fmt.Errorf("%s: refresh .context: %w", h, err))
				refreshed = false
			}
		}
		// A failed refresh (an unsafe commit on the branch, a broken store) records no activity: that
		// would be a commit on top of a branch ctx could not check out.
		if h == PostRewrite && a.Rewrite != nil && len(args) > 0 {
			if err := a.Rewrite(ctx, workTree, args[0]); err != nil {
				errs = append(errs, fmt.Errorf("%s: record the rewrite: %w", h, err))
			}
		}
		if h == PostCheckout && a.Activity != nil && refreshed {
			branch := currentBranch(ctx, workTree, loc)
			if err := a.Activity(ctx, workTree, branch); err != nil {
				errs = append(errs, fmt.Errorf("%s: record activity: %w", h, err))
			}
		}
		if st != nil && len(errs) == 0 && ctx.Err() == nil {
			// post-merge and post-rewrite do not record the branch: their stamp names HEAD, so that a
			// checkout of another branch still runs post-checkout's Activity.
			follows := true
			if h == PostCheckout && a.FollowsBranch != nil {
				if f, err := a.FollowsBranch(ctx, workTree); err == nil {
					follows = f
				}
			}
			if err := st.write(ctx, workTree, follows, loc); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", h, err))
			}
		}
	case PostCommit:
		if a.Note != nil {
			if err := a.Note(ctx, workTree); err != nil {
				errs = append(errs, fmt.Errorf("post-commit: note the agent session: %w", err))
			}
		}
	case PrePush:
		remote, url := "", ""
		if len(args) > 0 {
			remote = args[0]
		}
		if len(args) > 1 {
			url = args[1]
		}
		// git runs pre-push for `git push --dry-run` too, and tells the hook nothing of it (docs/hooks.md
		// "pre-push: which remote, and dry runs").
		if dry, _ := gitPushDryRun(); dry {
			return false, DryRunSkip, nil
		}
		if a.Push != nil {
			if err := a.Push(ctx, workTree, remote, url); err != nil {
				errs = append(errs, fmt.Errorf("pre-push: ctx push: %w", err))
			}
		}
	}
	return true, "", errors.Join(errs...)
}

// currentBranch is `git symbolic-ref --quiet --short HEAD`: the short name of HEAD's branch, "" when
// detached.
func currentBranch(ctx context.Context, workTree string, loc Local) string {
	if loc != nil {
		if head, err := loc.Head(ctx); err == nil {
			if head == "HEAD" {
				return ""
			}
			if b, ok := strings.CutPrefix(head, "refs/heads/"); ok {
				return b
			}
		}
	}
	branch, _ := git(ctx, workTree, "symbolic-ref", "--quiet", "--short", "HEAD")
	return branch
}
