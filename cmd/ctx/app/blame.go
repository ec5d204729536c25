package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/blame"
	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// blameOptions are the arguments of ctx blame: a file with an optional line range, or a commit.
type blameOptions struct {
	Target   string // the argument as given
	Path     string // the file part (the whole argument when it has no :L1-L2 suffix)
	Start    int    // first line (1 when not given)
	End      int    // last line (0: to the end)
	HasLines bool   // the argument had a :L1[-L2] suffix, so it names a file
	Commit   bool   // --commit: the argument is a revision
	PR       int    // --pr N: the pull request N (no argument)
	NoImport bool   // do not refresh the history index first
	Index    string
	JSON     bool
}

var lineSuffixRe = lazyre.New(`^(.+):([0-9]{1,9})(?:-([0-9]{1,9}))?$`)

// parseBlameTarget splits FILE[:L1[-L2]].
func parseBlameTarget(arg string) (path string, start, end int, hasLines bool, err error) {
	m := lineSuffixRe.Get().FindStringSubmatch(arg)
	if m == nil {
		return arg, 1, 0, false, nil
	}
	start, _ = strconv.Atoi(m[2])
	end = start
	if m[3] != "" {
		end, _ = strconv.Atoi(m[3])
	}
	if start < 1 || end < start {
		return "", 0, 0, false, usagef("bad line range %s:%s (want L1-L2 with 1 ≤ L1 ≤ L2)", m[1], strings.TrimPrefix(arg, m[1]+":"))
	}
	return m[1], start, end, true, nil
}

func newBlameCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "blame",
		ArgsUsage: "FILE[:L1-L2] | COMMIT | --pr N",
		Usage:     "trace committed lines or a commit to the coding-agent session that produced it (docs/blame.md)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "commit", Usage: "the argument is a commit (a revision), not a file"},
			&cli.IntFlag{Name: "pr", Usage: "blame the commits of pull request `N` (from refs/pull/N/head or an agent's gh output)"},
			&cli.BoolFlag{Name: "no-import", Usage: "do not import new agent history before answering"},
			historyIndexFlag(),
			jsonFlag,
		},
		Action: action(e, func(c *cli.Context) (blameOptions, error) {
			if c.IsSet("pr") {
				if c.NArg() != 0 || c.Bool("commit") || c.Int("pr") < 1 {
					return blameOptions{}, usagef("usage: ctx blame --pr N (N ≥ 1, no other target)")
				}
				return blameOptions{PR: c.Int("pr"), NoImport: c.Bool("no-import"), Index: c.String("index"), JSON: c.Bool("json")}, nil
			}
			if c.NArg() != 1 {
				return blameOptions{}, usagef("usage: ctx blame FILE[:L1-L2] | COMMIT | --pr N")
			}
			o := blameOptions{Target: c.Args().First(), Commit: c.Bool("commit"), NoImport: c.Bool("no-import"), Index: c.String("index"), JSON: c.Bool("json")}
			if o.Commit {
				return o, nil
			}
			var err error
			o.Path, o.Start, o.End, o.HasLines, err = parseBlameTarget(o.Target)
			return o, err
		}, runBlame),
	}, "For FILE, runs git blame on the committed lines (HEAD; it says when the working copy differs) and, for\n"+
		"each commit, finds the session that produced it. COMMIT is any revision (a file of that name wins;\n"+
		"use --commit). Evidence, strongest first: a note on refs/notes/ctx written by ctx's post-commit hook\n"+
		"(ctx hooks install --blame), a commit receipt in a transcript (a `git commit` tool call whose output\n"+
		"names the commit, in a session working in this repository): both \"proven\"; an agent's edit that added\n"+
		"the same lines before the commit: \"possible\". Several proven sessions: \"conflicting\"; nothing:\n"+
		"\"none\" (no evidence on this machine, not proof that no agent was involved). Cited events open with\n"+
		"ctx history show event ID --window N. The agent history is imported first (--no-import skips it).\n"+
		"--pr N blames the commits of pull request N, known only from structured evidence: its head ref\n"+
		"refs/pull/N/head fetched into this repository (git fetch origin pull/N/head:refs/pull/N/head), or an\n"+
		"agent's gh pr view N --json commits / gh pr create output in a session of this repository; without it\n"+
		"ctx names no commits.",
		[]string{"ctx blame main.go", "ctx blame internal/server.go:40-80 --json", "ctx blame HEAD~2", "ctx blame --commit 1a2b3c4", "ctx blame --pr 42"},
		[]exit{
			{code: ExitUsage, when: "usage error: a bad line range, a file not in HEAD, a path outside the repository, an unknown commit"},
			{code: ExitNotFound, when: "--pr N: no structured evidence names the pull request's commits"},
			{code: ExitNoStore, when: "not a git repository"},
		})
}

// openBlamer opens the history index (index, else the repository's) and a Blamer of the repository at wd
// over it, after importing the agents' new history unless noImport. The caller closes the index.
func (e *env) openBlamer(ctx context.Context, wd, index string, noImport bool) (*history.Index, *blame.Blamer, error) {
	ix, err := e.openHistory(ctx, index)
	if err != nil {
		return nil, nil, err
	}
	if !noImport {
		importDiscovered(ctx, e, ix)
	}
	b, err := blame.New(ctx, wd, ix)
	if err != nil {
		ix.Close()
		return nil, nil, blameErr(err)
	}
	return ix, b, nil
}

func runBlame(ctx context.Context, e *env, o blameOptions) error {
	wd, err := e.workDir()
	if err != nil {
		return err
	}
	if _, err := store.CommonDir(ctx, wd); err != nil {
		return err
	}
	ix, b, err := e.openBlamer(ctx, wd, o.Index, o.NoImport)
	if err != nil {
		return err
	}
	defer ix.Close()
	if o.PR > 0 {
		res, err := b.PullRequest(ctx, o.PR)
		if errors.Is(err, blame.ErrNoPullRequestEvidence) {
			return &store.NotFoundError{Msg: err.Error()}
		}
		if err != nil {
			return blameErr(err)
		}
		if o.JSON {
			return printJSON(e.stdout, res)
		}
		c := res.Coverage
		fmt.Fprintf(e.stdout, "pull request %d (%s, %s..%s): %s (%d commits: %d proven, %d conflicting, %d possible, %d none)\n",
			res.Number, res.Source, shortOID(res.Base), shortOID(res.Head), res.Outcome, c.Lines, c.Proven, c.Conflicting, c.Possible, c.None)
		for _, a := range res.Commits {
			printAttribution(e, a, "")
		}
		return nil
	}
	isFile := !o.Commit && (o.HasLines || fileExists(wd, o.Path))
	if !isFile {
		res, err := b.Commit(ctx, o.Target)
		if errors.Is(err, blame.ErrUsage) && !o.Commit {
			// Not a commit: a file deleted from the working copy is still in HEAD.
			if rel, rerr := b.RelPath(wd, o.Path); rerr == nil {
				if fres, ferr := b.File(ctx, rel, o.Start, o.End); ferr == nil {
					return printFileBlame(e, fres, o.JSON)
				}
			}
			// FILE:junk where FILE is a file: the line range is what is wrong.
			if i := strings.LastIndexByte(o.Target, ':'); i > 0 && fileExists(wd, o.Target[:i]) {
				return usagef("bad line range %s (want L1-L2 with 1 ≤ L1 ≤ L2 ≤ 999999999)", o.Target)
			}
			return usagef("%s is neither a file of HEAD nor a commit", o.Target)
		}
		if err != nil {
			return blameErr(err)
		}
		if o.JSON {
			return printJSON(e.stdout, res)
		}
		printAttribution(e, res.Attribution, "")
		return nil
	}
	rel, err := b.RelPath(wd, o.Path)
	if err != nil {
		return blameErr(err)
	}
	res, err := b.File(ctx, rel, o.Start, o.End)
	if err != nil {
		return blameErr(err)
	}
	return printFileBlame(e, res, o.JSON)
}

func printFileBlame(e *env, res blame.FileResult, asJSON bool) error {
	if asJSON {
		return printJSON(e.stdout, res)
	}
	w := e.stdout
	c := res.Coverage
	fmt.Fprintf(w, "%s:%d-%d at %s: %s (%d lines: %d proven, %d conflicting, %d possible, %d none)\n",
		res.Path, res.Start, res.End, shortOID(res.Head), res.Outcome, c.Lines, c.Proven, c.Conflicting, c.Possible, c.None)
	if res.WorktreeDiffers {
		fmt.Fprintf(w, "note: the working copy of %s differs from HEAD; the committed lines were blamed\n", res.Path)
	}
	for _, r := range res.Ranges {
		lines := strconv.Itoa(r.Start)
		if r.End != r.Start {
			lines += "-" + strconv.Itoa(r.End)
		}
		fmt.Fprintf(w, "  %-9s %s  %s\n", lines, shortOID(r.Commit), r.Outcome)
	}
	for _, a := range res.Commits {
		printAttribution(e, a, "")
	}
	return nil
}

// importDiscovered refreshes the index from every discovered source; problems are warnings (blame still
// answers from what the index holds).
func importDiscovered(ctx context.Context, e *env, ix *history.Index) {
	var srcs []history.Source
	for _, r := range history.Roots(history.Env{}) {
		if !r.Exists {
			continue
		}
		s, err := history.Discover(ctx, r.Provider, r.Path, false)
		if err != nil {
			fmt.Fprintf(e.stderr, "ctx: warning: %v\n", err)
			continue
		}
		srcs = append(srcs, s...)
	}
	if _, err := ix.ImportProgress(ctx, srcs, progressBar(e.errTerm, len(srcs))); err != nil {
		fmt.Fprintf(e.stderr, "ctx: warning: importing agent history: %v\n", err)
	}
	indexShared(ctx, e, ix)
}

func printAttribution(e *env, a blame.Attribution, indent string) {
	w := e.stdout
	fmt.Fprintf(w, "%scommit %s %s: %s\n", indent, shortOID(a.Commit), a.Outcome, a.Summary)
	for _, s := range a.Sessions {
		fmt.Fprintf(w, "%s  session %s\n", indent, s)
	}
	for _, ev := range a.Evidence {
		who := string(ev.Provider)
		if ev.NativeSessionID != "" {
			who += " " + ev.NativeSessionID
		}
		line := fmt.Sprintf("%s  %s (%s)", indent, ev.Kind, who)
		if ev.Tool != "" {
			line += " " + ev.Tool
		}
		if ev.Env != "" {
			line += " via $" + ev.Env
		}
		if ev.EventID != "" {
			line += fmt.Sprintf(": ctx history show event %s --window 3", ev.EventID)
		}
		fmt.Fprintln(w, line)
		for _, l := range strings.Split(ev.Excerpt, "\n") {
			if l != "" {
				fmt.Fprintf(w, "%s      | %s\n", indent, l)
			}
		}
	}
}

func shortOID(oid string) string {
	if len(oid) > 10 {
		return oid[:10]
	}
	return oid
}

func fileExists(wd, p string) bool {
	if !filepath.IsAbs(p) {
		p = filepath.Join(wd, p)
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// blameErr turns blame's request errors into usage errors (exit 2).
func blameErr(err error) error {
	if errors.Is(err, blame.ErrUsage) {
		return usagef("%v", err)
	}
	return err
}
