package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// initOptions are the flags of ctx init.
type initOptions struct {
	Branch, Remote string
	NoHooks, Adopt bool
}

func newInitCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "init",
		Usage: "create the context branch, the checked-out tree .context/ and the git hooks",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "branch", Usage: "context branch `NAME` (default ctx)"},
			&cli.StringFlag{Name: "remote", Usage: "remote `NAME` to sync with (default origin)"},
			&cli.BoolFlag{Name: "no-hooks", Usage: "do not install the git hooks"},
			&cli.BoolFlag{Name: "adopt", Usage: "commit the files of an existing .context/ that ctx did not write to the context branch"},
		},
		Action: action(e, func(c *cli.Context) (initOptions, error) {
			if c.NArg() > 0 {
				return initOptions{}, usagef("ctx init takes no arguments")
			}
			return initOptions{Branch: c.String("branch"), Remote: c.String("remote"), NoHooks: c.Bool("no-hooks"), Adopt: c.Bool("adopt")}, nil
		}, runInit),
	}, "Creates refs/heads/ctx (or --branch) with a manifest.json, without touching HEAD, the index or\n"+
		"your files. Where the remote already has a context branch, it is adopted; when the remote cannot be\n"+
		"reached, the store is created offline with a warning. Running it again changes nothing. A .context/\n"+
		"that holds files ctx did not write is refused (exit 2, nothing written): move them away, or pass\n"+
		"--adopt to commit them to the context branch (published by the next ctx sync).",
		[]string{"ctx init", "ctx init --branch team-context --remote upstream", "ctx init --no-hooks   # refresh .context/ only when ctx runs", "ctx init --adopt      # keep the files already in .context/"},
		[]exit{{ExitNoStore, "not a git repository"}, {ExitUsage, ""}})
}

func runInit(ctx context.Context, e *env, opt initOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	res, err := s.Init(ctx, store.InitOptions{Branch: opt.Branch, Remote: opt.Remote, Adopt: opt.Adopt})
	if err != nil {
		return err
	}
	w := e.stdout
	switch {
	case res.Unreachable != nil && res.FromTracking != "":
		fmt.Fprintf(e.stderr, "ctx: warning: the remote could not be reached (%v): adopted %s, its context branch as last fetched; "+
			"once it can be reached, ctx pull brings what it gained since\n", res.Unreachable, res.FromTracking)
	case res.Unreachable != nil:
		fmt.Fprintf(e.stderr, "ctx: warning: the remote could not be reached (%v): initialised offline; "+
			"once it can be reached, ctx pull merges its context branch if it has one (ctx push publishes yours)\n", res.Unreachable)
	}
	if res.Orphaned != "" {
		fmt.Fprintf(e.stderr, "ctx: warning: the context branch had been deleted; its last tip %s, which .context/ showed, is kept as %s "+
			"(its entries are no longer in .context/: git log %s shows them; docs/sync.md \"A deleted context branch\")\n",
			res.OrphanedTip.String()[:12], res.Orphaned, res.Orphaned)
	}
	switch {
	case res.Existing:
		fmt.Fprintf(w, "context branch %s already exists at %s: nothing to do\n", s.BranchRef(), res.Tip.String()[:12])
	case res.Adopted != "":
		fmt.Fprintf(w, "adopted the context branch of %s: %s at %s\n", res.Adopted, s.BranchRef(), res.Tip.String()[:12])
	default:
		fmt.Fprintf(w, "created context branch %s at %s\n", s.BranchRef(), res.Tip.String()[:12])
	}
	for _, ed := range res.AdoptedFiles {
		fmt.Fprintf(e.stdout, "adopted %s/%s\n", store.CheckoutDir, ed.Path)
	}
	if root := s.CheckoutRoot(); root != "" {
		exclude := filepath.Join(s.CommonDir(), "info", "exclude") // where ensureExcluded lists it
		if rel, err := filepath.Rel(filepath.Dir(root), exclude); err == nil && !strings.HasPrefix(rel, "..") {
			exclude = rel
		}
		fmt.Fprintf(w, "checked-out tree: %s (ignored by git: its own %s, and listed in %s)\n", root, store.IgnoreFile, exclude)
	}
	if !opt.NoHooks && !s.Bare() {
		if msg, err := installHooks(ctx, s); err != nil {
			fmt.Fprintf(e.stderr, "ctx: warning: hooks not installed: %v\n", err)
		} else if msg != "" {
			fmt.Fprintln(w, msg)
			warnNotOnPath(e)
		}
	}
	return nil
}
