package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/clock"
	"github.com/ctx-dev/ctx/merge"
)

// Op names one write for its commit message (docs/architecture.md "Commits"): Name is the Ctx-Op trailer
// (kind.verb, e.g. "knowledge.set"), Key the Ctx-Key trailer, Summary the subject after "ctx: ".
type Op struct {
	Name    string
	Key     string
	Summary string
	Extra   [][2]string // further trailers, e.g. {"Ctx-Conflicts", "2"}; a key may repeat (Ctx-Renamed)

	// Body is the paragraph between the subject and the trailers, one line each (a merge's conflicts and
	// notes, as git's own merge commits list "Conflicts:"); none when empty. Each line is one line of the
	// message (messageLine) cut to maxBodyLine bytes.
	Body []string

	// KeyOf, when set, gives the Ctx-Key once the write's edits are computed: the key of a write that
	// learns it only then (a new decision's number). It is called after fn, on each try of Write.
	KeyOf func() string

	// Scoped gives the message of one scope's commit when it must differ from the others': a write that
	// commits on the public ref and on another one in one step must not name a private entry in the public
	// commit (docs/security.md), so such a write gives the public scope an Op that names only what the
	// public commit holds.
	Scoped map[Scope]Op
}

// Message renders the commit message: "ctx: <summary>", a blank line, the body's lines and a blank line
// when op.Body has any, then the trailers Ctx-Op, Ctx-Key, Ctx-Agent, Ctx-Session, Ctx-Machine (empty ones
// omitted) and any extra ones (docs/architecture.md "Commits").
func (s *Store) Message(op Op) string {
	var b strings.Builder
	b.WriteString("ctx: ")
	b.WriteString(messageLine(op.Summary))
	b.WriteString("\n\n")
	body := false
	for _, l := range op.Body {
		if l = strings.TrimRight(cutLine(messageLine(l), maxBodyLine), " "); strings.TrimSpace(l) == "" {
			continue // an empty line would end the paragraph
		}
		b.WriteString(l)
		b.WriteByte('\n')
		body = true
	}
	if body {
		b.WriteByte('\n')
	}
	tr := [][2]string{{"Ctx-Op", op.Name}, {"Ctx-Key", op.Key}, {"Ctx-Agent", s.Actor.Agent},
		{"Ctx-Session", s.Actor.Session}, {"Ctx-Machine", s.Actor.Machine}}
	tr = append(tr, op.Extra...)
	for _, t := range tr {
		if t[1] == "" {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", t[0], messageLine(t[1]))
	}
	return b.String()
}

// maxBodyLine bounds one line of a commit message's body (Op.Body), in bytes: a path of a fetched tree
// can be long, and a merge's message stays a few KiB (docs/limits.md "Commit messages and notes").
const maxBodyLine = 512

// cutLine is l cut to at most n bytes at a rune boundary, with "..." when cut.
func cutLine(l string, n int) string {
	if len(l) <= n {
		return l
	}
	i := n - 3
	for i > 0 && !utf8.RuneStart(l[i]) {
		i--
	}
	return l[:i] + "..."
}

// messageLine is s as one line of a commit message: a line break becomes a space, and every other control
// character (C0 but tab, DEL, C1: the ESC of a terminal escape sequence) becomes U+FFFD, so that
// `git log` of the context branch never sends a teammate's terminal a sequence from an entry's title or
// a --session value (docs/security.md, "Input hygiene").
func messageLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r':
			return ' '
		case r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return '\uFFFD'
		}
		return r
	}, s)
}

// Edits are the file changes of one write, per scope.
type Edits map[Scope][]gitstore.Change

// Put adds a file write.
func (e Edits) Put(sc Scope, p string, data []byte) {
	e[sc] = append(e[sc], gitstore.Change{Path: p, Data: data})
}

// Del adds a file deletion.
func (e Edits) Del(sc Scope, p string) {
	e[sc] = append(e[sc], gitstore.Change{Path: p, Delete: true})
}

// Committed is the outcome of a write: the new commit of each scope whose ref moved. Empty when the write
// changed nothing (no commit is made then, docs/architecture.md "Commits"). Warnings are problems after the
// commit (refreshing .context/ failed): the write landed all the same.
type Committed struct {
	Commits  map[Scope]gitstore.Hash
	Paths    []string
	Warnings []string
	// Conflicts are the conflicts the write recorded (conflicts/<id>.json): a hand edit that `ctx commit`
	// merged with a newer write of the same lines.
	Conflicts []merge.Conflict
}

// Changed reports whether any commit was made.
func (c *Committed) Changed() bool { return len(c.Commits) > 0 }

// Write runs fn on a view of the refs' tips under the ctx lock and commits its edits, one commit per scope
// that changed, with the message of op; then it refreshes the checked-out tree. fn may run more than once
// (when a ref moved concurrently) and must only compute. The public branch must exist (ErrNotInitialized).
//
// An error means nothing was committed. Once committed, the write succeeds: a failed refresh of .context/
// is a warning (Committed.Warnings and the context's collector, WithWarnings), never an error, so that a
// caller never retries a write that landed.
//
// Files written on the public ref that add text looking like a credential are refused with a
// *SecretError (nothing is written) unless ctx comes from AllowSecrets (docs/security.md, "Secrets").
func (s *Store) Write(ctx context.Context, op Op, fn func(v *View) (Edits, error)) (*Committed, error) {
	out := &Committed{Commits: map[Scope]gitstore.Hash{}}
	if err := s.checkBranchNotCheckedOut(); err != nil {
		return nil, err
	}
	refs := s.Refs()
	res, err := s.repo.Transact(ctx, refs, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		if tips[s.BranchRef()].Commit.IsZero() {
			return nil, ErrNotInitialized
		}
		// A branch of that name that is not a context store is the user's: ctx commits nothing onto it.
		if err := s.checkContextTree(ctx, tips[s.BranchRef()].Tree); err != nil && !repairingManifest(ctx) {
			return nil, err
		}
		trees := map[Scope]gitstore.Hash{}
		for _, sc := range Scopes {
			trees[sc] = tips[s.RefOf(sc)].Tree
		}
		v := scopedView(ctx, NewView(&RefReader{repo: s.repo, Trees: trees, skels: s.skels}))
		edits, err := fn(v)
		if err != nil {
			return nil, err
		}
		if PublicOnly(ctx) {
			for sc, ch := range edits {
				if sc != Public && len(ch) > 0 {
					return nil, ErrPrivateScope
				}
			}
		}
		if err := checkFileSizes(edits); err != nil {
			return nil, err
		}
		o := op
		if o.KeyOf != nil {
			o.Key = o.KeyOf()
		}
		msg := s.Message(o)
		w := map[string]*gitstore.Write{}
		for sc, ch := range edits {
			if len(ch) > 0 {
				m := msg
				if o, ok := op.Scoped[sc]; ok {
					m = s.Message(o)
				}
				w[s.RefOf(sc)] = &gitstore.Write{Changes: ch, Message: m}
			}
		}
		if pw := w[s.RefOf(Public)]; pw != nil && !secretsAllowed(ctx) {
			if err := checkSecrets(ctx, v, pw.Changes, pw.Message); err != nil {
				return nil, err
			}
		}
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	for i, r := range res {
		if r.Committed {
			out.Commits[Scopes[i]] = r.New
			out.Paths = append(out.Paths, r.Paths...)
		}
	}
	sort.Strings(out.Paths)
	if out.Changed() {
		if _, err := s.Refresh(ctx); err != nil {
			out.Warnings = append(out.Warnings, warn(ctx, refreshWarning(err)))
		}
		if PublicOnly(ctx) {
			s.recordHiddenCopies(ctx, out.Paths)
		}
	}
	return out, nil
}

// recordHiddenCopies checks, after a public-only write (WithPublicOnly) that committed paths, whether the
// machine user holds one of the entries written in another scope: the caller cannot see that scope, so
// the write made a public copy of a private or ephemeral entry (docs/http.md "Private scopes stay the
// machine user's"). Then it checks the clashes as ctx doctor does and records them, so that ctx status
// shows the machine user the public copy its readers hide (kind "scopes", docs/format.md). Nothing of it
// reaches the caller: errors are dropped (the record is a cache; ctx doctor checks again).
func (s *Store) recordHiddenCopies(ctx context.Context, paths []string) {
	all := context.WithValue(ctx, publicOnlyKey{}, false) // the machine user's view: every scope
	tips, err := s.Tips(all)
	if err != nil {
		return
	}
	trees := map[Scope]gitstore.Hash{}
	for _, sc := range Scopes {
		if sc != Public && !tips[sc].IsZero() {
			if trees[sc], err = s.repo.TreeOf(all, tips[sc]); err != nil {
				return
			}
		}
	}
	if len(trees) == 0 {
		return
	}
	v := NewView(&RefReader{repo: s.repo, Trees: trees, skels: s.skels})
	for _, p := range paths {
		entry := p
		if rest, ok := strings.CutPrefix(p, "skills/"); ok {
			name, _, _ := strings.Cut(rest, "/")
			entry = "skills/" + name
		}
		for sc := range trees {
			held := false
			if entry != p {
				es, err := v.r.List(all, sc, entry)
				held = err == nil && len(es) > 0
			} else {
				_, err := v.r.ReadFile(all, sc, entry)
				held = err == nil
			}
			if held {
				quiet, _ := WithWarnings(all) // the caller's collector gets none of it
				_, _ = s.Clashes(quiet)
				return
			}
		}
	}
}

// checkBranchNotCheckedOut refuses (ErrInvalid) to move the context branch while a worktree has it checked
// out, this one or another (`git worktree add ../w ctx`): that worktree's files would no longer match its
// HEAD, so git refuses as well (docs/architecture.md "The lean front", step 2 of a write). The error names the worktree.
func (s *Store) checkBranchNotCheckedOut() error {
	wt := s.repo.WorktreeOf(s.cfg.Branch)
	switch {
	case wt == "":
		return nil
	case s.repo.WorkTree() != "" && filepath.Clean(wt) == filepath.Clean(s.repo.WorkTree()):
		return invalidf("branch %s is checked out in this worktree: ctx does not write to the branch you work on: switch this worktree to another branch (git switch -)", s.cfg.Branch)
	}
	return invalidf("branch %s is checked out in the worktree %s: ctx does not move a branch a worktree has checked out, as git does not (check another branch out there, or git worktree remove it)", s.cfg.Branch, wt)
}

// checkFileSizes refuses (ErrInvalid) a write of a file over MaxFileBytes: a teammate's pull would refuse
// the commit (docs/limits.md "Files of the store").
func checkFileSizes(edits Edits) error {
	for _, ch := range edits {
		for _, c := range ch {
			if n := int64(len(c.Data)); n > maxFileBytes {
				return invalidf("%s would be %s, over the limit of one file of the store (%s, docs/limits.md \"Files of the store\"): nothing written",
					c.Path, sizeOf(n), sizeOf(maxFileBytes))
			}
		}
	}
	return nil
}

// refreshWarning is the warning of a write that committed but could not refresh .context/.
func refreshWarning(err error) string { return refreshFailed("committed", err) }

// refreshFailed is the warning of a write or a pull (done: "committed", "pulled") that landed but could
// not refresh .context/. What to do next is true for the error: a missing checkout is not refreshed by
// the next command (CheckoutMissingError: each one refuses until `ctx restore`), anything else is.
func refreshFailed(done string, err error) string {
	if errors.Is(err, ErrCheckoutMissing) {
		return fmt.Sprintf("%s, but %s was not refreshed: %v", done, CheckoutDir, err)
	}
	return fmt.Sprintf("%s, but refreshing %s failed (the next ctx command refreshes it; ctx status shows what it holds): %v", done, CheckoutDir, err)
}

// now is the clock of records, RFC 3339 UTC with seconds (docs/format.md).
func now() string { return clock.Now().UTC().Format(time.RFC3339) }
