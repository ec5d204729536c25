package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/ctx-dev/ctx/merge"
	"github.com/google/uuid"
)

// BatchEntry sets one knowledge entry or convention in a Batch.
type BatchEntry struct {
	Kind Kind
	SetEntry
}

// NewSkill adds or replaces a skill: Content is the whole SKILL.md, stored byte for byte.
type NewSkill struct {
	Name    string
	Content []byte
	Scope   Scope
}

// Batch is several writes made as one commit per scope (ctx import: one commit per import run).
type Batch struct {
	Entries   []BatchEntry
	Decisions []NewDecision
	Skills    []NewSkill
}

// What Apply did with one item (AppliedItem.Action).
const (
	ActionAdded     = "added"
	ActionUpdated   = "updated"
	ActionUnchanged = "unchanged"
)

// AppliedItem is what Apply did with one item of a batch.
type AppliedItem struct {
	Kind   string `json:"kind"`             // "knowledge", "convention", "skill" or "decision"
	Key    string `json:"key"`              // the key, skill name, or the decision's id as text
	Source string `json:"source,omitempty"` // a decision's source
	Action string `json:"action"`           // ActionAdded, ActionUpdated or ActionUnchanged
	// Changes lists what an update changed ("title", "status proposed -> accepted", "body", ...).
	Changes []string `json:"changes,omitempty"`
	// Note says why an item was left as it is, e.g. "already private; not moved".
	Note string `json:"note,omitempty"`
}

// Applied is the outcome of ApplyReport.
type Applied struct {
	*Committed
	Decisions []Decision    // the batch's decisions as stored (numbered), in batch order
	Items     []AppliedItem // one per item: entries, then skills, then decisions
}

// Apply is ApplyReport returning the commits and the decisions as numbered.
func (s *Store) Apply(ctx context.Context, op Op, b Batch) (*Committed, []Decision, error) {
	a, err := s.ApplyReport(ctx, op, b)
	if a == nil {
		return nil, nil, err
	}
	return a.Committed, a.Decisions, err
}

// ApplyReport validates every item of the batch first (nothing is written when one is invalid), then
// commits them together with op's message, one commit per scope. Rules (docs/format.md "Scopes" and
// "Decisions"):
//
//   - an entry or skill whose key already exists is updated in place when its content differs, and left
//     alone when it is the same;
//   - a batch never moves or removes anything: an item whose key is held by another scope than the one
//     asked for is left alone when the content is the same (the item says so), and is an error wrapping
//     ErrScopeClash, listing every such key, when it differs;
//   - a decision with a Source already recorded (relative to the repository root; an absolute source
//     inside the work tree, from older versions, matches too) is the same decision: when its body
//     changed it is updated in place (same id and uid; title, status, date, body and source follow the
//     file) and the item lists the changes; when not, it is left alone;
//   - a decision whose Source no stored decision has may be one renamed (git mv, a new title): see
//     renamedDecisions; it is then updated as above, its source following the file;
//   - SupersededByRef and SupersedesRefs link decisions of the batch, or imported decisions already
//     stored (by source, else by id): superseded_by on one side, supersedes on the other.
func (s *Store) ApplyReport(ctx context.Context, op Op, b Batch) (*Applied, error) {
	for i := range b.Entries {
		e := &b.Entries[i]
		if err := normKey(&e.Key); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Kind.Name, err)
		}
		if !utf8.ValidString(e.Content) {
			return nil, invalidf("%s %s: the content is not UTF-8 text", e.Kind.Name, e.Key)
		}
		if e.Scope == "" {
			e.Scope = Public
		}
	}
	for i := range b.Skills {
		sk := &b.Skills[i]
		name, err := ValidSkillName(sk.Name)
		if err != nil {
			return nil, fmt.Errorf("skill: %w", err)
		}
		sk.Name = name
		if sk.Scope == "" {
			sk.Scope = Public
		}
		if err := ValidText("skill "+sk.Name+" SKILL.md", string(sk.Content)); err != nil {
			return nil, err
		}
	}
	for i, d := range b.Decisions {
		if strings.TrimSpace(d.Title) == "" {
			return nil, fmt.Errorf("decision from %s: a decision needs a title", d.Source)
		}
		if d.Scope == "" {
			b.Decisions[i].Scope = Public
		}
		if err := validFields("decision from "+d.Source, d); err != nil {
			return nil, err
		}
	}
	author, err := s.repo.Identity(ctx)
	if err != nil {
		return nil, err
	}
	who := author.Name + " <" + author.Email + ">"
	out := &Applied{}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		out.Decisions, out.Items = nil, nil
		ed := Edits{}
		var clashes []string
		clash := func(kind, key string, have, want Scope) {
			clashes = append(clashes, fmt.Sprintf("%s %s is %s, not %s", kind, key, have, want))
		}
		for _, e := range b.Entries {
			it := AppliedItem{Kind: e.Kind.Name, Key: e.Key}
			old, oldScope, err := v.Read(ctx, e.Kind.path(e.Key))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				it.Action = ActionAdded
			case err != nil:
				return nil, err
			default:
				same := ParseEntry(e.Key, oldScope, old).Content == e.Content
				switch {
				case same && oldScope != e.Scope:
					it.Action, it.Note = ActionUnchanged, fmt.Sprintf("already %s; not moved", oldScope)
				case same:
					it.Action = ActionUnchanged
				case oldScope != e.Scope:
					clash(e.Kind.Name, e.Key, oldScope, e.Scope)
					continue
				default:
					it.Action, it.Changes = ActionUpdated, []string{"content"}
				}
			}
			out.Items = append(out.Items, it)
			if it.Action != ActionUnchanged {
				if err := s.entryEdits(ctx, v, e.Kind, e.SetEntry, who, ed); err != nil {
					return nil, err
				}
			}
		}
		for _, sk := range b.Skills {
			it := AppliedItem{Kind: "skill", Key: sk.Name, Action: ActionAdded}
			old, oldScope, err := v.Read(ctx, skillPath(sk.Name))
			if errors.Is(err, fs.ErrNotExist) {
				if err := refuseLookalike(ctx, v, ed, "skill", "skills", "", sk.Name); err != nil {
					return nil, err
				}
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			if err == nil {
				switch same := bytes.Equal(old, sk.Content); {
				case same && oldScope != sk.Scope:
					it.Action, it.Note = ActionUnchanged, fmt.Sprintf("already %s; not moved", oldScope)
				case same:
					it.Action = ActionUnchanged
				case oldScope != sk.Scope:
					clash("skill", sk.Name, oldScope, sk.Scope)
					continue
				default:
					it.Action, it.Changes = ActionUpdated, []string{"SKILL.md"}
				}
			}
			out.Items = append(out.Items, it)
			if it.Action != ActionUnchanged {
				ed.Put(sk.Scope, skillPath(sk.Name), sk.Content)
			}
		}
		if err := s.decisionBatch(ctx, v, b.Decisions, who, ed, out, clash); err != nil {
			return nil, err
		}
		if len(clashes) > 0 {
			return nil, &invalidError{wrapped: ErrScopeClash, msg: fmt.Sprintf(
				"nothing written: %s; a write never moves an entry to another scope: move it first with `ctx <kind> scope KEY SCOPE`, "+
					"import into the scope that holds it, or give the file another name", strings.Join(clashes, "; "))}
		}
		return ed, nil
	})
	if c == nil && err != nil {
		return nil, err
	}
	out.Committed = c
	return out, err
}

// plannedDecision is one decision of a batch on its way to the branch.
type plannedDecision struct {
	in      NewDecision
	d       Decision
	uid     string
	action  string
	changes []string
	note    string
	render  bool // the file must be written
	extra   bool // an existing decision outside the batch whose links changed
}

// decisionBatch adds to ed the decisions of a batch (see ApplyReport) and records them in out.
func (s *Store) decisionBatch(ctx context.Context, v *View, in []NewDecision, who string, ed Edits, out *Applied,
	clash func(kind, key string, have, want Scope)) error {
	existing, err := v.ListDecisions(ctx)
	if err != nil {
		return err
	}
	taken := map[int]bool{}
	bySource := map[string]Decision{}
	byID := map[int]Decision{}
	root := s.repo.WorkTree()
	if ev := v.everyScope(); ev != v {
		// A public-only caller's new decisions take no number of this machine's private or ephemeral
		// decisions either (takenIDs); it sees only the numbers it gets.
		every, err := ev.ListDecisions(ctx)
		if err != nil {
			return err
		}
		for _, d := range every {
			taken[d.ID] = true
		}
	}
	for _, d := range existing {
		taken[d.ID] = true
		byID[d.ID] = d
		if d.Source == "" {
			continue
		}
		bySource[d.Source] = d
		// Older versions recorded absolute paths: they name the same file as the relative source.
		if filepath.IsAbs(d.Source) && root != "" {
			if rel, err := filepath.Rel(root, d.Source); err == nil && !strings.HasPrefix(rel, "..") {
				if _, ok := bySource[filepath.ToSlash(rel)]; !ok {
					bySource[filepath.ToSlash(rel)] = d
				}
			}
		}
	}
	// Decisions with their own number claim it first, in order, so that an ADR folder keeps its numbering.
	order := make([]int, 0, len(in))
	for i, d := range in {
		if d.Number > 0 {
			order = append(order, i)
		}
	}
	for i, d := range in {
		if d.Number <= 0 {
			order = append(order, i)
		}
	}
	renamed := s.renamedDecisions(in, existing, bySource)
	// The numbers the batch's new decisions bring in their names: a decision whose own number is taken
	// gets a number beyond these too, so that it never takes one another ADR of the same import claims
	// (two ADR folders both numbered from 1, imported at once).
	claimed := map[int]bool{}
	for i, nd := range in {
		if _, ok := bySource[nd.Source]; ok && nd.Source != "" {
			continue
		}
		if _, ok := renamed[i]; ok {
			continue
		}
		if nd.Number > 0 && nd.Number <= MaxDecisionID {
			claimed[nd.Number] = true
		}
	}
	planned := make([]*plannedDecision, len(in))
	for _, i := range order {
		nd := in[i]
		if err := fieldsReadBack(nd); err != nil {
			return err
		}
		p := &plannedDecision{in: nd}
		planned[i] = p
		old, ok := bySource[nd.Source]
		if !ok && nd.Source != "" {
			old, ok = renamed[i]
		}
		if !ok || nd.Source == "" {
			status := nd.Status
			if status == "" {
				status = "proposed"
			}
			if !contains(DecisionStatuses, status) {
				return invalidf("decision from %s: invalid status %q: use one of %s", nd.Source, status, strings.Join(DecisionStatuses, ", "))
			}
			id := nd.Number
			if id <= 0 || taken[id] {
				id = nextDecisionID(taken, claimed)
			}
			if id > MaxDecisionID {
				return invalidf("decision from %s: no decision number left: %d is the largest (renumber the decisions)", nd.Source, MaxDecisionID)
			}
			taken[id] = true
			p.d = Decision{ID: id, Title: strings.TrimSpace(nd.Title), Status: status, StatusText: nd.StatusText, Date: nd.Date,
				Author: who, Supersedes: nd.Supersedes, Source: nd.Source, Scope: nd.Scope, Body: bodyOf(nd)}
			if p.d.Date == "" {
				p.d.Date = now()
			}
			p.d.Path = fmt.Sprintf("decisions/%04d-%s.md", id, Slug(p.d.Title))
			p.uid, p.action, p.render = uuid.NewString(), ActionAdded, true
			continue
		}
		p.d, p.uid, p.action = old, old.UID, ActionUnchanged
		if old.Body == bodyOf(nd) && old.Source == nd.Source {
			if old.Scope != nd.Scope {
				p.note = fmt.Sprintf("already %s; not moved", old.Scope)
			}
			continue // imported before, unchanged: nothing to do
		}
		if old.Scope != nd.Scope {
			clash("decision", strconv.Itoa(old.ID), old.Scope, nd.Scope)
			continue
		}
		d := old
		status := nd.Status
		if status == "" {
			status = "proposed"
		}
		note := func(field, from, to string) {
			if from != to {
				if len(from)+len(to) < 60 && !strings.Contains(from+to, "\n") {
					p.changes = append(p.changes, fmt.Sprintf("%s %q -> %q", field, from, to))
				} else {
					p.changes = append(p.changes, field)
				}
			}
		}
		note("title", d.Title, strings.TrimSpace(nd.Title))
		note("status", d.Status, status)
		if nd.Date != "" { // an ADR without a date keeps the stored one
			note("date", d.Date, nd.Date)
		}
		if d.Body != bodyOf(nd) {
			p.changes = append(p.changes, "body")
		}
		note("source", d.Source, nd.Source)
		d.Title, d.Status, d.StatusText, d.Source, d.Body = strings.TrimSpace(nd.Title), status, nd.StatusText, nd.Source, bodyOf(nd)
		if nd.Date != "" {
			d.Date = nd.Date
		}
		p.d, p.action, p.render = d, ActionUpdated, true
	}

	// Links between decisions: by source path, else by ADR number; within the batch first, else a stored,
	// imported decision.
	byNumber := map[int]*plannedDecision{}
	bySrc := map[string]*plannedDecision{}
	for _, p := range planned {
		if p == nil {
			continue
		}
		if p.in.Number > 0 && byNumber[p.in.Number] == nil {
			byNumber[p.in.Number] = p
		}
		if p.in.Source != "" {
			bySrc[p.in.Source] = p
		}
	}
	extras := map[int]*plannedDecision{}
	stored := func(d Decision) *plannedDecision {
		if p := extras[d.ID]; p != nil {
			return p
		}
		p := &plannedDecision{d: d, uid: d.UID, extra: true}
		extras[d.ID] = p
		return p
	}
	target := func(ref DecisionRef) *plannedDecision {
		if ref.Source != "" {
			if p := bySrc[ref.Source]; p != nil {
				return p
			}
			if d, ok := bySource[ref.Source]; ok {
				return stored(d)
			}
		}
		if ref.Number > 0 {
			if p := byNumber[ref.Number]; p != nil {
				return p
			}
			if d, ok := byID[ref.Number]; ok && d.Source != "" {
				return stored(d)
			}
		}
		return nil
	}
	link := func(oldP, newP *plannedDecision) {
		if oldP == newP || !oldP.render && !newP.render {
			return // only decisions this batch adds or changes get new links
		}
		if oldP.d.SupersededBy == 0 {
			oldP.d.SupersededBy = newP.d.ID
			oldP.render = true
		}
		if !slices.Contains(newP.d.Supersedes, oldP.d.ID) {
			newP.d.Supersedes = append(slices.Clone(newP.d.Supersedes), oldP.d.ID)
			slices.Sort(newP.d.Supersedes)
			newP.render = true
		}
	}
	for _, p := range planned {
		if p == nil {
			continue
		}
		if t := target(p.in.SupersededByRef); t != nil {
			link(p, t)
		}
		for _, ref := range p.in.SupersedesRefs {
			if t := target(ref); t != nil {
				link(t, p)
			}
		}
	}

	for _, p := range planned {
		if p == nil {
			continue
		}
		it := AppliedItem{Kind: "decision", Key: strconv.Itoa(p.d.ID), Source: p.in.Source, Action: p.action, Changes: p.changes, Note: p.note}
		if p.render && p.action == ActionUnchanged {
			it.Action, it.Changes = ActionUpdated, []string{"links"}
		}
		out.Items = append(out.Items, it)
		p.d.UID = p.uid
		p.d.Context = section(p.d.Body, contextSections...)
		p.d.Decision = section(p.d.Body, decisionSections...)
		p.d.Consequences = section(p.d.Body, consequencesSections...)
		out.Decisions = append(out.Decisions, p.d)
		if p.render {
			ed.Put(p.d.Scope, p.d.Path, s.renderDecision(p.d, p.uid, []byte(p.d.Body)))
		}
	}
	ids := make([]int, 0, len(extras))
	for n := range extras {
		ids = append(ids, n)
	}
	sort.Ints(ids)
	for _, n := range ids {
		p := extras[n]
		if !p.render {
			continue
		}
		b, err := s.editDecisionMeta(ctx, v, byID[n], func(m *Meta) {
			if p.d.SupersededBy > 0 {
				m.Set("superseded_by", p.d.SupersededBy)
			}
			if len(p.d.Supersedes) > 0 {
				m.Set("supersedes", p.d.Supersedes)
			}
		})
		if err != nil {
			return err
		}
		ed.Put(p.d.Scope, p.d.Path, b)
		out.Items = append(out.Items, AppliedItem{Kind: "decision", Key: strconv.Itoa(p.d.ID), Source: p.d.Source,
			Action: ActionUpdated, Changes: []string{"links"}})
	}
	return nil
}

// adrFileNumber reads the ADR number at the start of a file name as the importer does (0003-x.md,
// adr-009-x.md, ADR0001_x.md): 0 when there is none, or when the name starts with a date (log4brains).
var (
	adrFileNumber = lazyre.New(`^(?i:adr[-_ ]?)?(\d{1,7})(?:[-_ .]|$)`)
	adrFileDate   = lazyre.New(`^\d{4}-?\d{2}-?\d{2}(?:[-_ .]|$)`)
)

func adrNumberOf(source string) int {
	name := path.Base(source)
	if adrFileDate.Get().MatchString(name) {
		return 0
	}
	m := adrFileNumber.Get().FindStringSubmatch(name)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// nextDecisionID is the number a new decision gets when it brings none or its own is taken
// (docs/format.md "Decisions"): one more than the largest taken or claimed, else (that would pass
// MaxDecisionID) one more than the largest taken, else the lowest number neither taken nor claimed. Past
// MaxDecisionID (every number taken) it is returned as is, for the caller to refuse.
func nextDecisionID(taken, claimed map[int]bool) int {
	top, topTaken := 0, 0
	for n := range taken {
		top, topTaken = max(top, n), max(topTaken, n)
	}
	for n := range claimed {
		top = max(top, n)
	}
	if top < MaxDecisionID {
		return top + 1
	}
	if topTaken < MaxDecisionID {
		return topTaken + 1
	}
	return lowestFreeID(taken, claimed)
}

// lowestFreeID is the lowest decision number in none of sets; MaxDecisionID+1 when every one is used.
func lowestFreeID(sets ...map[int]bool) int {
	for n := 1; n <= MaxDecisionID; n++ {
		used := false
		for _, s := range sets {
			used = used || s[n]
		}
		if !used {
			return n
		}
	}
	return MaxDecisionID + 1
}

// minRenameSimilarity is how alike (merge.Similarity) the bodies of an ADR whose file name gives no number
// and a stored decision must be for the ADR to be that decision renamed: git's default for renames (-M50%).
const minRenameSimilarity = 0.5

// renamedDecisions finds, for the decisions of a batch whose source no stored decision has, the stored
// decision they were renamed from (docs/format.md "Import": an ADR renamed or retitled is the same
// decision). A stored decision can be the old name only when its file is gone: its source is relative,
// not imported by this batch and not a file of the work tree. Among those, in the same folder as the new
// source, it is the one whose file name has the same ADR number (when exactly one has; ADR numbers are
// never reused), else, for ADRs without numbers (log4brains' dated names), the one whose body is most
// alike, at least minRenameSimilarity, else, for a renumbered ADR (either name has a number, and they
// differ), the most alike whose title is the same or whose body is at least minRenumberSimilarity alike.
// Each stored decision is the old name of one batch decision at most.
// The result maps batch indexes to stored decisions.
func (s *Store) renamedDecisions(in []NewDecision, existing []Decision, bySource map[string]Decision) map[int]Decision {
	inBatch := map[string]bool{}
	var fresh []int
	for i, nd := range in {
		inBatch[nd.Source] = true
		if _, ok := bySource[nd.Source]; !ok && nd.Source != "" && !path.IsAbs(nd.Source) {
			fresh = append(fresh, i)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	root := s.repo.WorkTree()
	var gone []Decision
	for _, d := range existing {
		if d.Source == "" || filepath.IsAbs(d.Source) || inBatch[d.Source] || !fs.ValidPath(d.Source) {
			continue
		}
		if root != "" {
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d.Source))); !errors.Is(err, fs.ErrNotExist) {
				continue // still there (or unreadable): not renamed
			}
		}
		gone = append(gone, d)
	}
	if len(gone) == 0 {
		return nil
	}
	out := map[int]Decision{}
	claimed := map[int]bool{}
	// By ADR number first, for every new source, so that a similar body never takes a numbered match.
	for _, i := range fresh {
		nd := in[i]
		n := adrNumberOf(nd.Source)
		if n == 0 {
			n = nd.Number
		}
		if n <= 0 {
			continue
		}
		var match []Decision
		for _, d := range gone {
			if !claimed[d.ID] && path.Dir(d.Source) == path.Dir(nd.Source) && adrNumberOf(d.Source) == n {
				match = append(match, d)
			}
		}
		if len(match) == 1 {
			out[i], claimed[match[0].ID] = match[0], true
		}
	}
	// Then by body: an ADR without a number whose old name had none either (log4brains), or, when both
	// names have a number, a renumbered ADR (`git mv 0003-x.md 0007-x.md`, a number dropped or added): the
	// same title and a body at least minRenameSimilarity alike, or a body at least minRenumberSimilarity
	// alike (a retitled and renumbered ADR). Unnumbered names first, so that they never lose their match
	// to a renumbered one.
	for _, numbered := range []bool{false, true} {
		for _, i := range fresh {
			nd := in[i]
			if _, ok := out[i]; ok {
				continue
			}
			best, bestSim := Decision{}, 0.0
			for _, d := range gone {
				if claimed[d.ID] || path.Dir(d.Source) != path.Dir(nd.Source) {
					continue
				}
				if (adrNumberOf(nd.Source) > 0 || adrNumberOf(d.Source) > 0) != numbered {
					continue
				}
				sim := merge.Similarity(d.Body, bodyOf(nd))
				ok := sim >= minRenameSimilarity
				if numbered {
					ok = ok && (sameTitle(d.Title, nd.Title) || sim >= minRenumberSimilarity)
				}
				if ok && sim > bestSim {
					best, bestSim = d, sim
				}
			}
			if bestSim > 0 {
				out[i], claimed[best.ID] = best, true
			}
		}
	}
	return out
}

// minRenumberSimilarity is how alike the bodies of a renumbered ADR and a stored decision of another title
// must be for the ADR to be that decision renumbered (and retitled).
const minRenumberSimilarity = 0.8

// sameTitle compares decision titles as a reader would: case and spacing aside.
func sameTitle(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// bodyOf is the body a NewDecision is stored with (see decisionPlan).
func bodyOf(in NewDecision) string {
	if in.Body != nil {
		return *in.Body
	}
	return fmt.Sprintf("## Context\n\n%s\n\n## Decision\n\n%s\n\n## Consequences\n\n%s\n",
		strings.TrimSpace(in.Context), strings.TrimSpace(in.Decision), strings.TrimSpace(in.Consequences))
}
