package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// historySourcesAddOptions are the flags of ctx history sources add: Path is absolute and clean.
type historySourcesAddOptions struct {
	Provider history.Provider
	Path     string
	Root     string
	Group    string
}

func newHistorySourcesAddCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "add",
		Usage: "configure a history root of this repository: --provider P --path DIR [--root NAME] [--group NAME]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider", Usage: "the `PROVIDER` whose transcripts DIR holds (" + historyProviders + ")"},
			&cli.StringFlag{Name: "path", Usage: "the `DIR` (an existing directory, not a symbolic link)"},
			&cli.StringFlag{Name: "root", Usage: "the root's `NAME` (1-64 of A-Z a-z 0-9 - _; default: from DIR's name)"},
			&cli.StringFlag{Name: "group", Usage: "the group `NAME` (1-64 of A-Z a-z 0-9 - _)"},
		},
		Action: action(e, parseHistorySourcesAdd, runHistorySourcesAdd),
	}, "Adds a configured root: DIR holds PROVIDER's transcripts (every file of its format under DIR, as with\n"+
		"ctx history import --path). ctx history import then imports it beside the providers' own roots, ctx\n"+
		"history sources lists it, and the MCP search tool selects it by name (source_roots) or group\n"+
		"(source_groups). It is kept in this repository's local ctx config (.git/ctx/config.json), never on the\n"+
		"context branch. DIR is stored as an absolute path; a root name or a directory configured twice is an\n"+
		"error.",
		[]string{"ctx history sources add --provider claude-code --path /backup/.claude/projects",
			"ctx history sources add --provider codex --path ~/old-laptop/.codex --root laptop-codex --group laptop"},
		[]exit{{ExitUsage, "usage error: a missing or bad flag, a path that is not a directory, a name in use"}, {ExitNoStore, "not a git repository"}})
}

// rootNameChars are the characters a root name derived from a directory's name keeps.
var rootNameChars = lazyre.New(`[^A-Za-z0-9_-]+`)

func parseHistorySourcesAdd(c *cli.Context) (historySourcesAddOptions, error) {
	o := historySourcesAddOptions{Root: c.String("root"), Group: c.String("group")}
	p, ok := history.ParseProvider(c.String("provider"))
	if !ok {
		return o, usagef("--provider: want one of %s", historyProviders)
	}
	o.Provider = p
	if c.String("path") == "" {
		return o, usagef("--path DIR is required")
	}
	abs, err := filepath.Abs(c.String("path"))
	if err != nil {
		return o, usagef("--path: %v", err)
	}
	o.Path = abs
	if c.IsSet("root") && !store.ValidSourceName(o.Root) {
		return o, usagef("--root: not 1 to 64 ASCII letters, digits, '-' or '_'")
	}
	if c.IsSet("group") && !store.ValidSourceName(o.Group) {
		return o, usagef("--group: not 1 to 64 ASCII letters, digits, '-' or '_'")
	}
	if o.Root == "" {
		o.Root = rootNameChars.Get().ReplaceAllString(filepath.Base(abs), "-")
		o.Root = string(p) + "-" + o.Root
		if len(o.Root) > 64 {
			o.Root = o.Root[:64]
		}
	}
	return o, nil
}

// checkRootPath checks a --path naming a provider's files (ctx history sources add, ctx history import):
// it exists, and neither it nor a folder on the way to it is a symbolic link, which discovery never follows
// (docs/history.md "Providers and discovery"): a usage error that gives the real path. It returns the
// path's lstat.
func checkRootPath(path string) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, usagef("--path %s: %v", path, errors.Unwrap(err))
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		real, _ := filepath.EvalSymlinks(path)
		return nil, usagef("--path %s is a symbolic link (a link is not followed): give the real path %s", path, real)
	}
	// Nor a link on the way to it: the path must be the directory's own (its target, when there is one).
	if real, err := filepath.EvalSymlinks(path); err != nil {
		return nil, usagef("--path %s: %v", path, err)
	} else if real != filepath.Clean(path) {
		return nil, usagef("--path %s goes through a symbolic link (a link is not followed): give the real path %s", path, real)
	}
	return fi, nil
}

func runHistorySourcesAdd(ctx context.Context, e *env, o historySourcesAddOptions) error {
	// The directory must exist and be one, and is not followed if it is a symbolic link (discovery never
	// follows links, docs/history.md).
	fi, err := checkRootPath(o.Path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return usagef("--path %s: not a directory", o.Path)
	}
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	cfg := s.Config()
	if cur, err := s.HistorySources(); err != nil {
		return err
	} else {
		cfg.HistorySources = cur
	}
	for _, h := range cfg.HistorySources {
		if h.Root == o.Root {
			return usagef("root %s is configured already (ctx history sources remove %s, or --root NAME)", o.Root, o.Root)
		}
	}
	cfg.HistorySources = append(slices.Clone(cfg.HistorySources), store.HistorySource{Root: o.Root, Provider: string(o.Provider), Path: o.Path, Group: o.Group})
	if err := s.SetConfig(cfg); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "added %s root %s: %s\n", o.Provider, o.Root, o.Path)
	return nil
}

// historySourcesRemoveOptions name the configured root to remove.
type historySourcesRemoveOptions struct{ Root string }

func newHistorySourcesRemoveCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "remove",
		Usage:     "remove a configured history root by its name",
		ArgsUsage: "ROOT",
		Action: action(e, func(c *cli.Context) (historySourcesRemoveOptions, error) {
			if c.NArg() != 1 {
				return historySourcesRemoveOptions{}, usagef("usage: ctx history sources remove ROOT")
			}
			return historySourcesRemoveOptions{Root: c.Args().First()}, nil
		}, runHistorySourcesRemove),
	}, "Removes the configured root ROOT from this repository's local ctx config. What the index holds from it\n"+
		"stays searchable until the index is rebuilt; the directory itself is never touched.",
		[]string{"ctx history sources remove laptop-codex"},
		[]exit{{ExitUsage, "usage error, or no configured root of that name"}, {ExitNoStore, "not a git repository"}})
}

func runHistorySourcesRemove(ctx context.Context, e *env, o historySourcesRemoveOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	cur, err := s.HistorySources()
	if err != nil {
		return err
	}
	cfg := s.Config()
	cfg.HistorySources = nil
	found := false
	for _, h := range cur {
		if h.Root == o.Root {
			found = true
			continue
		}
		cfg.HistorySources = append(cfg.HistorySources, h)
	}
	if !found {
		return usagef("no configured history root of that name (ctx history sources lists them)")
	}
	if err := s.SetConfig(cfg); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "removed root %s\n", o.Root)
	return nil
}

// configuredSources returns the configured history roots of the repository ctx runs in, or none outside
// a repository. A config that holds an invalid root (a name of another shape, more than 256 roots) is
// the error that names it, as every command that opens the store gives it: the import and the table of
// `ctx history sources` skipped every configured root without a word.
func configuredSources(ctx context.Context, e *env) ([]store.HistorySource, error) {
	s, err := e.open(ctx)
	if errors.Is(err, store.ErrNotRepository) {
		return nil, nil // outside a repository there is no configuration, only the automatic roots
	}
	if err != nil {
		return nil, err
	}
	return s.HistorySources()
}
