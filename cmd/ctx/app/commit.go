package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// commitOptions are the flags of ctx commit.
type commitOptions struct{ Message string }

func newCommitCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "commit",
		Usage: "record the hand edits of .context/ as one commit",
		Flags: []cli.Flag{&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "commit summary `MSG`"}},
		Action: action(e, func(c *cli.Context) (commitOptions, error) {
			return commitOptions{Message: c.String("message")}, nil
		}, runCommit),
	}, "Records the files added, changed or deleted by hand in the checked-out tree .context/ as one commit\n"+
		"of the context branch (a file the branch changed meanwhile is merged with your edit). A file that\n"+
		"does not follow the layout (docs/format.md) is refused and nothing is committed: the error names\n"+
		"each such file; move it out of .context/ or rename it, then run ctx commit again.",
		[]string{"ctx commit", "ctx commit -m 'notes from the design review'"},
		exits(ExitUsage, ExitNoStore))
}

func runCommit(ctx context.Context, e *env, o commitOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	res, edits, err := s.CommitHandEdits(ctx, o.Message)
	if err != nil {
		return err
	}
	if len(edits) == 0 {
		fmt.Fprintln(e.stdout, "nothing to commit: .context/ matches the context branch")
		return nil
	}
	for _, ed := range edits {
		fmt.Fprintf(e.stdout, "  %-8s %s\n", ed.Change, ed.Path)
		if b, err := os.ReadFile(filepath.Join(s.CheckoutRoot(), filepath.FromSlash(ed.Path))); err == nil && ed.Change != "deleted" {
			for _, w := range store.LintFile(ed.Path, b) {
				fmt.Fprintf(e.stderr, "ctx: warning: %s\n", w)
			}
		}
	}
	commitLine(e.stdout, "hand edits", res)
	for _, c := range res.Conflicts {
		// The hand edit met a newer write of the same lines: the file holds one version, the other is in
		// the conflict record.
		fmt.Fprintf(e.stderr, "ctx: conflict %s: %s: your hand edit and a newer write changed the same lines; the file holds one of them, the other is kept in the record: ctx conflicts %s\n", c.ID, c.Path, c.ID)
	}
	return nil
}
