package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/blame"
	"github.com/ctx-dev/ctx/hooks"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// installHooks installs the git hooks after ctx init and says what it did.
func installHooks(ctx context.Context, s *store.Store) (string, error) {
	st, err := hooks.Install(ctx, s.WorkTree(), hooks.Options{PrePush: s.Config().PushWithGit})
	if err != nil {
		return "", err
	}
	return describeHooks(st, "installed"), nil
}

// hooksHint is said after the first pull of a clone (the remote's branch adopted, no ctx init run): when
// git's hooks that refresh .context/ are not installed, how to install them; "" when they are.
func hooksHint(ctx context.Context, s *store.Store) string {
	if s.Bare() {
		return ""
	}
	st, err := hooks.Report(ctx, s.WorkTree(), hooks.Options{PrePush: s.Config().PushWithGit})
	if ctx.Err() != nil {
		return "" // interrupted: the failure is the interruption's, not the hooks'
	}
	if err != nil {
		return fmt.Sprintf("hint: ctx's git hooks cannot run here (%v)", err)
	}
	for _, h := range st.Hooks {
		if h.Installed && h.Executable {
			return ""
		}
	}
	if st.Manager != hooks.NoManager {
		return fmt.Sprintf("hint: ctx's git hooks are not installed, so .context/ is refreshed only when ctx runs; %s manages the hooks: ctx hooks install prints what to add to its configuration", st.Manager)
	}
	if st.InWorkTree {
		return fmt.Sprintf("hint: ctx's git hooks are not installed, so .context/ is refreshed only when ctx runs; the hooks folder git uses, %s (core.hooksPath), is inside your work tree: ctx hooks install --in-work-tree adds them there (files of your repository), ctx hooks status prints the lines to add yourself", st.Dir)
	}
	return "hint: ctx's git hooks are not installed, so .context/ is refreshed only when ctx runs (not on git checkout, merge or rebase): install them with ctx hooks install"
}

// outdatedHooksHint is doctor's line about git hooks whose ctx block another version of ctx wrote (they
// may lack what this version's hooks do): which, and the command that updates them; "" when none is.
func outdatedHooksHint(ctx context.Context, s *store.Store) string {
	if s.Bare() {
		return ""
	}
	st, err := hooks.Report(ctx, s.WorkTree(), hooks.Options{PrePush: s.Config().PushWithGit})
	if err != nil {
		return ""
	}
	var old []string
	for _, h := range st.Hooks {
		if h.Outdated {
			old = append(old, string(h.Name))
		}
	}
	if len(old) == 0 {
		return ""
	}
	return fmt.Sprintf("hint: ctx's block in the git hooks %s was written by another version of ctx: update it with ctx hooks install", strings.Join(old, ", "))
}

// pushHookChanged installs or removes the pre-push hook after ctx config sync.push-with-git.
func pushHookChanged(ctx context.Context, e *env, s *store.Store) error {
	if s.Bare() {
		return nil
	}
	st, err := hooks.Install(ctx, s.WorkTree(), hooks.Options{PrePush: s.Config().PushWithGit})
	if err != nil {
		return err
	}
	if s.Config().PushWithGit {
		fmt.Fprintln(e.stdout, describeHooks(st, "installed"))
	}
	return nil
}

func describeHooks(st hooks.Status, verb string) string {
	if st.Manager != hooks.NoManager {
		// ctx writes nothing in a hook manager's files: it says what belongs there, and whether a
		// command changed anything (never).
		switch verb {
		case "uninstalled":
			return fmt.Sprintf("hooks: %s manages %s; ctx changed nothing there: remove the ctx lines you added to its configuration:\n%s", st.Manager, st.Dir, st.Snippet)
		case "installed":
			return fmt.Sprintf("hooks: %s manages %s; ctx wrote nothing there: add this to its configuration:\n%s", st.Manager, st.Dir, st.Snippet)
		}
		out := fmt.Sprintf("hooks: %s manages %s; ctx does not read its configuration: these are the lines to have there for ctx's hooks:\n%s", st.Manager, st.Dir, st.Snippet)
		// ctx's own blocks in the hooks directory (written before the manager came, or by hand) are
		// reported too: git runs them whoever manages the rest.
		var names []string
		for _, h := range st.Hooks {
			if h.Installed {
				names = append(names, string(h.Name))
			}
		}
		if len(names) > 0 {
			out += fmt.Sprintf("\nctx's blocks are in %s: %s", st.Dir, strings.Join(names, ", "))
		}
		return out
	}
	var names []string
	for _, h := range st.Hooks {
		if h.Installed {
			names = append(names, string(h.Name))
		}
	}
	if st.InWorkTree && st.Snippet != "" {
		// A hooks folder among the user's files (core.hooksPath=.githooks): ctx wrote nothing there
		// (docs/hooks.md "Where the hooks go").
		out := "hooks: ctx wrote nothing: the hooks folder git uses is inside your work tree (its files are your repository's)"
		if verb != "installed" {
			out = "hooks: the hooks folder git uses is inside your work tree"
		}
		if len(names) > 0 {
			out += fmt.Sprintf("; ctx's blocks there: %s", strings.Join(names, ", "))
		}
		out += "; .context/ is refreshed by git's hooks only once they run ctx:\n" + st.Snippet
		for _, n := range st.Notes {
			out += "\n  note: " + n
		}
		return out
	}
	out := fmt.Sprintf("hooks %s in %s: %s", verb, st.Dir, strings.Join(names, ", "))
	if len(names) == 0 {
		out = fmt.Sprintf("no ctx hooks in %s: .context/ is refreshed only by ctx itself (ctx hooks install adds them)", st.Dir)
	}
	for _, h := range st.Hooks {
		if h.Skipped != "" {
			out += fmt.Sprintf("\n  %s left alone: %s", h.Name, h.Skipped)
		}
	}
	for _, n := range st.Notes {
		out += "\n  note: " + n
	}
	return out
}

// hookActions are what ctx's git hooks do, from the store of the worktree (package hooks runs them). The
// refresh hooks open the store once for all their actions (each open reads config and refs again); close
// closes it.
func hookActions(e *env) (a hooks.Actions, closeStore func()) {
	openAt := func(ctx context.Context, wt string) (*store.Store, error) {
		return store.Open(ctx, wt, e.actor)
	}
	// The store of the refresh hooks' actions, opened on first use. Its actor is the zero one, as the
	// activity entry's branch is this machine's, whichever agent ran git.
	var shared *store.Store
	var sharedErr error
	opened := false
	open := func(ctx context.Context, wt string) (*store.Store, error) {
		if !opened {
			opened = true
			shared, sharedErr = store.Open(ctx, wt, store.Actor{})
			if sharedErr == nil {
				shared.ReadInProcess() // a few objects of a possibly big pack (docs/hooks.md)
			}
		}
		return shared, sharedErr
	}
	closeStore = func() {
		if shared != nil {
			_ = shared.Close()
		}
	}
	return hooks.Actions{
		Local: func(ctx context.Context, wt string) (hooks.Local, error) {
			// Paths and refs only: the store runHooksRun opened already answers, so that a hook with nothing
			// to do opens one store (hooks.Run returns before the refresh's own is opened).
			s, err := e.open(ctx)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		CheckoutRemoved: func(ctx context.Context, wt, old, new string) error {
			s, err := open(ctx, wt)
			if err != nil {
				return err
			}
			if ok, _ := s.Initialized(ctx); !ok {
				return nil
			}
			back, err := s.RestoreCheckoutRemoved(ctx, old, new)
			for _, p := range back {
				fmt.Fprintf(e.stderr, "ctx: put back %s/%s, which git removed with the branch that tracks it\n", store.CheckoutDir, p)
			}
			return err
		},
		Refresh: func(ctx context.Context, wt string) error {
			s, err := open(ctx, wt)
			if err != nil {
				return err
			}
			r, err := s.Refresh(ctx)
			if err != nil {
				return err
			}
			for _, p := range r.Kept {
				fmt.Fprintf(e.stderr, "ctx: kept your hand edit of %s/%s (record it with ctx commit)\n", store.CheckoutDir, p)
			}
			for _, p := range r.Skipped {
				if !p.Unsafe {
					fmt.Fprintf(e.stderr, "ctx: skipped %s (not checked out; see ctx doctor)\n", p)
				}
			}
			// git moved the branch (git fetch origin ctx:ctx, git update-ref) without ctx's checks: a tip
			// holding entries that could write outside .context/ is reported on every hook run (none of them
			// was written), and the hook records nothing on top of it (no activity write). The refresh
			// knows when the tips hold no such entry (it checked what changed since tips it knew clean).
			if !r.Clean {
				ps, err := s.TreeProblems(ctx)
				if err != nil {
					return err
				}
				var unsafe []string
				for _, p := range ps {
					if p.Unsafe {
						unsafe = append(unsafe, p.String())
					}
				}
				if len(unsafe) > 0 {
					return fmt.Errorf("the context branch holds unsafe entries, not checked out:\n  %s\n(see ctx doctor)", strings.Join(unsafe, "\n  "))
				}
			}
			// The agents' files enabled for refresh follow the branch (docs/adapters.md "Refresh"); in a hook,
			// only their problems are said (git shows the hook's stderr: a checkout that went well is silent).
			refreshAdapters(ctx, e, s, false)
			return nil
		},
		Activity: func(ctx context.Context, wt, branch string) error {
			// This machine's branch in its activity entry.
			s, err := open(ctx, wt)
			if err != nil {
				return err
			}
			if ok, _ := s.Initialized(ctx); !ok {
				return nil
			}
			_, err = s.UpdateBranch(ctx, branch)
			return err
		},
		StampRefs: func(ctx context.Context, wt string) ([]string, error) {
			// The refs .context/ mirrors: the hook's stamp lets the shim skip ctx while they stay put.
			s, err := open(ctx, wt)
			if err != nil {
				return nil, err
			}
			return s.Refs(), nil
		},
		FollowsBranch: func(ctx context.Context, wt string) (bool, error) {
			s, err := open(ctx, wt)
			if err != nil {
				return true, err
			}
			if ok, _ := s.Initialized(ctx); !ok {
				return false, nil
			}
			return s.FollowsBranch(ctx)
		},
		Note: func(ctx context.Context, wt string) error {
			// The agent session of the commit HEAD names, from git's environment (docs/blame.md).
			_, err := blame.RecordNote(ctx, wt, os.Getenv, time.Now())
			return err
		},
		Rewrite: func(ctx context.Context, wt, command string) error {
			// Which commit each rewritten one was made from, as git reports it (docs/blame.md "Rewrites").
			_, err := blame.RecordRewrites(ctx, wt, command, time.Now())
			return err
		},
		Push: func(ctx context.Context, wt, remote, url string) error {
			s, err := openAt(ctx, wt)
			if err != nil {
				return err
			}
			defer func() { _ = s.Close() }()
			if ok, _ := s.Initialized(ctx); !ok {
				return nil
			}
			// Only to the remote ctx syncs with, and only when git pushes there: a push of the code to a
			// fork or a mirror does not publish the context (docs/hooks.md "pre-push: which remote").
			target, skip := hooks.PushTarget(ctx, wt, s.RemoteName(ctx), remote, url)
			if skip != "" {
				fmt.Fprintln(e.stderr, "ctx: "+skip)
				return nil
			}
			_, err = s.Push(ctx, store.PushOptions{Remote: target})
			return err
		},
	}, closeStore
}

func newHooksCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "hooks",
		Usage: "git hooks that refresh .context/ on checkout, merge and rewrite (and opt-in pre-push)",
		Subcommands: []*cli.Command{
			newHooksVerbCmd(e, "install", "add ctx's block to the hooks git uses (existing hooks kept)",
				"Adds ctx's block to post-checkout, post-merge and post-rewrite (and pre-push with sync.push-with-git)\n"+
					"in the hooks folder git uses (core.hooksPath included), keeping what the hooks already do. Where a\n"+
					"hook manager (husky, lefthook, pre-commit) owns the hooks, prints what to add to its configuration.\n"+
					"Where core.hooksPath names a folder inside the work tree (.githooks, which teams commit), writes\n"+
					"nothing there and prints the lines to add, unless --in-work-tree says to edit those files.\n"+
					"--blame adds post-commit: a commit made while a coding agent's session is active (CLAUDE_CODE_SESSION_ID,\n"+
					"CODEX_THREAD_ID or CTX_SESSION in git's environment) gets a note on refs/notes/ctx naming the session,\n"+
					"which ctx blame reads as proof (docs/blame.md); the commit itself is never changed."),
			newHooksVerbCmd(e, "uninstall", "remove exactly what install added",
				"Removes ctx's block from each hook, and a hook file that held only ctx's block."),
			newHooksVerbCmd(e, "status", "show which hooks hold ctx's block",
				"Shows the hooks folder git uses and which hooks hold ctx's block."),
			newHooksRunCmd(e),
		},
	}, "ctx's git hooks refresh the checked-out tree .context/ when git checks out, merges or rewrites, and\n"+
		"record the current branch in this machine's activity entry; with sync.push-with-git, git push also\n"+
		"pushes the context branch.",
		[]string{"ctx hooks install", "ctx hooks status --json", "ctx hooks uninstall"},
		[]exit{{ExitNoStore, "not a git repository"}, {ExitFailure, "failure, or a bare repository (no tree to refresh)"}})
}

// hooksOptions are the arguments of ctx hooks install, uninstall and status.
type hooksOptions struct {
	Verb  string // install, uninstall, status
	Blame bool   // install: also the post-commit hook that notes the agent session (docs/blame.md)
	// InWorkTree (install): write into a hooks folder inside the work tree too (hooks.Options.InWorkTree).
	InWorkTree bool
	JSON       bool
}

func newHooksVerbCmd(e *env, verb, usage, description string) *cli.Command {
	flags := []cli.Flag{jsonFlag}
	examples := []string{"ctx hooks " + verb, "ctx hooks " + verb + " --json"}
	if verb == "install" {
		flags = append(flags, &cli.BoolFlag{Name: "blame", Usage: "also install post-commit: a commit made while a coding agent's session is active gets a note on refs/notes/ctx naming it (docs/blame.md)"},
			&cli.BoolFlag{Name: "in-work-tree", Usage: "also write when the hooks folder git uses is inside the work tree (core.hooksPath=.githooks): edits files of your repository"})
		examples = append(examples, "ctx hooks install --blame", "ctx hooks install --in-work-tree")
	}
	return withHelp(&cli.Command{
		Name:  verb,
		Usage: usage,
		Flags: flags,
		Action: action(e, func(c *cli.Context) (hooksOptions, error) {
			install := verb == "install"
			return hooksOptions{Verb: verb, Blame: install && c.Bool("blame"), InWorkTree: install && c.Bool("in-work-tree"), JSON: c.Bool("json")}, nil
		}, runHooks),
	}, description,
		examples,
		[]exit{{ExitNoStore, "not a git repository"}, {ExitFailure, "failure, or a bare repository (no tree to refresh)"}})
}

// workTree is the work tree of the repository ctx runs in; an error for a bare one.
func (e *env) workTree(ctx context.Context) (string, error) {
	s, err := e.open(ctx)
	if err != nil {
		return "", err
	}
	if s.Bare() {
		return "", fmt.Errorf("a bare repository has no checked-out tree to refresh: no hooks needed")
	}
	return s.WorkTree(), nil
}

func runHooks(ctx context.Context, e *env, o hooksOptions) (rerr error) {
	wt, err := e.workTree(ctx)
	if err != nil {
		return err
	}
	var st hooks.Status
	verb := "present"
	switch o.Verb {
	case "install":
		s, _ := e.open(ctx)
		st, err = hooks.Install(ctx, wt, hooks.Options{PrePush: s.Config().PushWithGit, Blame: o.Blame, InWorkTree: o.InWorkTree})
		verb = "installed"
	case "uninstall":
		before, berr := hooks.Report(ctx, wt, hooks.Options{})
		if berr != nil {
			return berr
		}
		st, err = hooks.Uninstall(ctx, wt)
		verb = "uninstalled"
		// A block edited by hand is left in place (hooks.HookStatus.Skipped): a partial result, exit 1.
		var kept []string
		for _, h := range st.Hooks {
			if h.Skipped != "" {
				kept = append(kept, string(h.Name))
				if !o.JSON {
					fmt.Fprintf(e.stderr, "ctx: warning: %s: %s\n", h.Path, h.Skipped)
				}
			}
		}
		if err == nil && len(kept) > 0 {
			defer func() {
				if rerr == nil {
					rerr = fmt.Errorf("hooks left in place, their ctx block edited by hand: %s", strings.Join(kept, ", "))
				}
			}()
		}
		if err == nil && !o.JSON && st.Manager == hooks.NoManager {
			// Say what was taken out, and say so when there was nothing to take out.
			var names []string
			for _, h := range before.Hooks {
				if h.Installed && !slices.Contains(kept, string(h.Name)) {
					names = append(names, string(h.Name))
				}
			}
			if len(names) == 0 {
				fmt.Fprintf(e.stdout, "no ctx hooks were installed in %s: nothing to uninstall\n", st.Dir)
			} else {
				fmt.Fprintf(e.stdout, "hooks uninstalled from %s: %s\n", st.Dir, strings.Join(names, ", "))
			}
			return nil
		}
	default:
		// Every hook the user must add, pre-push too when sync.push-with-git is on (as install says).
		s, _ := e.open(ctx)
		st, err = hooks.Report(ctx, wt, hooks.Options{PrePush: s.Config().PushWithGit})
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, st)
	}
	fmt.Fprintln(e.stdout, describeHooks(st, verb))
	if o.Verb != "uninstall" {
		warnNotOnPath(e)
	}
	return nil
}

// hooksRunOptions are the arguments of ctx hooks run.
type hooksRunOptions struct {
	Hook hooks.Hook
	Args []string
}

func newHooksRunCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "run",
		Usage:     "run a hook's work (called by the hook files; fails open)",
		ArgsUsage: "HOOK [ARGS...]",
		Hidden:    true,
		Action: action(e, func(c *cli.Context) (hooksRunOptions, error) {
			if c.NArg() < 1 {
				return hooksRunOptions{}, usagef("usage: ctx hooks run HOOK [ARGS...]")
			}
			h := hooks.Hook(c.Args().Get(0))
			if !h.Valid() {
				return hooksRunOptions{}, usagef("unknown hook %q", h)
			}
			return hooksRunOptions{Hook: h, Args: c.Args().Slice()[1:]}, nil
		}, runHooksRun),
	}, "Does the work of the git hook HOOK with git's arguments ARGS; the hook files call it. A failure is\n"+
		"reported but never fails git's own command.",
		[]string{"ctx hooks run post-checkout OLD NEW 1"},
		[]exit{{ExitUsage, "usage error, or an unknown hook"}, {ExitNoStore, "not a git repository"}})
}

func runHooksRun(ctx context.Context, e *env, o hooksRunOptions) error {
	// A hook is a short-lived process (bounded by its time limit) whose heap stays small: collecting it
	// cost about a tenth of a refresh hook's CPU at 10,000 entries (bench/README.md "Third round").
	defer lessGC(1 << 30)()
	// The bound the shim once got from timeout(1), a second process on every checkout: hooks.Run's
	// deadline stops the work (and the git processes it started), and should anything not heed it, the
	// process ends a second later whatever it is blocked on (docs/hooks.md "The shim").
	defer hookWatchdog(hooks.Timeout(o.Hook)+hookGrace, func() {
		fmt.Fprintf(e.stderr, "ctx: hooks run %s: still running after its time limit; stopped\n", o.Hook)
		os.Exit(ExitFailure)
	})()
	// The store of e.workTree answers hooks.Local (paths and refs, no objects): it needs no cat-file
	// process, nor the listing of the packs that decides whether to start one.
	e.goGitReads = true
	err := runHook(ctx, e, o)
	if err != nil && o.Hook != hooks.PrePush {
		// The shim shows ctx's standard error (git passes it on) and ignores its exit status: say that the
		// user's git command went on, and where to look (docs/hooks.md "The shim").
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (the hook's time limit is %s)", err, hooks.Timeout(o.Hook))
		}
		return fmt.Errorf("%w\n%s", err, hookFailedHint)
	}
	return err
}

// hookFailedHint follows what a failed hook printed: the shim's git command succeeded all the same.
const hookFailedHint = "ctx: (git's own command succeeded; ctx status says what is left to fix; CTX_HOOKS=0 turns ctx's git hooks off)"

func runHook(ctx context.Context, e *env, o hooksRunOptions) error {
	wt, err := e.workTree(ctx)
	if err != nil {
		return err
	}
	a, closeStore := hookActions(e)
	defer closeStore()
	ran, why, err := hooks.Run(ctx, wt, o.Hook, o.Args, a)
	if !ran && why == hooks.DryRunSkip {
		fmt.Fprintln(e.stderr, "ctx: "+why) // one line in git's dry run: what a real push would add
	}
	return err
}

// hookGrace is how long `ctx hooks run` may outlive its time limit before hookWatchdog ends it (timeout(1)'s
// `-k 1` in the shims of earlier versions).
const hookGrace = time.Second

// hookWatchdog calls stop once d has passed, unless the returned cancel was called first. stop must end the
// process: it runs on a goroutine of its own while the rest may be blocked.
func hookWatchdog(d time.Duration, stop func()) (cancel func()) {
	t := time.AfterFunc(d, stop)
	return func() { t.Stop() }
}

// warnNotOnPath warns on standard error when no ctx is on PATH: the git hooks (and the agents' MCP
// configuration) run `ctx` by name and skip their work without one.
func warnNotOnPath(e *env) {
	if _, err := exec.LookPath("ctx"); err != nil {
		fmt.Fprintln(e.stderr, "ctx: warning: no ctx on PATH: the git hooks skip their work until there is one (make install puts ctx in PREFIX/bin; add that folder to PATH)")
	}
}
