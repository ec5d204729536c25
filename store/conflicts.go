package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/gitstore"

	"github.com/ctx-dev/ctx/merge"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Conflict records (docs/format.md "Conflicts", docs/merge.md "a deterministic winner, and the losing
// version kept in a conflict record listed by `ctx conflicts` and MCP; `ctx resolve` picks or edits").
//
// A record on the branch is symmetric: it names the version kept in the file (the winner of merge's
// rule) and the one lost, never "ours" or "theirs", so that every machine that merges the same two sides
// writes the same record. It also names who wrote each version (kept_by, lost_by: the author, machine and
// agent of the last commit that changed the path on that side). ctx maps kept/lost to ours/theirs for the
// person on the machine that reads or resolves the conflict (see oursTheirs and docs/format.md
// "Conflicts": ours is your version, whoever made the merge).

// ConflictSide names the writer of one version of a conflict (merge.Side: author, machine, agent, commit).
type ConflictSide = merge.Side

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
	// LostDeleted: the lost version is the deletion of the file (deleted on one side, changed on the
	// other); Lost is "" then and resolving in its favour deletes Path.
	LostDeleted bool   `json:"lost_deleted,omitempty"`
	Rule        string `json:"rule"`
	// KeptBy and LostBy name who wrote each version, when the merge knew (records written before ctx
	// recorded them have neither).
	KeptBy *merge.Side `json:"kept_by,omitempty"`
	LostBy *merge.Side `json:"lost_by,omitempty"`
	// Diff is the unified diff kept → lost (UnifiedDiff, go-diff line mode, 3 lines of context).
	Diff string `json:"diff"`
	// Ours and Theirs are Kept and Lost mapped to the user of this machine (oursTheirs): Ours is the
	// version this user (on this machine) wrote, Theirs the other one. OursDeleted/TheirsDeleted say that
	// the version is the file's deletion.
	Ours          string      `json:"ours"`
	Theirs        string      `json:"theirs"`
	OursDeleted   bool        `json:"ours_deleted,omitempty"`
	TheirsDeleted bool        `json:"theirs_deleted,omitempty"`
	OursBy        *merge.Side `json:"ours_by,omitempty"`
	TheirsBy      *merge.Side `json:"theirs_by,omitempty"`
	// OursIs says which of "kept" or "lost" Ours is; OursFrom how that was decided: "author" (the
	// version's author has this user's email), "machine" (written on this machine, CTX_MACHINE or the
	// host name), "merge" (no writer matched: this machine's side of the merge commit that made the
	// record), or "unknown" (Ours is Kept).
	OursIs   string `json:"ours_is"`
	OursFrom string `json:"ours_from"`
	// Changed says the file no longer holds Kept: it was written since the conflict was recorded (a
	// later write, or another conflict on the same path). Taking a recorded version would undo that, so
	// ResolveConflict refuses to unless the choice is "file" or "current" (ErrConflictChanged).
	Changed bool `json:"changed,omitempty"`
}

// ErrConflictChanged is matched by the error of ResolveConflict when the conflict's file was written
// since the conflict was recorded and the choice is a recorded version (ours, theirs, kept, lost).
var ErrConflictChanged = errors.New("the file changed since the conflict was recorded")

// ParseConflictRecord decodes a conflicts/<id>.json file (merge.ParseRecord, the inverse of
// merge.Conflict.Record). It fills neither Diff nor Ours/Theirs.
func ParseConflictRecord(b []byte) (ConflictRecord, error) {
	c, err := merge.ParseRecord(b)
	if err != nil {
		return ConflictRecord{}, err
	}
	r := ConflictRecord{ID: c.ID, Path: c.Path, Field: c.Field, Rule: c.Rule, BaseAbsent: c.Base == nil,
		Base: string(c.Base), Kept: string(c.Kept), Lost: string(c.Lost), LostDeleted: c.LostDeleted}
	if !c.KeptBy.IsZero() {
		k := c.KeptBy
		r.KeptBy = &k
	}
	if !c.LostBy.IsZero() {
		l := c.LostBy
		r.LostBy = &l
	}
	return r, nil
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
		if conflictRecordProblem(n.Name, b) != "" {
			continue // ctx doctor reports it, --fix removes it (checkTree)
		}
		r, err := ParseConflictRecord(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		r.Diff = UnifiedDiff(r.Kept, r.Lost, 3)
		// (A path that cannot be read otherwise is left unmarked: ResolveConflict reports its error.)
		if cur, err := v.ReadIn(ctx, Public, r.Path); errors.Is(err, fs.ErrNotExist) {
			r.Changed = true
		} else if err == nil {
			r.Changed = string(cur) != r.Kept
		}
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

// GetConflict finds one open conflict by its id, a unique prefix of it (at least 4 hex digits), its record
// path (conflicts/<id>.json) or the store path it is about (knowledge/x.md); an ambiguous prefix is an
// error listing the ids. A missing one is a *NotFoundError ("Conflict 'x' not found"); a store path
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
		return conflictByPrefix(recs, idOrPath, id)
	case 1:
		return byPath[0], nil
	}
	ids := make([]string, len(byPath))
	for i, r := range byPath {
		ids[i] = r.ID
	}
	return ConflictRecord{}, invalidf("%s has %d open conflicts (%s): pass one id", key, len(byPath), strings.Join(ids, ", "))
}

// conflictByPrefix finds the one open conflict whose id starts with prefix, as git takes an abbreviated
// object name: at least minIDPrefix hex digits. Several: an error listing their ids; none (or not such a
// prefix): a *NotFoundError naming arg.
func conflictByPrefix(recs []ConflictRecord, arg, prefix string) (ConflictRecord, error) {
	notFound := &NotFoundError{Msg: fmt.Sprintf("Conflict '%s' not found", arg)}
	if len(prefix) < minIDPrefix || strings.Trim(strings.ToLower(prefix), "0123456789abcdef") != "" {
		return ConflictRecord{}, notFound
	}
	var ids []string
	var found ConflictRecord
	for _, r := range recs {
		if strings.HasPrefix(r.ID, strings.ToLower(prefix)) {
			ids, found = append(ids, r.ID), r
		}
	}
	switch len(ids) {
	case 0:
		return ConflictRecord{}, notFound
	case 1:
		return found, nil
	}
	return ConflictRecord{}, invalidf("conflict id %s is ambiguous: %d open conflicts start with it (%s): pass more of the id", prefix, len(ids), strings.Join(ids, ", "))
}

// minIDPrefix is the shortest abbreviated conflict id ctx takes (git's core.abbrev minimum).
const minIDPrefix = 4

// ResolveConflict settles one open conflict: it writes the chosen content to the conflict's path (or
// deletes the path, when the chosen version is a delete) and deletes conflicts/<id>.json in one commit on
// the public branch (docs/format.md "Conflicts": "ctx resolve settles one by writing the chosen content and
// deleting the record in one commit"; trailer Ctx-Op: conflict.resolve). choice is "kept" or "lost" (the
// record's versions), "ours" or "theirs" (the same mapped to the user of this machine, oursTheirs), or
// "file" (content, e.g. a hand-merged version: see resolvedContent for the metadata it keeps).
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
	del := false
	switch choice {
	case "kept":
		data = []byte(rec.Kept)
	case "lost":
		data, del = []byte(rec.Lost), rec.LostDeleted
	case "ours":
		data, del = []byte(rec.Ours), rec.OursDeleted
	case "theirs":
		data, del = []byte(rec.Theirs), rec.TheirsDeleted
	case "current":
		// Close the record and keep the file as it is now (written since the conflict, or settled by hand).
	case "file":
		if content == nil {
			return rec, nil, errors.New("resolve: choice \"file\" needs the content")
		}
		if data, err = s.resolvedContent(ctx, rec, content); err != nil {
			return rec, nil, err
		}
	default:
		return rec, nil, fmt.Errorf("resolve: invalid choice %q: use ours, theirs, kept, lost, file or current", choice)
	}
	if err := checkPath(rec.Path); err != nil {
		return rec, nil, err
	}
	if !del && choice != "file" && choice != "current" {
		// The resolution is a write of the resolver's, even when it keeps what the file holds: the entry
		// names them and the time, so a teammate's opposite resolution of the same conflict (a delete, say)
		// meets a change and conflicts again instead of winning silently.
		if data, err = s.stampResolution(ctx, rec.Path, data); err != nil {
			return rec, nil, err
		}
	}
	if !del && choice != "current" {
		if err := ValidText("resolution of "+rec.Path, string(data)); err != nil {
			return rec, nil, err
		}
		// An entry holds text, as every write of one requires (SetEntry, the hand-edit rules).
		if i, key, ok := keyedPathOf(rec.Path); ok && keyedFolders[i].suffix != "" {
			if _, body := ReadFrontMatter(data); strings.TrimSpace(string(body)) == "" {
				return rec, nil, invalidf("resolve conflict %s: the content for %s is empty: an entry holds text (to remove the entry: resolve with the side that deleted it, or ctx %s rm %s after resolving)",
					rec.ID, rec.Path, keyedFolders[i].what, key)
			}
		}
		if err := ValidateFile(rec.Path, data); err != nil {
			return rec, nil, fmt.Errorf("resolve conflict %s: %w", rec.ID, err)
		}
		// A conflict is on the public branch: a resolution whose front matter says another scope would put
		// a file labelled private there, which every later hand edit of it then trips on (scopeEdited).
		if why := scopeEdited(rec.Path, Public, data); why != "" {
			return rec, nil, invalidf("resolve conflict %s: %s", rec.ID, why)
		}
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
		cur, err := v.ReadIn(ctx, Public, rec.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		exists := err == nil
		changed := !exists || string(cur) != rec.Kept
		if changed && choice != "file" && choice != "current" && !(del && !exists) && !(!del && exists && bytes.Equal(cur, data)) {
			return nil, &invalidError{wrapped: ErrConflictChanged, msg: fmt.Sprintf(
				"%s changed since conflict %s was recorded (a later write, or another conflict on it): taking the %s version would undo that. "+
					"Look at both (ctx conflicts %s --full, and the file now), then settle it with --file F (your merge) or --current (keep the file as it is)",
				rec.Path, rec.ID, choice, rec.ID)}
		}
		if choice == "current" {
			ed.Del(Public, recPath)
			return ed, nil
		}
		if !del && strings.HasPrefix(rec.Path, "decisions/") {
			if err := resolutionCycle(ctx, v, rec, choice, data); err != nil {
				return nil, err
			}
		}
		if del {
			if exists {
				ed.Del(Public, rec.Path)
			}
		} else {
			ed.Put(Public, rec.Path, data)
		}
		ed.Del(Public, recPath)
		return ed, nil
	})
	if err != nil {
		return rec, nil, fmt.Errorf("resolve conflict %s: %w", rec.ID, err)
	}
	return rec, c, nil
}

// resolutionCycle refuses a resolution that writes data to the decision rec.Path when it closes a cycle of
// superseded_by with the decisions of v (docs/merge.md "Supersede cycles": ctx decision supersede refuses
// the same), naming the decisions and the ways out.
func resolutionCycle(ctx context.Context, v *View, rec ConflictRecord, choice string, data []byte) error {
	all, err := v.ListDecisions(ctx)
	if err != nil {
		return err
	}
	var held []Decision
	for _, d := range all {
		if d.Path != rec.Path {
			held = append(held, d)
		}
	}
	problems := supersedeCycles(held, []Decision{ParseDecision(strings.TrimPrefix(rec.Path, "decisions/"), Public, data)})
	if len(problems) == 0 {
		return nil
	}
	return invalidf("resolve conflict %s: the %s version would write a supersede cycle, which ctx decision supersede refuses: %s. "+
		"Keep the version without it (the other side), or write your own with --file F (status accepted, no superseded_by)",
		rec.ID, choice, strings.Join(problems, "; "))
}

// resolvedContent is the file `ctx resolve --file` writes for content. The entry keeps its metadata:
//   - markdown with front matter (knowledge, conventions, decisions, SKILL.md): when content has no front
//     matter it is the new body under the kept version's front matter; when it has one, keys it lacks are
//     taken from the kept version. Then the resolver is recorded as the writer of the new version: author
//     (git's identity), agent and updated_at are set when the kept version has them.
//   - JSON records (state.json, manifest.json, ...): content must be a JSON object; top-level fields it
//     lacks are taken from the kept version, and updated_at, last_agent and last_machine are set to the
//     resolver's when the kept version has them.
//
// Anything else, or a kept version that is a delete or does not parse, is written as given.
func (s *Store) resolvedContent(ctx context.Context, rec ConflictRecord, content []byte) ([]byte, error) {
	kept := []byte(rec.Kept)
	if strings.HasSuffix(rec.Path, ".md") {
		kfm, _, ok := SplitFrontMatter(kept)
		if !ok {
			return content, nil
		}
		km, err := ParseMeta(kfm)
		if err != nil {
			return content, nil
		}
		m, body := km, content
		if fm, b, ok := SplitFrontMatter(content); ok {
			nm, err := ParseMeta(fm)
			if err != nil {
				return nil, invalidf("resolve %s: the front matter of the given content: %v", rec.Path, err)
			}
			for _, k := range km.Keys() {
				if !nm.Has(k) {
					var v any
					km.Decode(k, &v)
					nm.Set(k, v)
				}
			}
			m, body = nm, b
		}
		if err := s.stampMeta(ctx, m, km.Has); err != nil {
			return nil, err
		}
		return JoinFrontMatter(m, body), nil
	}
	if strings.HasSuffix(rec.Path, ".json") {
		var k, n map[string]json.RawMessage
		if json.Unmarshal(kept, &k) != nil || k == nil {
			return content, nil
		}
		if err := json.Unmarshal(content, &n); err != nil || n == nil {
			return nil, invalidf("resolve %s: the given content is not a JSON object", rec.Path)
		}
		for key, v := range k {
			if _, ok := n[key]; !ok {
				n[key] = v
			}
		}
		s.stampJSON(n, func(key string) bool { _, ok := k[key]; return ok })
		// Keep the kept version's key order, then new keys in the given content's order.
		return orderedJSON(kept, content, n)
	}
	return content, nil
}

// stampResolution names the resolver as the writer of data, the version a resolution writes to path: a
// markdown entry's front matter gets the resolver's author, agent and updated_at (those keys it has); a
// JSON record its updated_at, last_agent and last_machine (those it has). Anything else, or a version
// without updated_at, is returned as it is.
func (s *Store) stampResolution(ctx context.Context, path string, data []byte) ([]byte, error) {
	if strings.HasSuffix(path, ".md") {
		fm, body, ok := SplitFrontMatter(data)
		if !ok {
			return data, nil
		}
		m, err := ParseMeta(fm)
		if err != nil || !m.Has("updated_at") {
			return data, nil
		}
		if err := s.stampMeta(ctx, m, m.Has); err != nil {
			return nil, err
		}
		return JoinFrontMatter(m, body), nil
	}
	if strings.HasSuffix(path, ".json") {
		var n map[string]json.RawMessage
		if json.Unmarshal(data, &n) != nil || n == nil {
			return data, nil
		}
		if _, ok := n["updated_at"]; !ok {
			return data, nil
		}
		s.stampJSON(n, func(key string) bool { _, ok := n[key]; return ok })
		return orderedJSON(data, data, n)
	}
	return data, nil
}

// stampMeta names this store's writer as the writer of a new version in front matter m: author (git's
// identity), agent and updated_at (now). With has nil every one is set; else only the keys has reports,
// and agent only when the store has one. Used by hand edits (ctx commit) and resolutions.
func (s *Store) stampMeta(ctx context.Context, m *Meta, has func(key string) bool) error {
	if has == nil || has("author") {
		id, err := s.repo.Identity(ctx)
		if err != nil {
			return err
		}
		m.Set("author", id.Name+" <"+id.Email+">")
	}
	if has == nil || has("agent") && s.Actor.Agent != "" {
		m.Set("agent", s.Actor.Agent)
	}
	if has == nil || has("updated_at") {
		m.Set("updated_at", now())
	}
	return nil
}

// stampJSON names this store's writer in the JSON record n: updated_at (now), last_agent and
// last_machine (when the store has them), each only where has reports the key.
func (s *Store) stampJSON(n map[string]json.RawMessage, has func(key string) bool) {
	set := func(key string, v any) {
		if has(key) {
			b, _ := json.Marshal(v)
			n[key] = b
		}
	}
	set("updated_at", now())
	if s.Actor.Agent != "" {
		set("last_agent", s.Actor.Agent)
	}
	if s.Actor.Machine != "" {
		set("last_machine", s.Actor.Machine)
	}
}

// orderedJSON renders the object n with the key order of first, then the keys only second has in
// second's order: two-space indented with a final newline (docs/format.md "JSON records").
func orderedJSON(first, second []byte, n map[string]json.RawMessage) ([]byte, error) {
	var keys []string
	seen := map[string]bool{}
	for _, src := range [][]byte{first, second} {
		dec := json.NewDecoder(strings.NewReader(string(src)))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			continue
		}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				break
			}
			k, _ := t.(string)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
			if _, ok := n[k]; ok && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteString(":")
		b.Write(n[k])
	}
	b.WriteString("}")
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(b.String()), "", "  "); err != nil {
		return nil, invalidf("resolve: %v", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// oursTheirs fills r.Ours, r.Theirs (and their Deleted and By fields), r.OursIs and r.OursFrom, as seen by
// the user of this machine, whoever made the merge (docs/format.md "Conflicts"):
//  1. when the record names both writers (kept_by, lost_by) and exactly one of them has this user's email
//     (git's identity), that version is ours ("author");
//  2. else, when exactly one was written on this machine (Ctx-Machine, the store's machine name), that
//     one ("machine");
//  3. else (an old record, or both or neither side by this user on this machine) the history decides: the
//     commit that added conflicts/<id>.json is the merge that made it, and ours is whichever of Kept and
//     Lost is closer to its first parent's version of Path by go-diff line distance ("merge"; ties →
//     Kept). When that merge cannot be found Ours is Kept ("unknown").
func (s *Store) oursTheirs(ctx context.Context, r *ConflictRecord) error {
	set := func(keptIsOurs bool, from string) {
		r.OursFrom = from
		if keptIsOurs {
			r.Ours, r.Theirs, r.OursIs, r.OursBy, r.TheirsBy = r.Kept, r.Lost, "kept", r.KeptBy, r.LostBy
			r.OursDeleted, r.TheirsDeleted = false, r.LostDeleted
			return
		}
		r.Ours, r.Theirs, r.OursIs, r.OursBy, r.TheirsBy = r.Lost, r.Kept, "lost", r.LostBy, r.KeptBy
		r.OursDeleted, r.TheirsDeleted = r.LostDeleted, false
	}
	if r.KeptBy != nil && r.LostBy != nil {
		if id, err := s.repo.Identity(ctx); err == nil && id.Email != "" {
			k, l := sameEmail(r.KeptBy.Author, id.Email), sameEmail(r.LostBy.Author, id.Email)
			if k != l {
				set(k, "author")
				return nil
			}
		}
		if m := s.Actor.Machine; m != "" {
			k, l := r.KeptBy.Machine == m, r.LostBy.Machine == m
			if k != l {
				set(k, "machine")
				return nil
			}
		}
	}
	set(true, "unknown")
	ours, ok, found, err := s.oursBeforeMerge(ctx, r.ID, r.Path)
	if err != nil || !found {
		return err
	}
	// The first parent without the file: a lost delete is ours (we deleted it, or deleted the path a
	// teammate renamed it from); otherwise it says nothing of which version is ours.
	if !ok && !r.LostDeleted {
		return nil
	}
	set(keptIsOurs(r.Kept, r.Lost, r.LostDeleted, ours, ok), "merge")
	return nil
}

// sameEmail reports whether the author "Name <email>" has the email (case-insensitive, as git's mailmap
// compares).
func sameEmail(author, email string) bool {
	i, j := strings.LastIndexByte(author, '<'), strings.LastIndexByte(author, '>')
	if i < 0 || j < i {
		return false
	}
	return strings.EqualFold(strings.TrimSpace(author[i+1:j]), strings.TrimSpace(email))
}

// keptIsOurs decides whether the kept version of a conflict is ours, given ours' version of the path
// (oursHas false: ours has no file there). A delete lost against an edit: the kept edit is ours when ours
// has the file. Otherwise Kept and Lost differ only in the conflicting fields or regions, where one holds
// ours' value and the other theirs', so the one closer to ours (go-diff line distance; ties → Kept) is
// ours'.
func keptIsOurs(kept, lost string, lostDeleted bool, ours []byte, oursHas bool) bool {
	if lostDeleted {
		return oursHas
	}
	if !oursHas {
		return false
	}
	return closerToOurs(ours, []byte(kept), []byte(lost))
}

// oursBeforeMerge returns the first parent's version of path at the merge that added record id; found is
// false when there is no such merge, ok false when the first parent has no file there.
func (s *Store) oursBeforeMerge(ctx context.Context, id, path string) (b []byte, ok, found bool, err error) {
	tip, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil || tip.IsZero() {
		return nil, false, false, err
	}
	commits, err := s.repo.Log(ctx, tip, 0, ConflictsDir+"/"+id+".json")
	if err != nil {
		return nil, false, false, fmt.Errorf("find the merge of conflict %s: %w", id, err)
	}
	if len(commits) == 0 {
		return nil, false, false, nil
	}
	mc := commits[len(commits)-1]
	if len(mc.ParentHashes) < 2 {
		return nil, false, false, nil
	}
	b, ok, err = s.fileAt(ctx, mc.ParentHashes[0], path)
	return b, ok, err == nil, err
}

// fileAt reads path at commit c; ok is false when the path does not exist there.
func (s *Store) fileAt(ctx context.Context, c gitstore.Hash, path string) ([]byte, bool, error) {
	t, err := s.repo.TreeOf(ctx, c)
	if err != nil {
		return nil, false, err
	}
	v := NewView(&RefReader{repo: s.repo, Trees: map[Scope]gitstore.Hash{Public: t}})
	b, err := v.ReadIn(ctx, Public, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// maxWriterWalk bounds the commits lastWriters reads per side.
const maxWriterWalk = 10_000

// lastWriters names the writer of each path's version at tip: the commit that made that version, found
// as git log's history simplification finds it (git-log(1) "History Simplification"): from tip, a commit
// whose version of the path (its blob, or its absence) is the same as one of its parents' did not write it,
// and the trace follows that parent (the first such); the first commit whose version differs from every
// parent's (or that has none) wrote it. So the text a teammate wrote is credited to the teammate's commit,
// not to the merge that brought it to this side (docs/merge.md "Conflicts"). A trace that reaches base
// stops there, unnamed. Paths are traced together while they pass the same commits; a path whose trace
// does not end within maxWriterWalk commits is absent from the result.
func (s *Store) lastWriters(ctx context.Context, tip, base gitstore.Hash, paths map[string]bool) (map[string]merge.Side, error) {
	out := map[string]merge.Side{}
	if tip.IsZero() || len(paths) == 0 {
		return out, nil
	}
	// at: the commits the traces have reached, each with the paths traced to it and their blob there.
	type traced map[string]gitstore.Hash
	at := map[gitstore.Hash]traced{}
	commits := map[gitstore.Hash]*gitstore.Commit{}
	first := traced{}
	tipTree, err := s.repo.TreeOf(ctx, tip)
	if err != nil {
		return nil, err
	}
	for p := range paths {
		if first[p], err = s.repo.PathHash(ctx, tipTree, p); err != nil {
			return nil, err
		}
	}
	at[tip] = first
	for visits := 0; len(at) > 0 && visits < maxWriterWalk; visits++ {
		// The newest commit reached first (by committer time, then hash: the same order on every machine), so
		// that traces that meet again pass their common commits once.
		var h gitstore.Hash
		var c *gitstore.Commit
		for k := range at {
			ck := commits[k]
			if ck == nil {
				if ck, err = s.repo.Commit(ctx, k); err != nil {
					return nil, err
				}
				commits[k] = ck
			}
			if c == nil || ck.Committer.When.After(c.Committer.When) ||
				ck.Committer.When.Equal(c.Committer.When) && k.String() > h.String() {
				h, c = k, ck
			}
		}
		ps := at[h]
		delete(at, h)
		if h == base {
			continue
		}
		for _, parent := range c.ParentHashes {
			if len(ps) == 0 {
				break
			}
			ptree, err := s.repo.TreeOf(ctx, parent)
			if err != nil {
				return nil, err
			}
			for p, blob := range ps {
				pb, err := s.repo.PathHash(ctx, ptree, p)
				if err != nil {
					return nil, err
				}
				if pb == blob {
					if at[parent] == nil {
						at[parent] = traced{}
					}
					at[parent][p] = blob
					delete(ps, p)
				}
			}
		}
		if len(ps) == 0 {
			continue
		}
		t := Trailers(c.Message)
		side := merge.Side{Author: c.Author.Name + " <" + c.Author.Email + ">", Machine: t["Ctx-Machine"],
			Agent: t["Ctx-Agent"], Commit: c.Hash.String()}
		for p, blob := range ps {
			if blob.IsZero() && len(c.ParentHashes) == 0 {
				continue // never there on this side
			}
			out[p] = side
		}
	}
	return out, nil
}

// nameSides fills KeptBy and LostBy of each conflict of m (merging ours and theirs with the given merge
// base; of and tf are the files of each side) and rewrites its record in m.Files.
func (s *Store) nameSides(ctx context.Context, m *merge.Result, ours, theirs, base gitstore.Hash, of, tf map[string][]byte) error {
	if len(m.Conflicts) == 0 {
		return nil
	}
	paths := map[string]bool{}
	for _, c := range m.Conflicts {
		paths[c.Path] = true
		if c.RenamedFrom != "" {
			paths[c.RenamedFrom] = true
		}
	}
	ow, err := s.lastWriters(ctx, ours, base, paths)
	if err != nil {
		return err
	}
	tw, err := s.lastWriters(ctx, theirs, base, paths)
	if err != nil {
		return err
	}
	for i := range m.Conflicts {
		c := &m.Conflicts[i]
		// The lost version of a rename against a delete is the delete of the path the file was renamed
		// from: the deleting side never held c.Path.
		lost := c.Path
		if c.RenamedFrom != "" {
			lost = c.RenamedFrom
		}
		if conflictKeptIsOurs(*c, of, tf) {
			c.KeptBy, c.LostBy = ow[c.Path], tw[lost]
		} else {
			c.KeptBy, c.LostBy = tw[c.Path], ow[lost]
		}
		m.Files[c.RecordPath()] = c.Record()
	}
	return nil
}

// conflictKeptIsOurs is keptIsOurs for a conflict of a merge in progress: ours' version decides when ours
// has the path, else theirs' (kept closer to theirs: not ours).
func conflictKeptIsOurs(c merge.Conflict, of, tf map[string][]byte) bool {
	o, ook := of[c.Path]
	if c.LostDeleted || ook {
		return keptIsOurs(string(c.Kept), string(c.Lost), c.LostDeleted, o, ook)
	}
	if t, ok := tf[c.Path]; ok {
		return !closerToOurs(t, c.Kept, c.Lost)
	}
	return true
}

// closerToOurs reports whether kept is at least as close to ours as lost (go-diff line distance).
func closerToOurs(ours, kept, lost []byte) bool {
	return lineDistance(string(ours), string(kept)) <= lineDistance(string(ours), string(lost))
}

// lineDistance is go-diff's Levenshtein distance of a line-mode diff of a and b: the size of the lines
// inserted or deleted (diffmatchpatch DiffLinesToRunes, DiffMainRunes, DiffCharsToLines). It must give
// every machine the same answer for the same inputs (the side it names goes into the conflict record a
// merge commits), so it never depends on the clock: go-diff runs without its time limit, and above
// maxExactDistanceLines lines, where the diff could take seconds, the distance is counted from the two
// multisets of lines instead (multisetLineDistance), in time linear in the input.
func lineDistance(a, b string) int {
	if strings.Count(a, "\n")+strings.Count(b, "\n") > maxExactDistanceLines {
		return multisetLineDistance(a, b)
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no clock
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	return dmp.DiffLevenshtein(dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines))
}

// maxExactDistanceLines bounds the lines (both texts) lineDistance diffs exactly: go-diff's O(N·D) at 4,000
// lines is at most a few tens of milliseconds.
const maxExactDistanceLines = 4000

// multisetLineDistance is the size in runes of the lines one of a and b holds more often than the other:
// the lines a diff would insert or delete, without their order.
func multisetLineDistance(a, b string) int {
	count := map[string]int{}
	for _, l := range strings.SplitAfter(a, "\n") {
		count[l]++
	}
	for _, l := range strings.SplitAfter(b, "\n") {
		count[l]--
	}
	d := 0
	for l, n := range count {
		if n < 0 {
			n = -n
		}
		d += n * utf8.RuneCountInString(l)
	}
	return d
}

// Strategy decides every conflict of one pull at once (`ctx pull --strategy`), in the merge commit itself.
type Strategy string

// The strategies: "" keeps merge's deterministic winner and records the loser (docs/merge.md).
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

// applyStrategy decides the conflicts of m by st: for each one, the chosen side's version (for "ours" the
// merging side's: Kept or Lost, see conflictKeptIsOurs; the other for "theirs") goes in the file (a lost
// delete deletes it) and no record is written. It returns the decided conflicts; m.Conflicts is emptied.
func applyStrategy(m *merge.Result, st Strategy, ours, theirs map[string][]byte) ([]merge.Conflict, error) {
	if st == StrategyRecord || len(m.Conflicts) == 0 {
		return nil, nil
	}
	decided := m.Conflicts
	onDecisions := map[string]bool{}
	for _, c := range decided {
		if strings.HasPrefix(c.Path, "decisions/") {
			onDecisions[c.Path] = true
		}
	}
	var before []string
	if len(onDecisions) > 0 {
		before = decisionFileCycles(m.Files, onDecisions)
	}
	for _, c := range decided {
		if _, had := ours[c.RecordPath()]; !had {
			delete(m.Files, c.RecordPath())
		}
		switch {
		case conflictKeptIsOurs(c, ours, theirs) == (st == StrategyOurs):
			m.Files[c.Path] = c.Kept
		case c.LostDeleted:
			delete(m.Files, c.Path)
		default:
			m.Files[c.Path] = c.Lost
		}
	}
	// A supersede cycle the merge broke (docs/merge.md "Supersede cycles") is not written back by deciding
	// its conflict for the side that closed it: ctx decision supersede refuses that state.
	if len(onDecisions) > 0 {
		var closed []string
		for _, p := range decisionFileCycles(m.Files, onDecisions) {
			if !slices.Contains(before, p) {
				closed = append(closed, p)
			}
		}
		if len(closed) > 0 {
			return nil, invalidf("pull --strategy %s would write a supersede cycle, which ctx decision supersede refuses: %s. "+
				"Pull without --strategy (the merge keeps the later decision's supersede and records the other as a conflict), then settle it with ctx resolve",
				st, strings.Join(closed, "; "))
		}
	}
	m.Conflicts = nil
	return decided, nil
}

// conflictRecordProblem says why the file conflicts/<name> (content b) is not a conflict record ctx can
// list and resolve, or "" when it is one: it must parse (ParseConflictRecord), its id must be its file
// name's, its path a file of the store layout (LayoutPath: no "..", no ".git", never a conflict record
// itself), and the writers' commits hex object names. A fetched tip that adds another is refused like an
// entry ctx cannot read (checkTree), ctx doctor lists one already on a ref and --fix removes it, and the
// readers skip it (readConflicts): resolving it would write where the record says.
func conflictRecordProblem(name string, b []byte) string {
	r, err := ParseConflictRecord(b)
	if err != nil {
		return "a conflict record that does not read: " + err.Error()
	}
	if stem, _ := strings.CutSuffix(name, ".json"); r.ID != stem {
		return fmt.Sprintf("a conflict record whose id %q is not its file name's", r.ID)
	}
	if err := LayoutPath(r.Path); err != nil || strings.HasPrefix(r.Path, ConflictsDir+"/") {
		return fmt.Sprintf("a conflict record whose path %q is no file of the store", r.Path)
	}
	for _, sd := range []*merge.Side{r.KeptBy, r.LostBy} {
		if sd != nil && sd.Commit != "" && !isHexName(sd.Commit) {
			return fmt.Sprintf("a conflict record whose commit %q is no object name", sd.Commit)
		}
	}
	return ""
}

// isHexName says whether s is a full object name: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits.
func isHexName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
