package adapters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/adapters/internal/block"
	"github.com/ctx-dev/ctx/adapters/internal/wtfs"
	"github.com/ctx-dev/ctx/store"
	"github.com/pmezard/go-difflib/difflib"
)

// Options say where an export or import works.
type Options struct {
	// Root is the work tree (absolute path).
	Root string
	// StateDir is ctx's local state folder of the repository (<git common dir>/ctx), where the Record
	// is kept.
	StateDir string
	// MaxBlock bounds the body of a managed block and of each Cursor rule in bytes (0: DefaultMaxBlock;
	// at least 2 KiB).
	MaxBlock int
	// Tracked, when not nil, says whether git tracks a path (slash, relative to Root). A refresh
	// (Plan.Refresh) leaves tracked files alone unless the Record says TrackedOK.
	Tracked func(path string) bool
}

func (o Options) maxBlock() (int, error) {
	switch {
	case o.MaxBlock == 0:
		return DefaultMaxBlock, nil
	case o.MaxBlock < minBlock:
		return 0, badArgument("adapters: the block bound must be at least %d bytes, not %d", minBlock, o.MaxBlock)
	}
	return o.MaxBlock, nil
}

// Kind is what a file of an export is.
type Kind string

// The kinds of file an export writes.
const (
	KindBlock Kind = "block" // ctx's managed block in an instruction file
	KindRule  Kind = "rule"  // a Cursor rule .cursor/rules/ctx-*.mdc
	KindSkill Kind = "skill" // a skill's SKILL.md in a client's skills folder
)

// Action is what an export does to a file.
type Action string

// Actions of a Change.
const (
	Create    Action = "create"    // the file (or the block in it) is not there yet
	Update    Action = "update"    // ctx's file or block is there with other content
	Delete    Action = "delete"    // ctx's file is no longer wanted (a skill removed from the branch)
	Unchanged Action = "unchanged" // already what an export writes
)

// Change is one file of an export.
type Change struct {
	Path    string   // slash path relative to Options.Root
	Kind    Kind     //
	Action  Action   //
	Clients []string // the clients that read this file
	Old     []byte   // the file now (nil when absent)
	New     []byte   // the file after the export (nil for Delete)
	// Tracked says git tracks the file; Skipped says a refresh leaves it for that reason.
	Tracked, Skipped bool
	created          bool // ctx creates the file (instruction files: recorded, so that removing the block deletes it)
	foreign          bool // Unchanged: a file ctx did not write that already holds the export's bytes (a user's skill)
	unblock          bool // the change takes ctx's block out: the file is no longer ctx's
}

// Problem is a file an export must not touch, and why: a managed block that is broken or was edited by
// hand (the error wraps block.ErrBroken or block.ErrHandEdited), a file ctx wrote that the user changed
// (ErrHandEdited), or a file or skill folder ctx did not write where it would write one (ErrNotOurs).
type Problem struct {
	Path    string
	Clients []string
	Err     error
}

func (p Problem) Error() string {
	msg := p.Err.Error()
	if strings.HasPrefix(msg, p.Path+": ") {
		return msg // the path is said once
	}
	return p.Path + ": " + msg
}
func (p Problem) Unwrap() error { return p.Err }

// Errors of a Problem.
var (
	// ErrHandEdited: a file ctx wrote was changed since; ctx leaves it (restore it or delete it, then
	// export again).
	ErrHandEdited = errors.New("changed since ctx wrote it; left as it is (delete it, or undo the change, to let ctx write it again)")
	// ErrNotOurs: a file or skill folder ctx did not write is where ctx would write; ctx never touches it.
	ErrNotOurs = errors.New("not written by ctx; left as it is (rename or remove it to let ctx write there)")
	// ErrMoved: the file changed between planning and writing; left for the next export.
	ErrMoved = errors.New("changed while ctx was exporting; left as it is (export again)")
)

// Plan is what an export would do: one Change per file, and the Problems of files it leaves alone.
type Plan struct {
	Changes  []Change
	Problems []Problem
	opts     Options
	rec      *Record
}

// place is one file an export wants, with the clients that read it.
type place struct {
	kind    Kind
	clients []string
	body    string // KindBlock: the block's body
	data    []byte // KindRule, KindSkill: the file; nil: delete ctx's file
	stop    string // the folder a Delete leaves in place (the skills or rules folder)
	remove  bool   // KindBlock: take ctx's block out
}

// PlanExport computes the export of c for clients (Lookup names; none: every client) into opts.Root,
// reading the files there and the Record, writing nothing. Errors are for bad options and I/O; files
// it must leave alone are Plan.Problems.
func PlanExport(ctx context.Context, opts Options, c *Content, clients ...string) (*Plan, error) {
	return plan(ctx, opts, c, clients...)
}

// PlanRemove computes the removal of everything ctx wrote for clients (Lookup names; none: every
// client): the managed block goes out of each instruction file (which is deleted when ctx created it and
// nothing else is left, so a file goes back to its bytes before the first export), and ctx's Cursor
// rules and skill files go when they are still as ctx wrote them. Files ctx did not write, and files of
// ctx's the user changed (Problems), stay.
func PlanRemove(ctx context.Context, opts Options, clients ...string) (*Plan, error) {
	return plan(ctx, opts, nil, clients...)
}

// plan is PlanExport of c, or PlanRemove when c is nil.
func plan(ctx context.Context, opts Options, c *Content, clients ...string) (*Plan, error) {
	cs, err := Lookup(clients...)
	if err != nil {
		return nil, err
	}
	limit, err := opts.maxBlock()
	if err != nil {
		return nil, err
	}
	rec, err := ReadRecord(opts)
	if err != nil {
		return nil, err
	}
	w, err := wtfs.Open(opts.Root)
	if err != nil {
		return nil, err
	}
	defer w.Close()

	places := map[string]*place{}
	want := func(p string, pl place, client string) {
		if have, ok := places[p]; ok {
			have.clients = append(have.clients, client)
			return
		}
		pl.clients = []string{client}
		places[p] = &pl
	}
	for _, cl := range cs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cl.Instructions != "" && c == nil {
			want(cl.Instructions, place{kind: KindBlock, remove: true}, cl.Name)
		} else if cl.Instructions != "" {
			want(cl.Instructions, place{kind: KindBlock, body: blockBody(c, cl.Instructions, limit)}, cl.Name)
		}
		if cl.Rules != "" {
			var rules []rule
			if c != nil {
				rules = cursorRules(c, limit)
			}
			for _, r := range rules {
				want(cl.Rules+"/"+r.name, place{kind: KindRule, data: r.data, stop: cl.Rules}, cl.Name)
			}
			// Rules ctx wrote before and no longer writes (a section that became empty) go.
			for p := range rec.Files {
				if path.Dir(p) == cl.Rules && strings.HasPrefix(path.Base(p), "ctx-") {
					if _, ok := places[p]; !ok {
						want(p, place{kind: KindRule, stop: cl.Rules}, cl.Name)
					}
				}
			}
		}
		if cl.Skills != "" {
			var skills []store.Skill
			if c != nil {
				skills = c.Skills
			}
			for _, s := range skills {
				want(cl.Skills+"/"+s.Name+"/SKILL.md", place{kind: KindSkill, data: []byte(s.Content), stop: cl.Skills}, cl.Name)
			}
			// Skills ctx wrote that the branch no longer has go (their folder too, when ctx's file was
			// all it held).
			for p := range rec.Files {
				if strings.HasPrefix(p, cl.Skills+"/") && path.Base(p) == "SKILL.md" && path.Dir(path.Dir(p)) == cl.Skills {
					if _, ok := places[p]; !ok {
						want(p, place{kind: KindSkill, stop: cl.Skills}, cl.Name)
					}
				}
			}
		}
	}
	paths := make([]string, 0, len(places))
	for p := range places {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	pl := &Plan{opts: opts, rec: rec}
	for _, p := range paths {
		if err := pl.add(w, p, places[p]); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// add plans one file.
func (pl *Plan) add(w *wtfs.FS, p string, want *place) error {
	old, err := w.ReadFile(p)
	exists := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case errors.Is(err, wtfs.ErrLink):
		pl.Problems = append(pl.Problems, Problem{Path: p, Clients: want.clients, Err: err})
		return nil
	case err != nil:
		if w.Exists(p) { // a folder, a fifo, ...: not ctx's
			pl.Problems = append(pl.Problems, Problem{Path: p, Clients: want.clients, Err: fmt.Errorf("%v: %w", err, ErrNotOurs)})
			return nil
		}
		return fmt.Errorf("adapters: read %s: %w", p, err)
	}
	ch := Change{Path: p, Kind: want.kind, Clients: want.clients, Old: old}
	if pl.opts.Tracked != nil {
		ch.Tracked = pl.opts.Tracked(p)
	}
	problem := func(err error) {
		pl.Problems = append(pl.Problems, Problem{Path: p, Clients: want.clients, Err: err})
	}
	if want.kind == KindBlock && want.remove {
		out, had, err := block.Remove(old)
		switch {
		case err != nil:
			problem(err)
			return nil
		case !had:
			return nil
		case pl.rec.Files[p].Created && len(out) == 0:
			ch.Action = Delete
		default:
			ch.Action, ch.New = Update, out
		}
		ch.unblock = true
		pl.Changes = append(pl.Changes, ch)
		return nil
	}
	if want.kind == KindBlock {
		out, changed, err := block.Put(old, want.body)
		if err != nil {
			problem(err)
			return nil
		}
		sp, _ := block.Find(old)
		switch {
		case !changed:
			ch.Action = Unchanged
		case sp == nil:
			ch.Action = Create
			ch.created = !exists
		default:
			ch.Action = Update
		}
		ch.New = out
		pl.Changes = append(pl.Changes, ch)
		return nil
	}
	r, recorded := pl.rec.Files[p]
	ours := recorded && exists && (sum(old) == r.SHA256 || r.Prev != "" && sum(old) == r.Prev)
	if !recorded && exists && want.kind == KindRule && isGenerated(old) {
		// A rule ctx generated (a teammate committed it): ctx's whatever the record says.
		ours = true
	}
	switch {
	case want.data == nil && !exists: // gone already
		return nil
	case want.data == nil && ours:
		ch.Action = Delete
	case want.data == nil && recorded:
		problem(ErrHandEdited)
		return nil
	case want.data == nil:
		return nil // not ours: never touched
	case exists && bytes.Equal(old, want.data):
		ch.Action, ch.New = Unchanged, want.data
		ch.foreign = !ours && !recorded && want.kind == KindSkill
	case exists && ours:
		ch.Action, ch.New = Update, want.data
	case exists && recorded:
		problem(ErrHandEdited)
		return nil
	case exists:
		problem(ErrNotOurs)
		return nil
	default:
		// A skill's folder that exists without ctx's SKILL.md in it is the user's: ctx does not add to it.
		if want.kind == KindSkill && w.Exists(path.Dir(p)) && !recorded {
			problem(fmt.Errorf("the skill folder %s: %w", path.Dir(p), ErrNotOurs))
			return nil
		}
		ch.Action, ch.New = Create, want.data
	}
	pl.Changes = append(pl.Changes, ch)
	return nil
}

// Verb says in words what an export does to the file: "create", "update", "delete", "unchanged", and
// "add ctx's block to" / "take ctx's block out of" for an instruction file that is there already (its
// Action stays Create or Update).
func (c Change) Verb() string {
	switch {
	case c.Kind == KindBlock && c.Action == Create && c.Old != nil:
		return "add ctx's block to"
	case c.unblock && c.Action == Update:
		return "take ctx's block out of"
	}
	return string(c.Action)
}

// Pending returns the changes that write something (not Unchanged, not Skipped).
func (pl *Plan) Pending() []Change {
	var out []Change
	for _, c := range pl.Changes {
		if c.Action != Unchanged && !c.Skipped {
			out = append(out, c)
		}
	}
	return out
}

// Refresh marks the changes a refresh (after `ctx pull`, in the post-checkout and post-merge hooks)
// leaves alone: those of files git tracks, unless the Record says TrackedOK. They are reported by
// Status instead of dirtying the work tree.
func (pl *Plan) Refresh() {
	if pl.rec.TrackedOK {
		return
	}
	for i := range pl.Changes {
		if pl.Changes[i].Tracked && pl.Changes[i].Action != Unchanged {
			pl.Changes[i].Skipped = true
		}
	}
}

// Err joins the Problems (nil when there are none).
func (pl *Plan) Err() error {
	var errs []error
	for _, p := range pl.Problems {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// Diff renders the pending changes as a unified diff (a/ and b/ prefixes, /dev/null for a file created
// or deleted), for --dry-run.
func (pl *Plan) Diff() string {
	var b strings.Builder
	for _, c := range pl.Pending() {
		from, to := "a/"+c.Path, "b/"+c.Path
		if c.Old == nil {
			from = "/dev/null"
		}
		if c.New == nil {
			to = "/dev/null"
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: diffLines(c.Old), B: diffLines(c.New),
			FromFile: from, ToFile: to, Context: 3,
		})
		if err != nil {
			text = fmt.Sprintf("--- %s\n+++ %s\n(%v)\n", from, to, err)
		}
		b.WriteString(text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// diffLines splits b into the lines of a unified diff that `git apply` accepts: none for an empty or
// missing file (difflib.SplitLines gives one blank line, a malformed hunk), each line with its "\n", and a
// last line without one followed by git's "\ No newline at end of file" marker.
func diffLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	return lines
}

// Apply writes the pending changes (each file atomically; a Delete removes ctx's file and then its
// folder when empty) and records what it wrote. Files with Problems are left alone; Apply returns
// Plan.Err after writing the rest, so the caller reports them and fails. The exception is a symbolic link
// where ctx would write (wtfs.ErrLink): then Apply writes nothing at all and returns Plan.Err, since a link
// in the work tree where ctx's files go is the user's setup or a hostile checkout, not one file to skip.
// An I/O error stops Apply: the files written so far are recorded.
func (pl *Plan) Apply(ctx context.Context) error {
	for _, p := range pl.Problems {
		if errors.Is(p.Err, wtfs.ErrLink) {
			pl.Changes = slices.DeleteFunc(pl.Changes, func(c Change) bool { return c.Action != Unchanged })
			return pl.Err()
		}
	}
	w, err := wtfs.Open(pl.opts.Root)
	if err != nil {
		return err
	}
	defer w.Close()
	unlock, err := lockRecord(ctx, pl.opts)
	if err != nil {
		return err
	}
	defer unlock()
	// Under the lock: the record as it is now, and each file still as it was planned (another export,
	// a hook's refresh or the user may have written in between); a file that moved is left for the
	// next run.
	if pl.rec, err = ReadRecord(pl.opts); err != nil {
		return err
	}
	for i := range pl.Changes {
		c := &pl.Changes[i]
		if c.Action == Unchanged || c.Skipped {
			continue
		}
		now, err := w.ReadFile(c.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) || !bytes.Equal(now, c.Old) || (err == nil) != (c.Old != nil) {
			c.Skipped = true
			pl.Problems = append(pl.Problems, Problem{Path: c.Path, Clients: c.Clients, Err: ErrMoved})
		}
	}
	// The record learns what is about to be written first, so that a run killed half way leaves no
	// file of ctx's that the next run takes for the user's.
	journal := false
	for _, c := range pl.Pending() {
		if c.Kind != KindBlock && c.New != nil {
			r := pl.rec.Files[c.Path]
			if c.Old != nil {
				r.Prev = sum(c.Old)
			}
			r.SHA256 = sum(c.New)
			pl.rec.Files[c.Path] = r
			journal = true
		}
	}
	if journal {
		if err := pl.rec.save(pl.opts); err != nil {
			return err
		}
	}
	var ioErr error
	for _, c := range pl.Pending() {
		if ioErr = ctx.Err(); ioErr != nil {
			break
		}
		if c.New == nil {
			stop := path.Dir(c.Path)
			if c.Kind == KindSkill {
				stop = path.Dir(stop)
			}
			if ioErr = w.Remove(c.Path, stop); ioErr != nil {
				ioErr = fmt.Errorf("adapters: remove %s: %w", c.Path, ioErr)
				break
			}
			delete(pl.rec.Files, c.Path)
			continue
		}
		if ioErr = w.WriteFile(c.Path, c.New); ioErr != nil {
			ioErr = fmt.Errorf("adapters: write %s: %w", c.Path, ioErr)
			break
		}
		if c.unblock {
			delete(pl.rec.Files, c.Path)
			continue
		}
		r := pl.rec.Files[c.Path]
		if c.Kind == KindBlock {
			r.Created = r.Created || c.created
		} else {
			r.SHA256, r.Prev = sum(c.New), ""
		}
		pl.rec.Files[c.Path] = r
	}
	// Rules ctx generated that are already as it would write them (a teammate committed them) become
	// ctx's. Skills never do this way: a user's own skill folder may hold the branch's bytes (it was
	// imported from there), and ctx must never remove it.
	for _, c := range pl.Changes {
		if c.Action == Unchanged && c.Kind == KindRule {
			r := pl.rec.Files[c.Path]
			r.SHA256, r.Prev = sum(c.New), ""
			pl.rec.Files[c.Path] = r
		}
	}
	if err := pl.rec.save(pl.opts); err != nil && ioErr == nil {
		ioErr = err
	}
	if ioErr != nil {
		return ioErr
	}
	return pl.Err()
}

// isGenerated reports whether a Cursor rule file's body (after its front matter) starts with
// GeneratedMarker.
func isGenerated(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	if !bytes.HasPrefix(b, []byte("---")) {
		return false
	}
	_, rest, ok := bytes.Cut(b[3:], []byte("\n---"))
	if !ok {
		return false
	}
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[i+1:]
	}
	return bytes.HasPrefix(rest, []byte(GeneratedMarker))
}
