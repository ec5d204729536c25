package app

import (
	"fmt"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// initOptions are the flags of ctx init.
type initOptions struct {
	Branch, Remote string
	NoHooks        bool
}

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create the context branch, the checked-out tree .context/ and the git hooks",
		Description: "Creates refs/heads/ctx (or --branch) with a manifest.json, without touching HEAD, the index or\n" +
			"your files. Where the remote already has a context branch, it is adopted; when the remote cannot be\n" +
			"reached, the store is created offline with a warning. Running it again changes nothing.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "branch", Usage: "context branch `NAME` (default ctx)"},
			&cli.StringFlag{Name: "remote", Usage: "remote `NAME` to sync with (default origin)"},
			&cli.BoolFlag{Name: "no-hooks", Usage: "do not install the git hooks"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("ctx init takes no arguments")
			}
			return runInit(c, initOptions{Branch: c.String("branch"), Remote: c.String("remote"), NoHooks: c.Bool("no-hooks")})
		},
	}
}

func runInit(c *cli.Context, opt initOptions) error {
	s, err := open(c)
	if err != nil {
		return err
	}
	res, err := s.Init(c.Context, store.InitOptions{Branch: opt.Branch, Remote: opt.Remote})
	if err != nil {
		return err
	}
	w := c.App.Writer
	if res.Unreachable != nil {
		fmt.Fprintf(c.App.ErrWriter, "ctx: warning: the remote could not be reached (%v): initialised offline; "+
			"once it can be reached, ctx pull merges its context branch if it has one (ctx push publishes yours)\n", res.Unreachable)
	}
	switch {
	case res.Existing:
		fmt.Fprintf(w, "context branch %s already exists at %s: nothing to do\n", s.BranchRef(), res.Tip.String()[:12])
	case res.Adopted != "":
		fmt.Fprintf(w, "adopted the context branch of %s: %s at %s\n", res.Adopted, s.BranchRef(), res.Tip.String()[:12])
	default:
		fmt.Fprintf(w, "created context branch %s at %s\n", s.BranchRef(), res.Tip.String()[:12])
	}
	if root := s.CheckoutRoot(); root != "" {
		fmt.Fprintf(w, "checked-out tree: %s (listed in .git/info/exclude)\n", root)
	}
	if !opt.NoHooks && installHooks != nil && !s.Bare() {
		if msg, err := installHooks(c, s); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "ctx: warning: hooks not installed: %v\n", err)
		} else if msg != "" {
			fmt.Fprintln(w, msg)
		}
	}
	return nil
}

// installHooks is set by hooks.go: it installs the git hooks after init and says what it did.
var installHooks func(c *cli.Context, s *store.Store) (string, error)
