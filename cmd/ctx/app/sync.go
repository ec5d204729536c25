package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the context branch, its tip, ahead/behind the remote, entry counts and hand edits of .context/",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			s, err := open(c)
			if err != nil {
				return err
			}
			st, err := s.Status(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, st)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "branch:   %s at %s\n", s.BranchRef(), st.Tip[:12])
			switch {
			case st.Remote == "":
				fmt.Fprintln(w, "remote:   none")
			case st.TrackingTip == "":
				fmt.Fprintf(w, "remote:   %s (never synced: ctx push or ctx pull)\n", st.Remote)
			default:
				fmt.Fprintf(w, "remote:   %s: %d ahead, %d behind %s\n", st.Remote, st.Ahead, st.Behind, st.Tracking)
			}
			fmt.Fprintf(w, "entries:  %d knowledge, %d conventions, %d decisions, %d skills, %d sessions, %d activity, %d conflicts\n",
				st.Counts["knowledge"], st.Counts["conventions"], st.Counts["decisions"], st.Counts["skills"],
				st.Counts["history"], st.Counts["activity"], st.Counts["conflicts"])
			for _, l := range st.Locks {
				fmt.Fprintf(w, "locked:   %s: %s (%s old), %s\n", l.Ref, l.Path, time.Duration(l.AgeS)*time.Second, lockOwner(l))
			}
			if len(st.Unreadable) > 0 {
				fmt.Fprintf(w, "skipped:  %s ctx does not read (repair: ctx doctor):\n", plural(len(st.Unreadable), "entry", "entries"))
				for _, p := range st.Unreadable {
					fmt.Fprintf(w, "  %s: %s\n", p.Scope, p)
				}
			}
			if st.Checkout != "" {
				printCheckoutStatus(w, st)
			}
			if st.Behind > 0 {
				fmt.Fprintf(w, "behind:   .context/ lacks %s of %s: ctx pull\n", plural(st.Behind, "commit", "commits"), st.Tracking)
			}
			if statusExtra != nil {
				statusExtra(c, s)
			}
			return nil
		},
	}
}

// printCheckoutStatus is the checkout line of ctx status: "clean" only when .context/ mirrors the branch
// (no hand edit, no file behind it).
func printCheckoutStatus(w io.Writer, st *store.Status) {
	switch {
	case st.CheckoutBehind:
		fmt.Fprintf(w, "checkout: %s, behind the context branch (its refresh did not finish: ctx status or any write refreshes it)\n", st.Checkout)
	case len(st.HandEdits) == 0 && len(st.Stale) == 0:
		fmt.Fprintf(w, "checkout: %s, clean\n", st.Checkout)
		return
	case len(st.HandEdits) == 0:
		fmt.Fprintf(w, "checkout: %s:\n", st.Checkout)
	default:
		fmt.Fprintf(w, "checkout: %s, %s (record them with ctx commit):\n", st.Checkout, plural(len(st.HandEdits), "hand edit", "hand edits"))
	}
	for _, e := range st.HandEdits {
		fmt.Fprintf(w, "  %-8s %s (%s)\n", e.Change, e.Path, e.Scope)
	}
	for _, p := range st.Stale {
		fmt.Fprintf(w, "  behind   %s (the branch changed it; your hand edit is kept: ctx commit merges the two)\n", p)
	}
}

// lockOwner says whose a lock is and what to do about it (docs/locks.md).
func lockOwner(l gitstore.LockInfo) string {
	switch l.Owner {
	case "ctx-stale":
		return "left by an interrupted ctx: its next write, push or pull removes it"
	case "ctx-live":
		return "held by a running ctx process"
	}
	return "not ctx's: if no git command is running in this repository, remove it: " + l.Fix
}

func commitCommand() *cli.Command {
	return &cli.Command{
		Name:  "commit",
		Usage: "record the hand edits of .context/ as one commit",
		Flags: []cli.Flag{&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "commit summary `MSG`"}},
		Action: func(c *cli.Context) error {
			s, err := openInit(c)
			if err != nil {
				return err
			}
			res, edits, err := s.CommitHandEdits(c.Context, c.String("message"))
			if err != nil {
				return err
			}
			if len(edits) == 0 {
				fmt.Fprintln(c.App.Writer, "nothing to commit: .context/ matches the context branch")
				return nil
			}
			for _, e := range edits {
				fmt.Fprintf(c.App.Writer, "  %-8s %s\n", e.Change, e.Path)
				if b, err := os.ReadFile(filepath.Join(s.CheckoutRoot(), filepath.FromSlash(e.Path))); err == nil && e.Change != "deleted" {
					for _, w := range store.LintFile(e.Path, b) {
						fmt.Fprintf(c.App.ErrWriter, "ctx: warning: %s\n", w)
					}
				}
			}
			commitLine(c.App.Writer, "hand edits", res)
			return nil
		},
	}
}

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "list context commits with op, key, agent, session, author and time; PATH (knowledge/x.md, or .context/knowledge/x.md) keeps those that touched it",
		ArgsUsage: "[PATH]",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "n", Usage: "show at most `N` commits", DefaultText: "0 = all"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("usage: ctx log [-n N] [--json] [PATH]")
			}
			s, err := openInit(c)
			if err != nil {
				return err
			}
			if c.Int("n") < 0 {
				return usagef("-n takes a number of commits >= 0 (0: all)")
			}
			entries, err := s.Log(c.Context, c.Int("n"), storePath(c, s, c.Args().Get(0)))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, entries)
			}
			for _, e := range entries {
				fmt.Fprintf(c.App.Writer, "%s %s %-16s %-24s agent=%s session=%s machine=%s\n    %s  (%s)\n",
					e.Commit[:12], e.Time, e.Op, e.Key, e.Agent, e.Session, e.Machine, e.Summary, e.Author)
			}
			return nil
		},
	}
}

// storePath turns a PATH argument into a path of the context branch: "knowledge/x.md" as it is;
// ".context/knowledge/x.md", an absolute path inside the work tree's .context/ or a relative one from
// inside it, without the checkout folder.
func storePath(c *cli.Context, s *store.Store, p string) string {
	if p == "" {
		return ""
	}
	if root := s.CheckoutRoot(); root != "" {
		abs := p
		if !filepath.IsAbs(p) {
			dir := c.String("C")
			if dir == "" {
				dir, _ = os.Getwd()
			}
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

var remoteFlag = &cli.StringFlag{Name: "remote", Usage: "remote `NAME` or URL (default: configured, else origin)"}
var timeoutFlag = &cli.DurationFlag{Name: "timeout", Value: store.DefaultTimeout, Usage: "give up a transfer after `DURATION`"}

func openSync(c *cli.Context) (*store.Store, error) {
	s, err := open(c)
	if err != nil {
		return nil, err
	}
	if c.IsSet("timeout") {
		s.Cfg.TimeoutSecs = int(c.Duration("timeout") / time.Second)
		if s.Cfg.TimeoutSecs < 1 {
			s.Cfg.TimeoutSecs = 1
		}
	}
	if f, ok := c.App.ErrWriter.(*os.File); ok && isTerminal(f) {
		store.Progress = f
	}
	return s, nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func printPull(c *cli.Context, r *store.PullResult) {
	w := c.App.Writer
	if len(r.HandEdits) > 0 {
		fmt.Fprintf(w, "recorded %s of .context/ first\n", plural(len(r.HandEdits), "hand edit", "hand edits"))
	}
	switch {
	case !r.Found:
		fmt.Fprintf(w, "pull %s: the remote has no context branch yet (ctx push publishes yours)\n", r.Remote)
	case r.Action == "up-to-date":
		fmt.Fprintf(w, "pull %s: already up to date at %s\n", r.Remote, r.New.String()[:12])
	case r.Action == "merge":
		fmt.Fprintf(w, "pull %s: merged into %s (%s)\n", r.Remote, r.New.String()[:12], plural(len(r.Conflicts), "conflict", "conflicts"))
	default:
		fmt.Fprintf(w, "pull %s: %s to %s\n", r.Remote, r.Action, r.New.String()[:12])
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s: %s\n", n.Path, n.Message)
	}
	for _, cf := range r.Conflicts {
		fmt.Fprintf(w, "  conflict %s: %s %s (kept one version, the other is in conflicts/%s.json; see ctx conflicts)\n", cf.ID, cf.Path, cf.Field, cf.ID)
	}
	printDecided(w, r)
	for _, p := range r.RefreshKept {
		fmt.Fprintf(w, "  kept your hand edit of .context/%s (not overwritten)\n", p)
	}
	for _, p := range r.RefreshSkipped {
		fmt.Fprintf(w, "  skipped %s (not checked out; see ctx doctor)\n", p)
	}
}

func pullCommand() *cli.Command {
	return &cli.Command{
		Name:  "pull",
		Usage: "fetch the remote's context branch and fast-forward or merge it",
		Flags: []cli.Flag{remoteFlag, timeoutFlag, strategyFlag},
		Action: func(c *cli.Context) error {
			s, err := openSync(c)
			if err != nil {
				return err
			}
			r, err := s.PullWith(c.Context, c.String("remote"), pullOptions(c))
			if err != nil {
				return err
			}
			printPull(c, r)
			if afterPull != nil {
				afterPull(c.Context, c, s)
			}
			if r.Action == "adopted" && hooksHint != nil {
				if hint := hooksHint(c, s); hint != "" {
					fmt.Fprintln(c.App.Writer, hint)
				}
			}
			return nil
		},
	}
}

// statusExtra is set by adapters.go: the lines of ctx status about the agents' files the user enabled.
var statusExtra func(c *cli.Context, s *store.Store)

// afterPull is set by adapters.go: after a pull, it re-exports the agents' files the user enabled
// (docs/adapters.md "Refresh"); the post-checkout and post-merge hooks call it too.
var afterPull func(ctx context.Context, c *cli.Context, s *store.Store)

// hooksHint is set by hooks.go: after the first pull of a clone (the remote's branch adopted, no ctx init
// run), it says when git's hooks that refresh .context/ are not installed, and how to install them.
var hooksHint func(c *cli.Context, s *store.Store) string

func pushCommand() *cli.Command {
	return &cli.Command{
		Name:  "push",
		Usage: "publish the context branch (never forced; merges the remote's new commits first when it moved)",
		Flags: []cli.Flag{remoteFlag, timeoutFlag},
		Action: func(c *cli.Context) error {
			s, err := openSync(c)
			if err != nil {
				return err
			}
			return runPush(c, s)
		},
	}
}

func runPush(c *cli.Context, s *store.Store) error {
	r, err := s.PushWith(c.Context, c.String("remote"), pullOptions(c))
	if r != nil {
		for i := range r.Pulls {
			printPull(c, &r.Pulls[i])
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "push %s: %s at %s\n", r.Remote, s.BranchRef(), r.Tip.String()[:12])
	return nil
}

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:  "sync",
		Usage: "pull, then push",
		Flags: []cli.Flag{remoteFlag, timeoutFlag, strategyFlag},
		Action: func(c *cli.Context) error {
			s, err := openSync(c)
			if err != nil {
				return err
			}
			r, err := s.PullWith(c.Context, c.String("remote"), pullOptions(c))
			if err != nil {
				return err
			}
			printPull(c, r)
			if afterPull != nil {
				afterPull(c.Context, c, s)
			}
			return runPush(c, s)
		},
	}
}

func remoteCommand() *cli.Command {
	return &cli.Command{
		Name:  "remote",
		Usage: "show the remote and refspecs ctx uses",
		Flags: []cli.Flag{remoteFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			s, err := open(c)
			if err != nil {
				return err
			}
			name := c.String("remote")
			if name == "" {
				name = s.RemoteName(c.Context)
			}
			url := ""
			if remotes, err := s.Repo.Remotes(c.Context); err == nil {
				for _, r := range remotes {
					if r.Name == name {
						url = r.URL
					}
				}
			}
			info := map[string]string{"remote": name, "url": url, "branch": s.BranchRef()}
			if name != "" {
				info["fetch_refspec"] = s.FetchRefspec(name)
				info["push_refspec"] = s.PushRefspec()
				info["tracking_ref"] = s.TrackingRef(name)
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, info)
			}
			if name == "" {
				fmt.Fprintln(c.App.Writer, "no remote: add one with git remote add origin <url>")
				return nil
			}
			fmt.Fprintf(c.App.Writer, "remote: %s %s\nfetch:  %s\npush:   %s\n", name, url, info["fetch_refspec"], info["push_refspec"])
			return nil
		},
	}
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:      "config",
		Usage:     "show or set ctx's settings for this repository: branch, remote, sync.push-with-git (true/false), sync.timeout (a duration: 30s, 2m, or seconds)",
		ArgsUsage: "[KEY [VALUE]]",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			s, err := open(c)
			if err != nil {
				return err
			}
			return runConfig(c, s)
		},
	}
}
