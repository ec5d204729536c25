package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// restoreOptions are the flags and arguments of ctx restore.
type restoreOptions struct {
	Paths []string
	JSON  bool
}

func newRestoreCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "restore",
		Usage:     "discard hand edits of .context/: write the context branch's version back",
		ArgsUsage: "[PATH...]",
		Flags:     []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (restoreOptions, error) {
			return restoreOptions{Paths: c.Args().Slice(), JSON: c.Bool("json")}, nil
		}, runRestore),
	}, "Writes back, from the tip of the context branch, every file of .context/ changed or deleted by hand\n"+
		"(ctx status lists them), as git restore does for a work tree. With PATHs (under .context/, or\n"+
		"folders of it), only those. Files added by hand are left alone: remove them yourself, or record them\n"+
		"with ctx commit. A .context/ missing as a whole (rm -rf .context, git clean -X) is checked out\n"+
		"again; ctx status, commit, pull and sync refuse to take it for deleted entries.",
		[]string{"ctx restore", "ctx restore knowledge", "ctx restore .context/knowledge/auth.md"},
		exits(ExitUsage, ExitNoStore))
}

func runRestore(ctx context.Context, e *env, o restoreOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	res, err := s.Restore(ctx, o.Paths)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := printJSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		if res.Recreated {
			fmt.Fprintf(e.stdout, "checked .context/ out again (it was missing): %d files written\n", res.CheckedOut)
		} else if len(res.Written) == 0 && len(res.Left) == 0 && len(res.Blocked) == 0 {
			fmt.Fprintln(e.stdout, "nothing to restore: .context/ matches the context branch")
		}
		for _, w := range res.Written {
			fmt.Fprintf(e.stdout, "  restored %-8s %s\n", w.Change, w.Path)
		}
		var refused map[string]string
		if len(res.Left) > 0 {
			// The hand edits left now (the files added by hand, and any edit outside the paths given).
			left, err := s.HandEdits(ctx)
			if err != nil {
				return err
			}
			if refused, err = s.HandEditProblems(ctx, left); err != nil {
				return err
			}
		}
		for _, p := range res.Left {
			if why, ok := refused[p]; ok {
				fmt.Fprintf(e.stdout, "  left     added    %s (added by hand, and ctx commit refuses it: %s: remove it yourself)\n", p, reason(why, p))
				continue
			}
			fmt.Fprintf(e.stdout, "  left     added    %s (added by hand: remove it yourself or record it with ctx commit)\n", p)
		}
	}
	if len(res.Blocked) > 0 {
		return fmt.Errorf("not restored: %s: something that is not a regular file stands there (ctx never writes through a link or over a folder): remove it and run ctx restore again", strings.Join(res.Blocked, ", "))
	}
	return nil
}

// reason is a problem of store.HandEditProblems without the path it starts with (once or twice).
func reason(problem, path string) string {
	for strings.HasPrefix(problem, path+": ") {
		problem = strings.TrimPrefix(problem, path+": ")
	}
	return problem
}
