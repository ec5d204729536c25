package app

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// logOptions are the arguments of ctx log.
type logOptions struct {
	N    int    // at most N commits, 0: all
	Path string // as given: a path of the branch, or of .context/ (see storePath)
	JSON bool
	// DashDash: PATH came after "--" (git's pathspec separator): a path no commit touched is an empty
	// history, not an error.
	DashDash bool
}

func newLogCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "log",
		Usage:     "list context commits with op, key, agent, session, author and time; PATH (knowledge/x.md, or .context/knowledge/x.md) keeps those that touched it",
		ArgsUsage: "[PATH]",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "n", Usage: "show at most `N` commits", DefaultText: "0 = all"},
			jsonFlag,
		},
		Action: action(e, func(c *cli.Context) (logOptions, error) {
			if c.NArg() > 1 {
				return logOptions{}, usagef("usage: ctx log [-n N] [--json] [PATH]")
			}
			return logOptions{N: c.Int("n"), Path: c.Args().Get(0), JSON: c.Bool("json"),
				DashDash: c.NArg() == 1 && slices.Contains(e.args, "--")}, nil
		}, runLog),
	}, "Lists the commits of the context branch, newest first, with what each did (Ctx-Op, the key), who\n"+
		"did it (agent, session, machine, author) and when. PATH keeps the commits that touched that file.\n\n"+
		"As git log: a PATH that no commit of the context branch touched (a typo, a word) is a usage error\n"+
		"(exit 2, git's \"ambiguous argument\"); after -- (ctx log -- PATH) it is an empty history (nothing\n"+
		"printed, exit 0), as git log -- PATH. A PATH outside the branch (absolute, ../) is always an error.",
		[]string{"ctx log -n 10", "ctx log knowledge/architecture.md", "ctx log .context/decisions/0001-use-postgresql.md --json"},
		exits(ExitUsage, ExitNoStore))
}

func runLog(ctx context.Context, e *env, o logOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	if o.N < 0 {
		return usagef("-n takes a number of commits >= 0 (0: all)")
	}
	path := e.storePath(s, o.Path)
	if path != "" && (filepath.IsAbs(filepath.FromSlash(path)) || !fs.ValidPath(strings.TrimSuffix(path, "/"))) {
		// Like git log -- PATH outside the repository: a mistake, not an empty history.
		return usagef("%s is not a path of the context branch (knowledge/KEY.md, or a file of %s/)", o.Path, store.CheckoutDir)
	}
	entries, err := s.Log(ctx, o.N, path)
	if err != nil {
		return err
	}
	if path != "" && len(entries) == 0 && !o.DashDash {
		// git log foo: "ambiguous argument 'foo': unknown revision or path not in the working tree".
		return usagef("%s: no commit of the context branch touched this path (a path of the branch is "+
			"knowledge/KEY.md, or a file of %s/); use 'ctx log -- %s' for its empty history", o.Path, store.CheckoutDir, o.Path)
	}
	if o.JSON {
		return printJSON(e.stdout, entries)
	}
	for _, l := range entries {
		fmt.Fprintf(e.stdout, "%s %s %-16s %-24s agent=%s session=%s machine=%s\n    %s  (%s)\n",
			l.Commit[:12], l.Time, l.Op, l.Key, l.Agent, l.Session, l.Machine, l.Summary, l.Author)
		if l.Renumbered != "" {
			// Earlier commits name these decisions by their old numbers (Ctx-Key).
			fmt.Fprintf(e.stdout, "    decisions renumbered: %s\n", l.Renumbered)
		}
		for _, r := range l.Renamed {
			// Earlier commits name these files by their old paths.
			fmt.Fprintf(e.stdout, "    renamed: %s\n", r)
		}
	}
	return nil
}

// storePath turns a PATH argument into a path of the context branch: "knowledge/x.md" as it is;
// ".context/knowledge/x.md", an absolute path inside the work tree's .context/ or a relative one from
// inside it, without the checkout folder.
func (e *env) storePath(s *store.Store, p string) string {
	if p == "" {
		return ""
	}
	if root := s.CheckoutRoot(); root != "" {
		abs := p
		if !filepath.IsAbs(p) {
			dir, _ := e.workDir()
			abs = filepath.Join(dir, p)
		}
		if rel, ok := under(root, abs); ok {
			return rel
		}
	}
	p = filepath.ToSlash(p)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return strings.TrimPrefix(p, store.CheckoutDir+"/")
}

// under returns path relative to root ("/"-separated, "" for root itself) when it is inside root,
// comparing also with symbolic links resolved (the file itself may be gone: its folder is resolved).
func under(root, path string) (string, bool) {
	rel := func(root, path string) (string, bool) {
		r, err := filepath.Rel(root, path)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
			return "", false
		}
		if r == "." {
			return "", true
		}
		return filepath.ToSlash(r), true
	}
	if r, ok := rel(root, filepath.Clean(path)); ok {
		return r, true
	}
	rr, err1 := filepath.EvalSymlinks(root)
	dir, err2 := filepath.EvalSymlinks(filepath.Dir(filepath.Clean(path)))
	if err1 != nil || err2 != nil {
		return "", false
	}
	return rel(rr, filepath.Join(dir, filepath.Base(path)))
}
