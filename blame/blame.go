// Package blame traces committed lines and commits of the user's repository to the coding-agent session
// that produced them, with cited evidence (docs/blame.md): git notes written by ctx's post-commit hook,
// commit receipts found in transcripts, and, as a weaker tier, edits whose added lines match.
//
// It runs C git through gitstore (git blame --porcelain, rev-parse, notes) and reads the local history
// index of package history. Blaming writes nothing; the hooks write notes on refs/notes/ctx through RecordNote and RecordRewrites.
package blame

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/history"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// Outcome is what the evidence says about who produced a commit or a range of lines.
type Outcome string

// Outcomes, strongest first (docs/blame.md "Outcomes").
const (
	Proven      Outcome = "proven"      // exactly one session produced it, by a note or a commit receipt
	Conflicting Outcome = "conflicting" // proofs name more than one session
	Possible    Outcome = "possible"    // an agent's edit added the same lines, but no proof of who committed
	None        Outcome = "none"        // no evidence on this machine (not proof that no agent was involved)
)

// Evidence kinds (docs/blame.md "Evidence").
const (
	KindNote    = "note"    // a git note on refs/notes/ctx written by ctx's post-commit hook
	KindReceipt = "receipt" // a `git commit` tool output in a transcript naming the commit
	KindEdit    = "edit"    // an edit tool call whose added lines match the commit's
	// KindPullRequest cites the gh call that names a pull request and its commits (docs/blame.md "Pull requests").
	KindPullRequest = "pull_request"
)

// NotesRef is the notes ref ctx's post-commit hook writes to.
const NotesRef = "refs/notes/ctx"

// maxExcerpts bounds the evidence excerpts per commit.
const maxExcerpts = 3

// Evidence is one cited piece of evidence for a commit.
type Evidence struct {
	Kind            string           `json:"kind"`                        // note, receipt, edit
	SessionID       string           `json:"ctx_session_id,omitempty"`    // ctx's session id (history), when known
	Provider        history.Provider `json:"provider,omitempty"`          // the agent
	NativeSessionID string           `json:"native_session_id,omitempty"` // the agent's own session id
	EventID         string           `json:"ctx_event_id,omitempty"`      // open with `ctx history show event ID --window N`
	At              time.Time        `json:"at,omitzero"`
	Tool            string           `json:"tool,omitempty"`    // the tool name of the cited event
	Excerpt         string           `json:"excerpt,omitempty"` // the receipt line, the edit's added lines, or the note
	Matched         int              `json:"matched_lines,omitempty"`
	Env             string           `json:"env,omitempty"` // notes: the environment variable that named the session
	// RewrittenFrom is set when the evidence proves an earlier commit this one was rewritten from (by
	// Rewrite: amend, rebase or cherry-pick), as git reported it (docs/blame.md "Rewrites").
	RewrittenFrom string `json:"rewritten_from,omitempty"`
	Rewrite       string `json:"rewrite,omitempty"`
}

// Attribution is the producing session(s) of one commit.
type Attribution struct {
	Commit   string     `json:"commit"`
	Summary  string     `json:"summary,omitempty"`
	Author   string     `json:"author,omitempty"`
	At       time.Time  `json:"committed_at,omitzero"`
	Outcome  Outcome    `json:"outcome"`
	Sessions []string   `json:"sessions,omitempty"` // producing (or, for possible, candidate) sessions: ctx ids, else provider:native
	Evidence []Evidence `json:"evidence,omitempty"` // at most three excerpts, strongest first
}

// Range is a run of consecutive lines from one commit.
type Range struct {
	Start   int     `json:"start"`
	End     int     `json:"end"`
	Commit  string  `json:"commit"`
	Outcome Outcome `json:"outcome"`
}

// Coverage counts lines by outcome.
type Coverage struct {
	Lines       int `json:"lines"`
	Proven      int `json:"proven"`
	Conflicting int `json:"conflicting"`
	Possible    int `json:"possible"`
	None        int `json:"none"`
}

func (c *Coverage) add(o Outcome, n int) {
	c.Lines += n
	switch o {
	case Proven:
		c.Proven += n
	case Conflicting:
		c.Conflicting += n
	case Possible:
		c.Possible += n
	default:
		c.None += n
	}
}

// Overall is the summary outcome of counted lines: the strongest outcome present (conflicting over
// proven over possible over none); read it with the counts.
func (c Coverage) Overall() Outcome {
	switch {
	case c.Conflicting > 0:
		return Conflicting
	case c.Proven > 0:
		return Proven
	case c.Possible > 0:
		return Possible
	}
	return None
}

// FileResult is the blame of a line range of a committed file.
type FileResult struct {
	Path            string        `json:"path"` // relative to the repository's top level, slash-separated
	Head            string        `json:"head"`
	Start           int           `json:"start"`
	End             int           `json:"end"`
	WorktreeDiffers bool          `json:"worktree_differs"` // the working copy of the file differs from HEAD: committed lines were blamed
	Outcome         Outcome       `json:"outcome"`
	Coverage        Coverage      `json:"coverage"`
	Ranges          []Range       `json:"ranges"`
	Commits         []Attribution `json:"commits"`
}

// CommitResult is the attribution of one commit.
type CommitResult struct {
	Attribution
	Files []string `json:"files,omitempty"` // files the commit changed (relative to the top level)
}

// Blamer answers blame questions for one repository.
type Blamer struct {
	ix        *history.Index            // may be nil: notes only
	top       string                    // the repository's top level (symlinks resolved)
	worktrees []string                  // the top levels of the repository's worktrees; nil until loaded
	cwdRepos  map[string]bool           // session working directory → inside one of the worktrees
	cwds      []string                  // sessions' working directories inside this worktree; nil until loaded
	notes     map[string]bool           // commits with a note on NotesRef; nil until loaded
	msgs      map[string]string         // commit messages by full id, as loaded
	editsOf   map[string][]history.Edit // EditsOf answers by candidate paths
	// receiptPrefixes are the 7-digit prefixes of the ids receipts print; nil until loaded.
	receiptPrefixes map[string]bool
}

// ErrUsage marks a bad request (a path outside the repository, a bad line range, an unknown commit).
var ErrUsage = errors.New("blame")

// New returns a Blamer for the repository containing dir (not bare). ix may be nil.
func New(ctx context.Context, dir string, ix *history.Index) (*Blamer, error) {
	top, err := gitstore.Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("blame: %w", err)
	}
	if top == "" {
		return nil, fmt.Errorf("blame: %w: a bare repository has no files to blame", ErrUsage)
	}
	return &Blamer{ix: ix, top: realPath(top), cwdRepos: map[string]bool{}}, nil
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// TopLevel is the repository's top-level directory.
func (b *Blamer) TopLevel() string { return b.top }

// RelPath maps a path given by the user (absolute, or relative to dir) to the slash-separated path
// relative to the top level. Errors (wrapping ErrUsage) for a path outside the repository.
func (b *Blamer) RelPath(dir, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	abs := filepath.Clean(p)
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(d, filepath.Base(abs))
	}
	rel, err := filepath.Rel(b.top, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %s is not inside the repository %s", ErrUsage, p, b.top)
	}
	return filepath.ToSlash(rel), nil
}

// hasOnly is git blame's error for a range that starts past the file's end.
var hasOnly = lazyre.New(`has only (\d+) lines?`)

func plural(n string) string {
	if n == "1" {
		return ""
	}
	return "s"
}

// File blames lines start..end (1-based, inclusive; end 0 = to the end of the file) of path (relative to
// the top level, as RelPath returns) at HEAD.
func (b *Blamer) File(ctx context.Context, path string, start, end int) (FileResult, error) {
	res := FileResult{Path: path, Start: start, End: end}
	if start < 1 || (end != 0 && end < start) {
		return res, fmt.Errorf("%w: bad line range %d-%d", ErrUsage, start, end)
	}
	head, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil || head == "" {
		return res, fmt.Errorf("%w: the repository has no commit yet", ErrUsage)
	}
	res.Head = head
	lr := fmt.Sprintf("%d,", start)
	if end > 0 {
		lr += fmt.Sprint(end)
	}
	// The checks, the status and the notes list run while git blames (each its own git process).
	var (
		wg                          sync.WaitGroup
		inHead, statusErr, notesErr error
		status                      string
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		_, inHead = b.git(ctx, "cat-file", "-e", head+":"+path)
	}()
	go func() {
		defer wg.Done()
		status, statusErr = b.git(ctx, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "--", ":(literal)"+path)
	}()
	go func() {
		defer wg.Done()
		notesErr = b.loadNotes(ctx)
	}()
	out, err := b.git(ctx, "blame", "--porcelain", "-L", lr, head, "--", path)
	wg.Wait()
	if inHead != nil {
		return res, fmt.Errorf("%w: %s is not in the commit HEAD", ErrUsage, path)
	}
	if statusErr != nil {
		return res, fmt.Errorf("blame %s: %w", path, statusErr)
	}
	if notesErr != nil {
		return res, notesErr
	}
	res.WorktreeDiffers = status != ""
	if err != nil {
		if m := hasOnly.Get().FindStringSubmatch(err.Error()); m != nil {
			// git's "fatal: file f has only 2 lines", with its command line: said as ctx says it.
			return res, fmt.Errorf("%w: line %d is past the end of %s, which has %s line%s at HEAD (%.10s); give lines 1 to %[4]s",
				ErrUsage, start, path, m[1], plural(m[1]), head)
		}
		return res, fmt.Errorf("blame %s: %w", path, err)
	}
	lines, infos, err := parsePorcelain(out)
	if err != nil {
		return res, err
	}
	if len(lines) == 0 {
		return res, fmt.Errorf("%w: no lines in %s %d-%d", ErrUsage, path, start, end)
	}
	res.End = lines[len(lines)-1].Line
	byCommit := map[string][]string{}
	var order []string
	for _, l := range lines {
		if _, ok := byCommit[l.Commit]; !ok {
			order = append(order, l.Commit)
		}
		byCommit[l.Commit] = append(byCommit[l.Commit], l.Text)
	}
	if err := b.loadMessages(ctx, order); err != nil {
		return res, err
	}
	outcomes := map[string]Outcome{}
	for _, c := range order {
		ci := infos[c]
		a, err := b.attribute(ctx, c, ci.CommitTime, map[string][]string{path: byCommit[c]})
		if err != nil {
			return res, err
		}
		a.Summary, a.Author, a.At = ci.Summary, ci.Author, ci.CommitTime
		outcomes[c] = a.Outcome
		res.Commits = append(res.Commits, a)
	}
	for _, l := range lines {
		o := outcomes[l.Commit]
		res.Coverage.add(o, 1)
		if n := len(res.Ranges); n > 0 && res.Ranges[n-1].Commit == l.Commit && res.Ranges[n-1].End == l.Line-1 {
			res.Ranges[n-1].End = l.Line
			continue
		}
		res.Ranges = append(res.Ranges, Range{Start: l.Line, End: l.Line, Commit: l.Commit, Outcome: o})
	}
	res.Outcome = res.Coverage.Overall()
	return res, nil
}

var revRe = lazyre.New(`^[A-Za-z0-9_./~^@{}-]{1,200}$`)

// Commit attributes one commit, named by any revision git understands (not starting with "-").
func (b *Blamer) Commit(ctx context.Context, rev string) (CommitResult, error) {
	var res CommitResult
	if !revRe.Get().MatchString(rev) || strings.HasPrefix(rev, "-") {
		return res, fmt.Errorf("%w: %q is not a revision", ErrUsage, rev)
	}
	oid, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || oid == "" {
		return res, fmt.Errorf("%w: no commit %s", ErrUsage, rev)
	}
	meta, err := b.git(ctx, "show", "-s", "--format=%ct%n%an%n%s", oid)
	if err != nil {
		return res, fmt.Errorf("blame %s: %w", rev, err)
	}
	parts := strings.SplitN(meta, "\n", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	diff, err := b.git(ctx, "show", "--format=", "--no-color", "--no-ext-diff", "--no-renames", "--unified=0", oid)
	if err != nil {
		return res, fmt.Errorf("blame %s: %w", rev, err)
	}
	added := addedLines(diff)
	a, err := b.attribute(ctx, oid, unixTime(parts[0]), added)
	if err != nil {
		return res, err
	}
	a.At, a.Author, a.Summary = unixTime(parts[0]), parts[1], parts[2]
	res.Attribution = a
	for p := range added {
		res.Files = append(res.Files, p)
	}
	sort.Strings(res.Files)
	return res, nil
}

// addedLines reads a unified diff (git show --unified=0) into the added lines per new path.
func addedLines(diff string) map[string][]string {
	out := map[string][]string{}
	var cur string
	for line := range strings.SplitSeq(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "+++ "):
			cur = ""
			if p, ok := strings.CutPrefix(line, "+++ b/"); ok {
				cur = strings.Trim(p, "\"")
				out[cur] = out[cur][:0:0]
			}
		case strings.HasPrefix(line, "+") && cur != "":
			out[cur] = append(out[cur], line[1:])
		case strings.HasPrefix(line, "diff --git "):
			cur = ""
		}
	}
	return out
}

// git runs git in the repository's top level.
func (b *Blamer) git(ctx context.Context, args ...string) (string, error) {
	return gitstore.Git(ctx, b.top, args...)
}

// attribute finds the producing session of commit oid, committed at at; added holds the commit's added lines per path
// (for file blame: the blamed lines of the commit), used for the edit tier.
func (b *Blamer) attribute(ctx context.Context, oid string, at time.Time, added map[string][]string) (Attribution, error) {
	a := Attribution{Commit: oid, Outcome: None}
	proofs, err := b.proofs(ctx, oid)
	if err != nil {
		return a, err
	}
	if len(proofs) > 0 {
		keys := sessionKeys(proofs)
		a.Sessions = keys
		a.Outcome = Proven
		if len(keys) > 1 {
			a.Outcome = Conflicting
		}
		a.Evidence = limitEvidence(proofs)
		// The proving sessions' own matching edits, as context: the hunk that wrote the lines.
		if b.ix != nil && len(a.Evidence) < maxExcerpts {
			edits, err := b.edits(ctx, at, added)
			if err != nil {
				return a, err
			}
			for _, e := range edits {
				if len(a.Evidence) < maxExcerpts && containsStr(keys, sessionKey(e)) {
					a.Evidence = append(a.Evidence, e)
				}
			}
		}
		return a, nil
	}
	if b.ix == nil {
		return a, nil
	}
	edits, err := b.edits(ctx, at, added)
	if err != nil {
		return a, err
	}
	if len(edits) > 0 {
		a.Outcome = Possible
		a.Sessions = sessionKeys(edits)
		a.Evidence = limitEvidence(edits)
	}
	return a, nil
}

// maxRewrites bounds how many rewrites back proofs follows (a chain of amends, a rebase of a rebase).
const maxRewrites = 16

// proofs are the notes and receipts of oid; when it has none, those of the commits it was rewritten from
// (origins), nearest first, each marked with the rewrite.
func (b *Blamer) proofs(ctx context.Context, oid string) ([]Evidence, error) {
	seen := map[string]bool{oid: true}
	cur := []origin{{oid: oid}}
	for depth := 0; depth <= maxRewrites && len(cur) > 0; depth++ {
		var out []Evidence
		var next []origin
		for _, o := range cur {
			n, err := b.note(ctx, o.oid)
			if err != nil {
				return nil, err
			}
			ev := n
			if b.ix != nil {
				rs, err := b.receipts(ctx, o.oid)
				if err != nil {
					return nil, err
				}
				ev = append(ev, rs...)
			}
			for i := range ev {
				if o.oid != oid {
					ev[i].RewrittenFrom, ev[i].Rewrite = o.oid, o.by
				}
			}
			out = append(out, ev...)
			os, err := b.origins(ctx, o.oid)
			if err != nil {
				return nil, err
			}
			for _, x := range os {
				if !seen[x.oid] {
					seen[x.oid] = true
					next = append(next, x)
				}
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		cur = next
	}
	return nil, nil
}

func sessionKey(e Evidence) string {
	if e.SessionID != "" {
		return e.SessionID
	}
	return string(e.Provider) + ":" + e.NativeSessionID
}

func sessionKeys(ev []Evidence) []string {
	var out []string
	for _, e := range ev {
		k := sessionKey(e)
		if !containsStr(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// limitEvidence keeps at most maxExcerpts, one per session first.
func limitEvidence(ev []Evidence) []Evidence {
	var out []Evidence
	seen := map[string]bool{}
	for _, e := range ev {
		if k := sessionKey(e); !seen[k] && len(out) < maxExcerpts {
			seen[k] = true
			out = append(out, e)
		}
	}
	for _, e := range ev {
		if len(out) >= maxExcerpts {
			break
		}
		if !containsEvidence(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func containsEvidence(ev []Evidence, e Evidence) bool {
	for _, x := range ev {
		if x.Kind == e.Kind && x.EventID == e.EventID && sessionKey(x) == sessionKey(e) {
			return true
		}
	}
	return false
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
