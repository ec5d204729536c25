// Package share commits a redacted record of one agent session of the local history index to the
// context branch (`ctx history share`, the MCP tool share_session), and indexes the records teammates
// shared (docs/blame.md "Sharing", docs/format.md "Shared sessions", docs/security.md "Redaction of shared
// sessions").
//
// Sharing reads the session from the index (package history), resolves its commit receipts to full commit
// ids in this repository (package blame), redacts every text field (package store/redact) and writes the
// lines through the store (one commit, append-only by event id). Nothing is shared without that explicit
// call.
package share

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/ctx-dev/ctx/blame"
	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/redact"
)

// ErrUsage is wrapped by the errors of a request that cannot be shared as asked: an unknown session, a
// session of another repository, a session that is itself a teammate's shared record.
var ErrUsage = errors.New("cannot share")

// Config values of history.share (store.Config.HistoryShare).
const (
	ShareFull      = "full"      // the default: the session's events, redacted
	ShareSummaries = "summaries" // the header and the session's summary events only
)

// Options say what to share.
type Options struct {
	Session     string // a ctx session id, or a unique prefix of 8+ hex digits
	DryRun      bool   // build and return the record, commit nothing
	SummaryOnly bool   // share the header and summary events only (also forced by history.share = summaries)
}

// Redaction is one replacement, with where it was.
type Redaction struct {
	Where string `json:"where"` // "header.cwd", "event <ctx_event_id> text", ...
	Rule  string `json:"rule"`
	Line  int    `json:"line"` // in that field's text
}

// Result is what Share built and wrote.
type Result struct {
	SessionID   string           `json:"ctx_session_id"`
	Provider    history.Provider `json:"provider"`
	NativeID    string           `json:"native_session_id"`
	Path        string           `json:"path"`
	SummaryOnly bool             `json:"summary_only"`
	DryRun      bool             `json:"dry_run"`
	Events      int              `json:"events"`  // events in the record built
	Skipped     int              `json:"skipped"` // events left out: a native key with control characters or too long
	Added       int              `json:"added"`   // lines new to the branch (with a dry run: that would be)
	Existing    int              `json:"existing"`
	Resolved    int              `json:"resolved_commits"` // commit receipts resolved to full ids in this repository
	Commit      string           `json:"commit,omitempty"`
	Redactions  []Redaction      `json:"redactions"`
	// Record is the lines built, header first (JSON, one a line), for --dry-run to show.
	Record []string `json:"-"`
}

// maxKey bounds an id or key taken into a record.
const maxKey = 1024

// Share builds the redacted record of opts.Session from ix and, unless DryRun, adds its new lines to the
// branch of st in one commit. b resolves receipts and checks that the session worked in this repository.
func Share(ctx context.Context, st *store.Store, ix *history.Index, b *blame.Blamer, opts Options) (Result, error) {
	var res Result
	sess, err := ix.Session(ctx, opts.Session)
	if err != nil {
		if errors.Is(err, history.ErrNotFound) || errors.Is(err, history.ErrAmbiguous) {
			return res, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		return res, err
	}
	res.SessionID, res.Provider, res.NativeID, res.DryRun = sess.ID, sess.Provider, sess.NativeID, opts.DryRun
	if sess.SourceFormat == history.FormatShared {
		return res, fmt.Errorf("%w: session %s is a record shared on the context branch already", ErrUsage, sess.ID)
	}
	if sess.CWD != "" && !b.InRepo(ctx, sess.CWD) {
		return res, fmt.Errorf("%w: session %s worked in %s, not in this repository: share it from there", ErrUsage, sess.ID, sess.CWD)
	}
	if sess.NativeID == "" || len(sess.NativeID) > maxKey || history.Neutral(sess.NativeID) != sess.NativeID {
		return res, fmt.Errorf("%w: session %s has a native id with control characters or over %d bytes", ErrUsage, sess.ID, maxKey)
	}
	cfg, err := st.SavedConfig()
	if err != nil {
		return res, err
	}
	res.SummaryOnly = opts.SummaryOnly || cfg.HistoryShare == ShareSummaries
	res.Path, err = store.TranscriptPath(sess.ID, sess.StartedAt)
	if err != nil {
		return res, err
	}
	evs, err := ix.Events(ctx, sess.ID, 0, 0)
	if err != nil {
		return res, err
	}
	// $HOME too when it is not under /home, /Users or /root (which redact finds by shape), and the
	// passwd home when HOME differs from it.
	var homes []string
	if h := os.Getenv("HOME"); h != "" {
		homes = append(homes, h)
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		homes = append(homes, u.HomeDir)
	}
	red := func(where, s string) string {
		out, rs := redact.StringHomes(history.Neutral(s), homes)
		for _, r := range rs {
			res.Redactions = append(res.Redactions, Redaction{Where: where, Rule: r.Rule, Line: r.Line})
		}
		return out
	}
	short := func(where, s string) string { return red(where, strings.ReplaceAll(s, "\n", " ")) }

	h := history.NewSharedHeader(sess)
	h.SummaryOnly = res.SummaryOnly
	h.CWD, h.RepoURL, h.Branch = short("header.cwd", h.CWD), short("header.repo_url", h.RepoURL), short("header.branch", h.Branch)
	h.Model, h.CLI, h.Title = short("header.model", h.Model), short("header.cli_version", h.CLI), short("header.title", h.Title)
	h.Commit = short("header.commit", h.Commit)
	head, err := store.EncodeTranscriptLine(h.ID, h.Timestamp, h)
	if err != nil {
		return res, err
	}
	lines := []store.TranscriptLine{head}
	for _, e := range evs {
		if res.SummaryOnly && e.Type != history.Summary {
			continue
		}
		if e.NativeKey == "" || len(e.NativeKey) > maxKey || history.Neutral(e.NativeKey) != e.NativeKey {
			res.Skipped++
			continue
		}
		x := history.NewSharedEvent(e)
		w := "event " + e.ID
		x.Role = short(w+" role", x.Role)
		x.Text = red(w+" text", x.Text)
		if x.Tool != nil {
			t := x.Tool
			if t.Output == e.Text {
				t.Output = "" // the text holds it (docs/format.md "Shared sessions")
			}
			t.Name, t.CallID = short(w+" tool.name", t.Name), short(w+" tool.call_id", t.CallID)
			t.Input, t.Output = red(w+" tool.input", t.Input), red(w+" tool.output", t.Output)
			t.Server = short(w+" tool.server", t.Server)
		}
		x.Files = nil
		for _, f := range e.Files {
			f.Path, f.OldPath = short(w+" files.path", f.Path), short(w+" files.old_path", f.OldPath)
			x.Files = append(x.Files, f)
		}
		x.Facts = nil
		for _, f := range e.Facts {
			if f.Kind == "commit" {
				if full, ok := b.ResolveReceipt(ctx, sess.CWD, f.Value); ok {
					f.Value = full
					res.Resolved++
				}
			} else {
				f.Value = short(w+" facts."+f.Kind, f.Value)
			}
			f.Kind = short(w+" facts.kind", f.Kind)
			x.Facts = append(x.Facts, f)
		}
		l, err := store.EncodeTranscriptLine(x.ID, x.Timestamp, x)
		if err != nil {
			return res, err
		}
		lines = append(lines, l)
		res.Events++
	}
	for _, l := range lines {
		res.Record = append(res.Record, string(l.JSON))
	}
	if opts.DryRun {
		v, err := st.RefView(ctx)
		if err != nil {
			return res, err
		}
		have, err := v.TranscriptIDs(ctx, res.Path)
		if err != nil {
			return res, err
		}
		for _, l := range lines {
			if have[l.ID] {
				res.Existing++
			} else {
				res.Added++
			}
		}
		return res, nil
	}
	sr, _, err := st.ShareTranscript(ctx, res.Path, sess.ID, lines)
	if err != nil {
		return res, err
	}
	res.Added, res.Existing, res.Commit = sr.Added, sr.Existing, sr.Commit
	return res, nil
}

// IndexResult sums an Index run.
type IndexResult struct {
	Records  int                    `json:"records"`
	Imported int                    `json:"imported"`
	Events   int                    `json:"events"`
	Failed   []history.SharedResult `json:"failed,omitempty"`
}

// Index indexes, in ix, every shared session record on the context branch of st (an unchanged record is
// skipped by its blob id; a session whose own transcript is indexed here is left as it is). A store
// without a context branch has nothing to index. A record that is not valid is listed in Failed and
// indexes nothing; the error is for the store or the index.
func Index(ctx context.Context, st *store.Store, ix *history.Index) (IndexResult, error) {
	var out IndexResult
	ok, err := st.Initialized(ctx)
	if err != nil || !ok {
		return out, err
	}
	v, err := st.RefView(ctx)
	if err != nil {
		return out, err
	}
	recs, err := v.SharedTranscripts(ctx)
	if err != nil {
		return out, err
	}
	for _, r := range recs {
		out.Records++
		// At most one byte over the bound is loaded: ParseShared refuses a larger record.
		data, _, err := v.ReadPrefix(ctx, store.Public, r.Path, history.MaxSharedBytes+1)
		if err != nil {
			return out, err
		}
		res, err := ix.ImportShared(ctx, r.Path, r.Blob, r.SessionID, data)
		if err != nil {
			return out, err
		}
		switch res.Action {
		case "imported":
			out.Imported++
			out.Events += res.Events
		case "failed":
			out.Failed = append(out.Failed, res)
		}
	}
	return out, nil
}
