package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/share"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// historyShareOptions are the arguments of ctx history share: the session (a ctx session id or a prefix
// of 8+ hex digits), --dry-run, --summary-only, --no-import, where the index is, --json.
type historyShareOptions struct {
	Session     string
	DryRun      bool
	SummaryOnly bool
	NoImport    bool
	Index       string
	JSON        bool
}

func newHistoryShareCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "share",
		ArgsUsage: "SESSION",
		Usage:     "commit a redacted record of one agent session to the context branch (--dry-run shows it first)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the record that would be committed, with each redaction shown, and commit nothing"},
			&cli.BoolFlag{Name: "summary-only", Usage: "share the session's header and summary events only (history.share = summaries forces it)"},
			&cli.BoolFlag{Name: "no-import", Usage: "do not import new agent history first"},
			historyIndexFlag(), jsonFlag,
		},
		Action: action(e, func(c *cli.Context) (historyShareOptions, error) {
			if c.NArg() != 1 {
				return historyShareOptions{}, usagef("usage: ctx history share SESSION [--dry-run] [--summary-only]")
			}
			return historyShareOptions{Session: c.Args().First(), DryRun: c.Bool("dry-run"), SummaryOnly: c.Bool("summary-only"),
				NoImport: c.Bool("no-import"), Index: c.String("index"), JSON: c.Bool("json")}, nil
		}, runHistoryShare),
	}, "Commits a redacted record of one session of the local agent-history index to the context branch, as\n"+
		"transcripts/YYYY/MM/<ctx session id>.ndjson (one commit; ctx push publishes it). Secrets (API keys and\n"+
		"tokens, JWTs, bearer headers, private keys, passwords in URLs, .env-style KEY=value whose key names a\n"+
		"secret) become [REDACTED:<rule>] and home directories ~ (docs/security.md). Commit receipts are\n"+
		"resolved to full commit ids, so that ctx blame proves those commits on a teammate's machine. Sharing a\n"+
		"session again adds only its new events. Nothing is shared without this command; with the setting\n"+
		"history.share = summaries (ctx config) only the header and summary events are. The session must have\n"+
		"worked in this repository.",
		[]string{"ctx history share 3f2a9c1d --dry-run", "ctx history share 3f2a9c1d && ctx push", "ctx history share 3f2a9c1d --summary-only --json"},
		[]exit{
			{code: ExitUsage, when: "usage error; an unknown or ambiguous session, a session of another repository, or text the secret check still refuses"},
			{code: ExitNoStore, when: "not a git repository, or no context branch (ctx init)"},
		})
}

func runHistoryShare(ctx context.Context, e *env, o historyShareOptions) error {
	wd, err := e.workDir()
	if err != nil {
		return err
	}
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	if ok, err := s.Initialized(ctx); err != nil {
		return err
	} else if !ok {
		return store.ErrNotInitialized
	}
	ix, b, err := e.openBlamer(ctx, wd, o.Index, o.NoImport)
	if err != nil {
		return err
	}
	defer ix.Close()
	res, err := share.Share(ctx, s, ix, b, share.Options{Session: o.Session, DryRun: o.DryRun, SummaryOnly: o.SummaryOnly})
	if errors.Is(err, share.ErrUsage) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		out := struct {
			share.Result
			Record []string `json:"record,omitempty"`
		}{Result: res}
		if o.DryRun {
			out.Record = res.Record
		}
		if out.Redactions == nil {
			out.Redactions = []share.Redaction{}
		}
		return printJSON(e.stdout, out)
	}
	w := e.stdout
	if o.DryRun {
		for _, l := range res.Record {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintf(w, "dry run: would add %d of %d lines to %s (%d events", res.Added, res.Added+res.Existing, res.Path, res.Events)
	} else if res.Commit == "" {
		fmt.Fprintf(w, "session %s is shared already: %s holds its %d events (nothing committed", res.SessionID, res.Path, res.Events)
	} else {
		fmt.Fprintf(w, "shared session %s: %d new lines in %s, commit %s (%d events", res.SessionID, res.Added, res.Path, shortOID(res.Commit), res.Events)
	}
	if res.SummaryOnly {
		fmt.Fprint(w, ", summaries only")
	}
	fmt.Fprintf(w, ", %d commit receipts resolved)\n", res.Resolved)
	if res.Skipped > 0 {
		fmt.Fprintf(w, "%d events left out: a native key with control characters or over 1024 bytes\n", res.Skipped)
	}
	fmt.Fprintf(w, "%d redactions%s\n", len(res.Redactions), redactionCounts(res.Redactions))
	if o.DryRun {
		for _, r := range res.Redactions {
			fmt.Fprintf(w, "  [REDACTED:%s] %s line %d\n", r.Rule, r.Where, r.Line)
		}
	} else if res.Commit != "" {
		fmt.Fprintln(w, "ctx push publishes it")
	}
	return nil
}

// redactionCounts is ": rule N, rule N" in rule order, "" for none.
func redactionCounts(rs []share.Redaction) string {
	if len(rs) == 0 {
		return ""
	}
	n := map[string]int{}
	for _, r := range rs {
		n[r.Rule]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, n[k])
	}
	return ": " + strings.Join(parts, ", ")
}

// indexShared indexes the sessions teammates shared on the context branch (transcripts/) in ix; problems
// are warnings. Nothing happens without a context branch.
func indexShared(ctx context.Context, e *env, ix *history.Index) {
	s, err := e.open(ctx)
	if err != nil {
		return
	}
	r, err := share.Index(ctx, s, ix)
	if err != nil {
		fmt.Fprintf(e.stderr, "ctx: warning: indexing shared sessions: %v\n", err)
		return
	}
	for _, f := range r.Failed {
		fmt.Fprintf(e.stderr, "ctx: warning: shared session %s: %s\n", f.Path, f.Err)
	}
}

// indexSharedAfterPull indexes the shared sessions a pull brought, when the branch has any (the local
// index is opened, and created, only then).
func indexSharedAfterPull(ctx context.Context, e *env, s *store.Store) {
	v, err := s.RefView(ctx)
	if err != nil {
		return
	}
	recs, err := v.SharedTranscripts(ctx)
	if err != nil || len(recs) == 0 {
		return
	}
	ix, err := e.openHistory(ctx, "")
	if err != nil {
		fmt.Fprintf(e.stderr, "ctx: warning: indexing shared sessions: %v\n", err)
		return
	}
	defer ix.Close()
	indexShared(ctx, e, ix)
}
