package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/merge"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Conflict records (docs/format.md "Conflicts", design §4 "a deterministic winner, and the losing
// version kept in a conflict record listed by `ctx conflicts` and MCP; `ctx resolve` picks or edits").
//
// A record on the branch is symmetric: it names the version kept in the file (the winner of merge's
// rule) and the one lost, never "ours" or "theirs", so that every machine that merges the same two sides
// writes the same record. ctx maps them to ours/theirs for the person on this machine (see oursTheirs).

// ConflictsDir is the folder of the conflict records.
const ConflictsDir = "conflicts"

// ConflictRecord is one open conflict, as read from conflicts/<id>.json, with what the user needs to
// settle it.
type ConflictRecord struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Field string `json:"field"`
	// Base, Kept and Lost are whole-file contents (merge.Conflict). BaseAbsent is set when the path did not
	// exist at the merge base (the record's "base": null).
	Base       string `json:"base"`
	BaseAbsent bool   `json:"base_absent,omitempty"`
	Kept       string `json:"kept"`
	Lost       string `json:"lost"`
	Rule       string `json:"rule"`
	// Diff is the unified diff kept → lost (UnifiedDiff, go-diff line mode, 3 lines of context).
	Diff string `json:"diff"`
	// Ours and Theirs are Kept and Lost mapped to the two sides of the merge that made the record, as seen
	// from this machine (oursTheirs).
	Ours   string `json:"ours"`
	Theirs string `json:"theirs"`
	// OursIs says which of "kept" or "lost" Ours is.
	OursIs string `json:"ours_is"`
}

// ParseConflictRecord decodes a conflicts/<id>.json file (merge.ParseRecord, the inverse of
// merge.Conflict.Record). It fills neither Diff nor Ours/Theirs.
func ParseConflictRecord(b []byte) (ConflictRecord, error) {
	c, err := merge.ParseRecord(b)
	if err != nil {
		return ConflictRecord{}, err
	}
	return ConflictRecord{ID: c.ID, Path: c.Path, Field: c.Field, Rule: c.Rule, BaseAbsent: c.Base == nil,
		Base: string(c.Base), Kept: string(c.Kept), Lost: string(c.Lost)}, nil
}

// readConflicts reads every record of conflicts/ in v, without the ours/theirs mapping, sorted by path
// then id.
func (s *Store) readConflicts(ctx context.Context, v *View) ([]ConflictRecord, error) {
	names, err := v.List(ctx, ConflictsDir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", ConflictsDir, err)
	}
	var out []ConflictRecord
	for _, n := range names {
		if n.Dir || !strings.HasSuffix(n.Name, ".json") {
			continue
		}
		p := ConflictsDir + "/" + n.Name
		b, err := v.ReadIn(ctx, n.Scope, p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		r, err := ParseConflictRecord(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		r.Diff = UnifiedDiff(r.Kept, r.Lost, 3)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ListConflicts lists the open conflicts of the view (every conflicts/<id>.json), sorted by path then id,
// with the unified diff kept → lost and the ours/theirs mapping of this machine (oursTheirs).
func (s *Store) ListConflicts(ctx context.Context, v *View) ([]ConflictRecord, error) {
	recs, err := s.readConflicts(ctx, v)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if err := s.oursTheirs(ctx, &recs[i]); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// GetConflict finds one open conflict by its id, its record path (conflicts/<id>.json) or the store path
// it is about (knowledge/x.md). A missing one is a *NotFoundError ("Conflict 'x' not found"); a store path
// with several open conflicts is an error listing their ids (pass one of them).
func (s *Store) GetConflict(ctx context.Context, v *View, idOrPath string) (ConflictRecord, error) {
	recs, err := s.readConflicts(ctx, v)
	if err != nil {
		return ConflictRecord{}, err
	}
	r, err := pickConflict(recs, idOrPath)
	if err != nil {
		return ConflictRecord{}, err
	}
	if err := s.oursTheirs(ctx, &r); err != nil {
		return ConflictRecord{}, err
	}
	return r, nil
}

func pickConflict(recs []ConflictRecord, idOrPath string) (ConflictRecord, error) {
	key := strings.Trim(idOrPath, "/")
	key = strings.TrimPrefix(key, CheckoutDir+"/")
	id := strings.TrimSuffix(strings.TrimPrefix(key, ConflictsDir+"/"), ".json")
	for _, r := range recs {
		if r.ID == id {
			return r, nil
		}
	}
	var byPath []ConflictRecord
	for _, r := range recs {
		if r.Path == key {
			byPath = append(byPath, r)
		}
	}
	switch len(byPath) {
	case 0:
		return ConflictRecord{}, &NotFoundError{Msg: fmt.Sprintf("Conflict '%s' not found", idOrPath)}
	case 1:
		return byPath[0], nil
	}
	ids := make([]string, len(byPath))
	for i, r := range byPath {
		ids[i] = r.ID
	}
	return ConflictRecord{}, fmt.Errorf("%s has %d open conflicts (%s): pass one id", key, len(byPath), strings.Join(ids, ", "))
}

// ResolveConflict settles one open conflict: it writes the chosen content to the conflict's path and
// deletes conflicts/<id>.json in one commit on the public branch (docs/format.md "Conflicts": "ctx
// resolve settles one by writing the chosen content and deleting the record in one commit"; trailer
// Ctx-Op: conflict.resolve). choice is "kept" or "lost" (the record's versions), "ours" or "theirs" (the
// same mapped to this machine, oursTheirs), or "file" (content, e.g. a hand-merged version).
func (s *Store) ResolveConflict(ctx context.Context, idOrPath, choice string, content []byte) (ConflictRecord, *Committed, error) {
	v, err := s.RefView(ctx)
	if err != nil {
		return ConflictRecord{}, nil, err
	}
	rec, err := s.GetConflict(ctx, v, idOrPath)
	if err != nil {
		return ConflictRecord{}, nil, err
	}
	var data []byte
	switch choice {
	case "kept":
		data = []byte(rec.Kept)
	case "lost":
		data = []byte(rec.Lost)
	case "ours":
		data = []byte(rec.Ours)
	case "theirs":
		data = []byte(rec.Theirs)
	case "file":
		if content == nil {
			return rec, nil, errors.New("resolve: choice \"file\" needs the content")
		}
		data = content
	default:
		return rec, nil, fmt.Errorf("resolve: invalid choice %q: use ours, theirs, kept, lost or file", choice)
	}
	if err := checkPath(rec.Path); err != nil {
		return rec, nil, err
	}
	if err := ValidText("resolution of "+rec.Path, string(data)); err != nil {
		return rec, nil, err
	}
	recPath := ConflictsDir + "/" + rec.ID + ".json"
	op := Op{Name: "conflict.resolve", Key: rec.Path, Summary: fmt.Sprintf("resolve conflict %s of %s (%s)", rec.ID, rec.Path, choice),
		Extra: [][2]string{{"Ctx-Conflict", rec.ID}}}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		if _, err := v.ReadIn(ctx, Public, recPath); errors.Is(err, fs.ErrNotExist) {
			return nil, &NotFoundError{Msg: fmt.Sprintf("Conflict '%s' not found", rec.ID)}
		} else if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(Public, rec.Path, data)
		ed.Del(Public, recPath)
		return ed, nil
	})
	if err != nil {
		return rec, nil, fmt.Errorf("resolve conflict %s: %w", rec.ID, err)
	}
	return rec, c, nil
}

// oursTheirs fills r.Ours, r.Theirs and r.OursIs. The record is symmetric (kept/lost), so the sides are
// recovered from history: the commit that added conflicts/<id>.json on this machine's branch (the oldest
// first-parent commit that changed that path, gitstore.Repo.Log) is the merge that made it; its first
// parent's version of Path is "ours before the merge", its second parent's "theirs". Ours is whichever of
// Kept and Lost is closer to ours-before-merge by go-diff line distance (lineDistance); ties → Kept;
// Theirs is the other. Kept and Lost differ only in the conflicting fields or regions, where one holds
// ours' value and the other theirs', so the closer one is ours'. When the merge commit cannot be found
// (the record was written by hand, or the first parent lacks the path) Ours is Kept.
//
// The first parent is the side of whoever made the merge commit: for a merge made on another machine and
// fast-forwarded here, "ours" is that machine's side.
func (s *Store) oursTheirs(ctx context.Context, r *ConflictRecord) error {
	r.Ours, r.Theirs, r.OursIs = r.Kept, r.Lost, "kept"
	ours, ok, err := s.oursBeforeMerge(ctx, r.ID, r.Path)
	if err != nil || !ok {
		return err
	}
	if closerToOurs(ours, []byte(r.Kept), []byte(r.Lost)) {
		return nil
	}
	r.Ours, r.Theirs, r.OursIs = r.Lost, r.Kept, "lost"
	return nil
}

// oursBeforeMerge returns the first parent's version of path at the merge that added record id.
func (s *Store) oursBeforeMerge(ctx context.Context, id, path string) ([]byte, bool, error) {
	tip, err := s.Repo.Resolve(ctx, s.BranchRef())
	if err != nil || tip.IsZero() {
		return nil, false, err
	}
	commits, err := s.Repo.Log(ctx, tip, 0, ConflictsDir+"/"+id+".json")
	if err != nil {
		return nil, false, fmt.Errorf("find the merge of conflict %s: %w", id, err)
	}
	if len(commits) == 0 {
		return nil, false, nil
	}
	mc := commits[len(commits)-1]
	if len(mc.ParentHashes) < 2 {
		return nil, false, nil
	}
	b, ok, err := s.fileAt(ctx, mc.ParentHashes[0], path)
	return b, ok, err
}

// fileAt reads path at commit c; ok is false when the path does not exist there.
func (s *Store) fileAt(ctx context.Context, c plumbing.Hash, path string) ([]byte, bool, error) {
	t, err := s.Repo.TreeOf(ctx, c)
	if err != nil {
		return nil, false, err
	}
	v := NewView(&RefReader{Repo: s.Repo, Trees: map[Scope]plumbing.Hash{Public: t}})
	b, err := v.ReadIn(ctx, Public, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// closerToOurs reports whether kept is at least as close to ours as lost (go-diff line distance).
func closerToOurs(ours, kept, lost []byte) bool {
	return lineDistance(string(ours), string(kept)) <= lineDistance(string(ours), string(lost))
}

// lineDistance is go-diff's Levenshtein distance of a line-mode diff of a and b: the size of the lines
// inserted or deleted (diffmatchpatch DiffLinesToRunes, DiffMainRunes, DiffCharsToLines).
func lineDistance(a, b string) int {
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	return dmp.DiffLevenshtein(dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines))
}

// Strategy decides every conflict of one pull at once (`ctx pull --strategy`), in the merge commit itself.
type Strategy string

// The strategies: "" keeps merge's deterministic winner and records the loser (design §4).
const (
	StrategyRecord Strategy = ""
	StrategyOurs   Strategy = "ours"
	StrategyTheirs Strategy = "theirs"
)

// ParseStrategy validates a --strategy value.
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case StrategyRecord, StrategyOurs, StrategyTheirs:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("invalid strategy %q: use ours or theirs", s)
}

// applyStrategy decides the conflicts of m by st: for each one, the chosen side's version (Kept or Lost,
// whichever is closer to ours-before-merge for "ours", the other for "theirs"; see oursTheirs) goes in
// the file and no record is written. It returns the decided conflicts; m.Conflicts is emptied.
func applyStrategy(m *merge.Result, st Strategy, ours map[string][]byte) []merge.Conflict {
	if st == StrategyRecord || len(m.Conflicts) == 0 {
		return nil
	}
	decided := m.Conflicts
	for _, c := range decided {
		if _, had := ours[c.RecordPath()]; !had {
			delete(m.Files, c.RecordPath())
		}
		keptIsOurs := true
		if o, ok := ours[c.Path]; ok {
			keptIsOurs = closerToOurs(o, c.Kept, c.Lost)
		}
		if keptIsOurs == (st == StrategyOurs) {
			m.Files[c.Path] = c.Kept
		} else {
			m.Files[c.Path] = c.Lost
		}
	}
	m.Conflicts = nil
	return decided
}
