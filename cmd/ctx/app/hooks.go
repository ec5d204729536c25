package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctx-dev/ctx/hooks"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func init() {
	registry = append(registry, hooksCommand)
	installHooks = func(c *cli.Context, s *store.Store) (string, error) {
		st, err := hooks.Install(c.Context, s.Repo.WorkTree(), hooks.Options{PrePush: s.Cfg.PushWithGit})
		if err != nil {
			return "", err
		}
		return describeHooks(st, "installed"), nil
	}
	hooksHint = func(c *cli.Context, s *store.Store) string {
		if s.Repo.Bare() {
			return ""
		}
		st, err := hooks.Report(c.Context, s.Repo.WorkTree())
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
		return "hint: ctx's git hooks are not installed, so .context/ is refreshed only when ctx runs (not on git checkout, merge or rebase): install them with ctx hooks install"
	}
	onConfigChanged = func(c *cli.Context, s *store.Store, key string) error {
		if key != "sync.push-with-git" || s.Repo.Bare() {
			return nil
		}
		st, err := hooks.Install(c.Context, s.Repo.WorkTree(), hooks.Options{PrePush: s.Cfg.PushWithGit})
		if err != nil {
			return err
		}
		if s.Cfg.PushWithGit {
			fmt.Fprintln(c.App.Writer, describeHooks(st, "installed"))
		}
		return nil
	}
}

func describeHooks(st hooks.Status, verb string) string {
	if st.Manager != hooks.NoManager {
		return fmt.Sprintf("hooks: %s manages %s; add this to its configuration:\n%s", st.Manager, st.Dir, st.Snippet)
	}
	var names []string
	for _, h := range st.Hooks {
		if h.Installed {
			names = append(names, string(h.Name))
		}
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

// hookActions are what ctx's git hooks do, from the store of the worktree (design §6).
func hookActions(c *cli.Context) hooks.Actions {
	openAt := func(ctx context.Context, wt string) (*store.Store, error) {
		return store.Open(ctx, wt, store.Actor{Agent: c.String("agent"), Session: c.String("session")})
	}
	return hooks.Actions{
		Refresh: func(ctx context.Context, wt string) error {
			s, err := openAt(ctx, wt)
			if err != nil {
				return err
			}
			r, err := s.Refresh(ctx)
			if err != nil {
				return err
			}
			for _, p := range r.Kept {
				fmt.Fprintf(c.App.ErrWriter, "ctx: kept your hand edit of %s/%s (record it with ctx commit)\n", store.CheckoutDir, p)
			}
			for _, p := range r.Skipped {
				if !p.Unsafe {
					fmt.Fprintf(c.App.ErrWriter, "ctx: skipped %s (not checked out; see ctx doctor)\n", p)
				}
			}
			// git moved the branch (git fetch origin ctx:ctx, git update-ref) without ctx's checks: a tip
			// holding entries that could write outside .context/ is reported on every hook run (none of them
			// was written), and the hook records nothing on top of it (no activity write).
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
			if afterPull != nil {
				afterPull(ctx, c, s)
			}
			return nil
		},
		Activity: hookActivity,
		Push: func(ctx context.Context, wt, remote string) error {
			s, err := openAt(ctx, wt)
			if err != nil {
				return err
			}
			if ok, _ := s.Initialized(ctx); !ok {
				return nil
			}
			_, err = s.Push(ctx, remote)
			return err
		},
	}
}

// hookActivity records this machine's branch in its activity entry; set by the activity command file.
var hookActivity func(ctx context.Context, workTree, branch string) error

func hooksCommand() *cli.Command {
	report := func(c *cli.Context, st hooks.Status, verb string) error {
		if c.Bool("json") {
			return printJSON(c.App.Writer, st)
		}
		fmt.Fprintln(c.App.Writer, describeHooks(st, verb))
		return nil
	}
	workTree := func(c *cli.Context) (string, error) {
		s, err := open(c)
		if err != nil {
			return "", err
		}
		if s.Repo.Bare() {
			return "", fmt.Errorf("a bare repository has no checked-out tree to refresh: no hooks needed")
		}
		return s.Repo.WorkTree(), nil
	}
	return &cli.Command{
		Name:  "hooks",
		Usage: "git hooks that refresh .context/ on checkout, merge and rewrite (and opt-in pre-push)",
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "add ctx's block to the hooks git uses (existing hooks kept)",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, err := open(c)
					if err != nil {
						return err
					}
					wt, err := workTree(c)
					if err != nil {
						return err
					}
					st, err := hooks.Install(c.Context, wt, hooks.Options{PrePush: s.Cfg.PushWithGit})
					if err != nil {
						return err
					}
					return report(c, st, "installed")
				},
			},
			{
				Name:  "uninstall",
				Usage: "remove exactly what install added",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					wt, err := workTree(c)
					if err != nil {
						return err
					}
					st, err := hooks.Uninstall(c.Context, wt)
					if err != nil {
						return err
					}
					return report(c, st, "uninstalled")
				},
			},
			{
				Name:  "status",
				Usage: "show which hooks hold ctx's block",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					wt, err := workTree(c)
					if err != nil {
						return err
					}
					st, err := hooks.Report(c.Context, wt)
					if err != nil {
						return err
					}
					return report(c, st, "present")
				},
			},
			{
				Name:      "run",
				Usage:     "run a hook's work (called by the hook files; fails open)",
				ArgsUsage: "HOOK [ARGS...]",
				Hidden:    true,
				Action: func(c *cli.Context) error {
					if c.NArg() < 1 {
						return usagef("usage: ctx hooks run HOOK [ARGS...]")
					}
					h := hooks.Hook(c.Args().Get(0))
					if !h.Valid() {
						return usagef("unknown hook %q", h)
					}
					wt, err := workTree(c)
					if err != nil {
						return err
					}
					_, _, err = hooks.Run(c.Context, wt, h, c.Args().Slice()[1:], hookActions(c))
					return err
				},
			},
		},
	}
}
