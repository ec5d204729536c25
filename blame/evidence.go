package blame

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/ctx-dev/ctx/history"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// note reads the note ctx's post-commit hook left on oid: one piece of evidence per recorded session.
func (b *Blamer) note(ctx context.Context, oid string) ([]Evidence, error) {
	text, err := b.noteText(ctx, oid)
	if err != nil || text == "" {
		return nil, err
	}
	var out []Evidence
	for _, r := range ParseNote(text) {
		e := Evidence{Kind: KindNote, Provider: history.Provider(r.Agent), NativeSessionID: r.Session, Env: r.Env, At: r.At,
			Excerpt: clipText(NoteText(r), 300)}
		if p, ok := history.ParseProvider(r.Agent); ok {
			e.Provider = p
			e.SessionID = history.SessionID(p, r.Session)
		}
		out = append(out, e)
	}
	return out, nil
}

// noteText is the note of oid on NotesRef, "" when it has none.
func (b *Blamer) noteText(ctx context.Context, oid string) (string, error) {
	if err := b.loadNotes(ctx); err != nil {
		return "", err
	}
	if !b.notes[oid] {
		return "", nil
	}
	text, err := b.git(ctx, "notes", "--ref="+NotesRef, "show", oid)
	if err != nil {
		return "", fmt.Errorf("blame: read the note of %s: %w", oid, err)
	}
	return text, nil
}

// origin is a commit that oid was made from by a rewrite git reported.
type origin struct {
	oid, by string
}

var cherryPickedRe = lazyre.New(`(?m)^\(cherry picked from commit ([0-9a-f]{40}(?:[0-9a-f]{24})?)\)$`)

// origins are the commits oid was rewritten from: the rewrite records of its note (ctx's post-rewrite
// hook: git commit --amend, git rebase) and the "(cherry picked from commit X)" line git cherry-pick -x
// writes into the message. Only origins that are commits of this repository count.
func (b *Blamer) origins(ctx context.Context, oid string) ([]origin, error) {
	var out []origin
	text, err := b.noteText(ctx, oid)
	if err != nil {
		return nil, err
	}
	for _, r := range ParseRewrites(text) {
		out = append(out, origin{oid: r.From, by: r.By})
	}
	msg, err := b.message(ctx, oid)
	if err != nil {
		return nil, err
	}
	for _, m := range cherryPickedRe.Get().FindAllStringSubmatch(msg, -1) {
		out = append(out, origin{oid: m[1], by: "cherry-pick"})
	}
	var ok []origin
	for _, o := range out {
		if o.oid == oid {
			continue
		}
		if full, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", o.oid+"^{commit}"); err == nil && full == o.oid {
			ok = append(ok, o)
		}
	}
	return ok, nil
}

// message is the commit message of oid (from the messages loaded by loadMessages, else one git call).
func (b *Blamer) message(ctx context.Context, oid string) (string, error) {
	if m, ok := b.msgs[oid]; ok {
		return m, nil
	}
	if err := b.loadMessages(ctx, []string{oid}); err != nil {
		return "", err
	}
	return b.msgs[oid], nil
}

// loadMessages reads the messages of commits (full ids) in a few git calls (500 commits each).
func (b *Blamer) loadMessages(ctx context.Context, oids []string) error {
	if b.msgs == nil {
		b.msgs = map[string]string{}
	}
	for len(oids) > 0 {
		n := min(len(oids), 500)
		args := append([]string{"log", "--no-walk=unsorted", "--format=%H%x01%B%x02", "--end-of-options"}, oids[:n]...)
		out, err := b.git(ctx, args...)
		if err != nil {
			return fmt.Errorf("blame: read commit messages: %w", err)
		}
		for rec := range strings.SplitSeq(out, "\x02") {
			if h, m, ok := strings.Cut(strings.TrimLeft(rec, "\n"), "\x01"); ok {
				b.msgs[h] = m
			}
		}
		oids = oids[n:]
	}
	return nil
}

// loadNotes lists the commits that have a note on NotesRef, once.
func (b *Blamer) loadNotes(ctx context.Context) error {
	if b.notes != nil {
		return nil
	}
	out, err := b.git(ctx, "notes", "--ref="+NotesRef, "list")
	if err != nil {
		return fmt.Errorf("blame: read %s: %w", NotesRef, err)
	}
	notes := map[string]bool{}
	for line := range strings.SplitSeq(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			notes[f[1]] = true
		}
	}
	b.notes = notes
	return nil
}

// inRepo reports whether dir (a session's working directory, from a transcript) is inside one of this
// repository's worktrees. No git runs in dir: a transcript names it, and a repository there is not ours
// to run git in.
func (b *Blamer) inRepo(ctx context.Context, dir string) bool {
	if dir == "" || !filepath.IsAbs(dir) {
		return false
	}
	if b.worktrees == nil {
		b.worktrees = []string{b.top}
		if out, err := b.git(ctx, "worktree", "list", "--porcelain"); err == nil {
			for line := range strings.SplitSeq(out, "\n") {
				if p, ok := strings.CutPrefix(line, "worktree "); ok && filepath.IsAbs(p) {
					b.worktrees = append(b.worktrees, realPath(p))
				}
			}
		}
	}
	if v, ok := b.cwdRepos[dir]; ok {
		return v
	}
	rd := realPath(dir)
	in := false
	for _, w := range b.worktrees {
		if within(rd, w) {
			in = true
			break
		}
	}
	b.cwdRepos[dir] = in
	return in
}

// receipts are the transcripts' commit receipts of oid that resolve to oid in this repository: the
// session's cwd is in this repository (any of its worktrees) and the printed id names exactly oid there.
func (b *Blamer) receipts(ctx context.Context, oid string) ([]Evidence, error) {
	if b.receiptPrefixes == nil {
		p, err := b.ix.ReceiptPrefixes(ctx)
		if err != nil {
			return nil, err
		}
		b.receiptPrefixes = p
	}
	if len(oid) < 7 || !b.receiptPrefixes[oid[:7]] {
		return nil, nil
	}
	rs, err := b.ix.ReceiptsFor(ctx, oid)
	if err != nil {
		return nil, err
	}
	var out []Evidence
	for _, r := range rs {
		if !isHex(r.Short) || (r.Event.Tool != nil && r.Event.Tool.ExitCode != nil && *r.Event.Tool.ExitCode != 0) {
			continue
		}
		if r.Session.SourceFormat == history.FormatShared {
			// A teammate's shared session: its working directory was on their machine. The sharer resolved
			// the receipt to the full commit id in the repository of that directory (ResolveReceipt), so
			// a full id that names this commit here is the repository check (docs/blame.md "Sharing").
			if len(r.Short) != len(oid) {
				continue
			}
		} else if !b.inRepo(ctx, r.Session.CWD) {
			continue
		}
		full, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", r.Short+"^{commit}")
		if err != nil || full != oid {
			continue // unknown here, or ambiguous
		}
		e := Evidence{Kind: KindReceipt, SessionID: r.Session.ID, Provider: r.Session.Provider,
			NativeSessionID: r.Session.NativeID, EventID: r.Event.ID, At: r.Event.At, Excerpt: receiptLine(r)}
		if r.Event.Tool != nil {
			e.Tool = r.Event.Tool.Name
		}
		out = append(out, e)
	}
	return out, nil
}

// InRepo reports whether dir, a session's working directory, is inside one of this repository's
// worktrees (no git runs in dir).
func (b *Blamer) InRepo(ctx context.Context, dir string) bool { return b.inRepo(ctx, dir) }

// ResolveReceipt resolves short, a commit id printed by a session working in cwd, to the full id of the
// commit it names in this repository: "" and false when cwd is not in this repository, or short names no
// commit here or more than one. ctx history share stores the full id, which proves the commit on a
// teammate's machine (docs/blame.md "Sharing").
func (b *Blamer) ResolveReceipt(ctx context.Context, cwd, short string) (string, bool) {
	short = strings.ToLower(short)
	if !isHex(short) || !b.inRepo(ctx, cwd) {
		return "", false
	}
	full, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", short+"^{commit}")
	if err != nil || !strings.HasPrefix(full, short) {
		return "", false
	}
	return full, true
}

func receiptLine(r history.Receipt) string {
	text := r.Event.Text
	if r.Event.Tool != nil && r.Event.Tool.Output != "" {
		text = r.Event.Tool.Output
	}
	text = strings.ReplaceAll(text, `\n`, "\n")
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "[") && strings.Contains(line, r.Short[:min(7, len(r.Short))]) {
			return clipText(line, 200)
		}
	}
	return clipText(text, 200)
}

// skew is how much later than the commit an edit may be recorded (clocks of agent and git differ).
const skew = 2 * time.Minute

// edits are the edit tool calls of sessions in this repository, recorded before the commit time at,
// whose added lines contain at least half of the commit's significant added lines of the same file.
func (b *Blamer) edits(ctx context.Context, at time.Time, added map[string][]string) ([]Evidence, error) {
	if b.cwds == nil {
		cwds, err := b.ix.SessionCWDs(ctx)
		if err != nil {
			return nil, err
		}
		// Only working directories inside this repository can record its files by a relative path.
		b.cwds = []string{}
		for _, c := range cwds {
			if filepath.IsAbs(c) {
				if rc := realPath(c); within(rc, b.top) {
					b.cwds = append(b.cwds, rc)
				}
			}
		}
	}
	var out []Evidence
	for path, lines := range added {
		want := significant(lines)
		if len(want) == 0 {
			continue
		}
		abs := filepath.Join(b.top, filepath.FromSlash(path))
		cands := []string{abs}
		for _, rc := range b.cwds {
			if rel, err := filepath.Rel(rc, abs); err == nil && !strings.HasPrefix(rel, "..") {
				if !containsStr(cands, rel) {
					cands = append(cands, rel, "./"+rel)
				}
			}
		}
		// The edits of a path are the same for every commit of a file blame: looked up once.
		key := strings.Join(cands, "\x00")
		eds, ok := b.editsOf[key]
		if !ok {
			var err error
			if eds, err = b.ix.EditsOf(ctx, cands, 0); err != nil {
				return nil, err
			}
			if b.editsOf == nil {
				b.editsOf = map[string][]history.Edit{}
			}
			b.editsOf[key] = eds
		}
		for _, ed := range eds {
			if !ed.Event.At.IsZero() && !at.IsZero() && ed.Event.At.After(at.Add(skew)) {
				continue
			}
			p := ed.Path
			if !filepath.IsAbs(p) {
				if ed.Session.CWD == "" {
					continue
				}
				p = filepath.Join(realPath(ed.Session.CWD), p)
			}
			if filepath.Clean(p) != abs && realPath(filepath.Dir(p)) != filepath.Dir(abs) {
				continue
			}
			got := editAdditions(ed.Event)
			have := map[string]bool{}
			for _, l := range significant(got) {
				have[l] = true
			}
			n := 0
			for _, l := range want {
				if have[l] {
					n++
				}
			}
			if n == 0 || 2*n < len(want) {
				continue
			}
			e := Evidence{Kind: KindEdit, SessionID: ed.Session.ID, Provider: ed.Session.Provider,
				NativeSessionID: ed.Session.NativeID, EventID: ed.Event.ID, At: ed.Event.At, Matched: n,
				Excerpt: clipText(strings.Join(got, "\n"), 300)}
			if ed.Event.Tool != nil {
				e.Tool = ed.Event.Tool.Name
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// significant returns the trimmed lines that carry content (at least three characters, one of them a
// letter or digit): braces and blank lines match anything and prove nothing.
func significant(lines []string) []string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if len(t) < 3 || !strings.ContainsFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// editAdditions are the lines an edit tool call adds: Write/write_file content, Edit/replace new_string,
// MultiEdit edits[].new_string, and the "+" lines of an apply_patch envelope.
func editAdditions(e history.Event) []string {
	if e.Tool == nil {
		return nil
	}
	in := e.Tool.Input
	var texts []string
	var m map[string]any
	if strings.HasPrefix(strings.TrimSpace(in), "{") && json.Unmarshal([]byte(in), &m) == nil {
		for _, k := range []string{"content", "new_string", "newString", "new_str", "file_text"} {
			if s, ok := m[k].(string); ok {
				texts = append(texts, s)
			}
		}
		if arr, ok := m["edits"].([]any); ok {
			for _, x := range arr {
				if em, ok := x.(map[string]any); ok {
					for _, k := range []string{"new_string", "newString"} {
						if s, ok := em[k].(string); ok {
							texts = append(texts, s)
						}
					}
				}
			}
		}
		for _, k := range []string{"input", "patch"} {
			if s, ok := m[k].(string); ok && strings.Contains(s, "*** Begin Patch") {
				texts = append(texts, patchAdditions(s))
			}
		}
	} else if strings.Contains(in, "*** Begin Patch") {
		texts = append(texts, patchAdditions(in))
	}
	var out []string
	for _, t := range texts {
		out = append(out, strings.Split(strings.TrimSuffix(t, "\n"), "\n")...)
	}
	return out
}

func patchAdditions(p string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(p, "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") {
			b.WriteString(line[1:])
			b.WriteString("\n")
		}
	}
	return b.String()
}

func isHex(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
