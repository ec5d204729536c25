package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/ctx-dev/ctx/internal/mdfence"
)

// DecisionStatuses are the decision status values (docs/format.md "Decisions"): the four of the MCP
// resources' model, and rejected (MADR's status of a decision that was considered and turned down).
var DecisionStatuses = []string{"proposed", "accepted", "deprecated", "superseded", "rejected"}

// The section headings read as a decision's context, decision and consequences (lower case, without a
// leading number or a trailing colon), in English and in the languages of the ADRs ctx imports
// (docs/format.md "Decisions"). A body without them is still served whole.
var (
	contextSections = []string{"context", "context and problem statement", "problem statement", "background",
		"上下文", "背景", "语境", "コンテキスト", "contexto", "contexte", "kontext"}
	decisionSections = []string{"decision", "decision outcome", "决策", "决定", "決定", "decisión", "decisão",
		"décision", "entscheidung"}
	consequencesSections = []string{"consequences", "consequence", "结果", "后果", "影响", "結果", "影響",
		"consecuencias", "consequências", "conséquences", "konsequenzen"}
)

// Decision is an ADR (docs/format.md "Decisions"). Context, Decision and Consequences are read from the
// body's sections; Body is the markdown after the front matter, byte for byte.
type Decision struct {
	ID           int    `json:"id"`
	UID          string `json:"uid"`
	Title        string `json:"title"`
	Status       string `json:"status"`
	StatusText   string `json:"status_text,omitempty"`
	Date         string `json:"date,omitempty"`
	Author       string `json:"author,omitempty"`
	Supersedes   []int  `json:"supersedes,omitempty"`
	SupersededBy int    `json:"superseded_by,omitempty"`
	Source       string `json:"source,omitempty"`
	Scope        Scope  `json:"scope"`
	Context      string `json:"context"`
	Decision     string `json:"decision"`
	Consequences string `json:"consequences"`
	Body         string `json:"body"`
	Path         string `json:"path"`
}

var decisionFile = lazyre.New(`^(\d{4,})-(.*)\.md$`)

// MaxDecisionID is the largest decision number ctx gives or reads: nine digits, as the merge layer reads
// them when it renumbers. A larger number found on the branch (a hand edit, a teammate's tool) is not a
// number for ctx (the decision reads as id 0), so the next number never overflows into a negative one.
const MaxDecisionID = 999_999_999

// decisionID parses a decision number; 0 when it is not one ctx uses (not digits, 0, beyond MaxDecisionID).
func decisionID(s string) int {
	id, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || id <= 0 || id > MaxDecisionID {
		return 0
	}
	return id
}

// ParseDecision reads a decisions/NNNN-slug.md file (front matter by ReadFrontMatter). A number beyond
// MaxDecisionID, in the name or the front matter, is not a number for ctx.
func ParseDecision(name string, sc Scope, b []byte) Decision {
	d := Decision{Scope: sc, Path: "decisions/" + name, Body: string(b)}
	if m := decisionFile.Get().FindStringSubmatch(name); m != nil {
		d.ID = decisionID(m[1])
	}
	if fm, body := ReadFrontMatter(b); fm.Present {
		v := fm.Values
		d.Body = string(body)
		if id := decisionID(v["id"]); id > 0 {
			d.ID = id
		}
		d.UID, d.Title, d.Status, d.StatusText = v["uid"], v["title"], v["status"], v["status_text"]
		d.Date, d.Author, d.Source = v["date"], v["author"], v["source"]
		d.SupersededBy, _ = strconv.Atoi(v["superseded_by"])
		if block, _, ok := SplitFrontMatter(b); ok {
			if m, err := ParseMeta(block); err == nil {
				m.Decode("supersedes", &d.Supersedes)
			}
		}
	}
	d.Context = section(d.Body, contextSections...)
	d.Decision = section(d.Body, decisionSections...)
	d.Consequences = section(d.Body, consequencesSections...)
	return d
}

// section returns the text under the first markdown heading (any level) whose title, lower-cased and
// without a leading number, is one of names; up to the next heading of the same or a higher level. A line
// in a fenced code block is never a heading (mdfence).
func section(body string, names ...string) string {
	lines := strings.Split(body, "\n")
	start, level := -1, 0
	var f mdfence.Fence
	for i, l := range lines {
		if f.In(l) {
			continue
		}
		lv, title, ok := heading(l)
		if !ok {
			continue
		}
		if start >= 0 {
			if lv <= level {
				return strings.TrimSpace(strings.Join(lines[start:i], "\n"))
			}
			continue
		}
		if slices.Contains(names, title) {
			start, level = i+1, lv
		}
	}
	if start < 0 {
		return ""
	}
	return strings.TrimSpace(strings.Join(lines[start:], "\n"))
}

// heading reads a line as section reads headings: a line starting with '#' is one, of level the number of
// '#'; its title lower-cased, without a leading number, closing '#'s or a trailing colon.
func heading(l string) (level int, title string, ok bool) {
	t := strings.TrimRight(l, "\r")
	if !strings.HasPrefix(t, "#") {
		return 0, "", false
	}
	level = len(t) - len(strings.TrimLeft(t, "#"))
	title = strings.ToLower(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[level:]), "#")))
	title = strings.TrimLeftFunc(title, func(r rune) bool { return unicode.IsDigit(r) || r == '.' || r == ' ' })
	return level, strings.TrimSpace(strings.TrimRight(title, ":：")), true
}

// fieldsReadBack refuses a decision built from fields (no Body of its own) whose context, decision or
// consequences would not read back as given: the body is read by its section headings (section), so a
// field holding a heading line would cut its own section short or pose as another field ("## Decision"
// inside the context served as the decision); a line in a fenced code block is not a heading, but a fence
// left open hides the headings after it. The error names the field and the line; nothing is written
// (docs/format.md "Decisions").
func fieldsReadBack(in NewDecision) error {
	if in.Body != nil {
		return nil
	}
	body := bodyOf(in)
	fields := []struct {
		name, value string
		names       []string
	}{
		{"context", in.Context, contextSections},
		{"decision", in.Decision, decisionSections},
		{"consequences", in.Consequences, consequencesSections},
	}
	for _, f := range fields {
		if section(body, f.names...) == strings.TrimSpace(f.value) {
			continue
		}
		// The line to blame may be in another field: a "### Decision Outcome:" inside the context is read
		// as the decision.
		for _, g := range fields {
			var fc mdfence.Fence
			for _, l := range strings.Split(g.value, "\n") {
				if fc.In(l) {
					continue
				}
				lv, title, ok := heading(l)
				if ok && (lv <= 2 || slices.Contains(contextSections, title) || slices.Contains(decisionSections, title) ||
					slices.Contains(consequencesSections, title)) {
					return invalidf("%s: the line %q reads as a heading of the decision's body, whose sections Context, Decision and Consequences hold the three fields: write it without the leading '#', or as a heading of level 3 or deeper not named as one of those sections", g.name, strings.TrimRight(l, "\r"))
				}
			}
			if fc.Open() {
				return invalidf("%s: a code fence (%s) is opened and never closed, so the sections after it read as code: close it with a line of %s", g.name, strings.Repeat(string(fc.Char), fc.N), strings.Repeat(string(fc.Char), fc.N))
			}
		}
		return invalidf("%s: the text does not read back as written from the decision's body (docs/format.md \"Decisions\")", f.name)
	}
	return nil
}

// ListDecisions lists the decisions of every scope ordered by id.
func (v *View) ListDecisions(ctx context.Context) ([]Decision, error) {
	names, err := v.List(ctx, "decisions")
	if err != nil {
		return nil, err
	}
	out := []Decision{}
	for _, n := range names {
		if n.Dir || !strings.HasSuffix(n.Name, ".md") {
			continue
		}
		b, err := v.ReadIn(ctx, n.Scope, "decisions/"+n.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, ParseDecision(n.Name, n.Scope, b))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// AmbiguousError is a title, or a number held by two files, that names several decisions; it lists them.
type AmbiguousError struct {
	Ref     string
	Matches []Decision
}

func (e *AmbiguousError) Error() string {
	var ids []string
	for _, d := range e.Matches {
		ids = append(ids, fmt.Sprintf("%d (%s)", d.ID, d.Path))
	}
	if _, err := strconv.Atoi(strings.TrimSpace(e.Ref)); err == nil {
		return fmt.Sprintf("decision %s is ambiguous: two files hold that number: %s; give one of them a free number (ctx doctor lists them)", e.Ref, strings.Join(ids, ", "))
	}
	return fmt.Sprintf("decision %q is ambiguous: it matches %s; use the id", e.Ref, strings.Join(ids, ", "))
}

// FindDecision looks a decision up by numeric id or exact title (docs/format.md "Not-found texts"). Errors:
// *NotFoundError ("Decision '99' not found"), *AmbiguousError for a title used twice or a number two files
// hold (neither is picked).
func (v *View) FindDecision(ctx context.Context, ref string) (Decision, error) {
	all, err := v.ListDecisions(ctx)
	if err != nil {
		return Decision{}, err
	}
	if id, err := strconv.Atoi(strings.TrimSpace(ref)); err == nil {
		var byID []Decision
		for _, d := range all {
			if d.ID == id {
				byID = append(byID, d)
			}
		}
		switch len(byID) {
		case 1:
			return byID[0], nil
		case 0:
		default:
			// Two files of one number (a hand copy, a merge of an older ctx): neither is picked.
			return Decision{}, &AmbiguousError{Ref: ref, Matches: byID}
		}
	}
	var matches []Decision
	for _, d := range all {
		if d.Title == ref {
			matches = append(matches, d)
		}
	}
	switch len(matches) {
	case 0:
		return Decision{}, &NotFoundError{Msg: fmt.Sprintf("Decision '%s' not found", ref)}
	case 1:
		return matches[0], nil
	}
	return Decision{}, &AmbiguousError{Ref: ref, Matches: matches}
}

// NewDecision is the input of AddDecision. Body, when set, is stored byte for byte (an imported ADR);
// otherwise the body is built from Context, Decision and Consequences. Number, when > 0 and free, is kept
// as the id (an imported ADR's own number); otherwise the next id is used.
type NewDecision struct {
	Title, Status, StatusText, Date, Source string
	Context, Decision, Consequences         string
	Body                                    *string
	Number                                  int
	Scope                                   Scope
	Supersedes                              []int
	// SupersededByRef and SupersedesRefs are the ADRs an imported ADR's status names ("Superseded by
	// ADR-0019", "Supersedes [2. x](0002-x.md)"); a batch (ApplyReport) turns them into superseded_by and
	// supersedes.
	SupersededByRef DecisionRef
	SupersedesRefs  []DecisionRef
}

// DecisionRef names a decision by what an ADR file knows of it: the source path of its file (relative to
// the repository root, as Decision.Source) and/or its ADR number. The zero value names none.
type DecisionRef struct {
	Number int    `json:"number,omitempty"`
	Source string `json:"source,omitempty"`
}

// Slug derives a file-name slug from a title: letters (lower-cased) and digits of any script kept, runs of
// anything else become '-', at most 60 bytes.
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if b.Len()+len(string(r)) > 60 {
				break
			}
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "decision"
	}
	return out
}

// NormalizeStatus maps a status to the values of docs/format.md "Decisions": "" → proposed; an unknown word
// is an error.
func NormalizeStatus(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "proposed", nil
	}
	if contains(DecisionStatuses, s) {
		return s, nil
	}
	return "", invalidf("invalid status %q: use one of %s", s, strings.Join(DecisionStatuses, ", "))
}

func (s *Store) renderDecision(d Decision, uid string, body []byte) []byte {
	m := NewMeta()
	m.Set("id", d.ID)
	m.Set("uid", uid)
	m.Set("title", d.Title)
	m.Set("status", d.Status)
	if d.StatusText != "" {
		m.Set("status_text", d.StatusText)
	}
	m.Set("date", d.Date)
	m.Set("author", d.Author)
	if len(d.Supersedes) > 0 {
		m.Set("supersedes", d.Supersedes)
	}
	if d.SupersededBy > 0 {
		m.Set("superseded_by", d.SupersededBy)
	}
	if d.Source != "" {
		m.Set("source", d.Source)
	}
	return JoinFrontMatter(m, body)
}

// publicRefs refuses, for a public decision, a reference (field) to a decision that only the private or
// ephemeral scope holds: a public record must not show anything of a private entry (docs/security.md).
func (s *Store) publicRefs(ctx context.Context, v *View, ids []int, field string) error {
	all, err := v.ListDecisions(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		for _, d := range all {
			if d.ID == id && d.Scope != Public {
				return invalidf("%s: decision %d is %s; a public decision cannot name it (make it public first, or keep this decision %s too)", field, id, d.Scope, d.Scope)
			}
		}
	}
	return nil
}

// decisionPlan computes the edits that add a decision on view v; shared by AddDecision and imports.
func (s *Store) decisionPlan(ctx context.Context, v *View, in NewDecision, author string, taken map[int]bool) (Decision, Edits, error) {
	if strings.TrimSpace(in.Title) == "" {
		return Decision{}, nil, invalidf("a decision needs a title")
	}
	if i := strings.IndexFunc(strings.TrimSpace(in.Title), unicode.IsControl); i >= 0 {
		return Decision{}, nil, invalidf("a decision title is one line of text: control character %U at byte %d (put the rest in --context or --decision)", []rune(strings.TrimSpace(in.Title)[i:])[0], i)
	}
	status := in.Status
	if status == "" {
		status = "proposed"
	}
	if !contains(DecisionStatuses, status) {
		return Decision{}, nil, invalidf("invalid status %q: use one of %s", status, strings.Join(DecisionStatuses, ", "))
	}
	sc := in.Scope
	if sc == "" {
		sc = Public
	}
	if sc == Public && len(in.Supersedes) > 0 {
		if err := s.publicRefs(ctx, v, in.Supersedes, "supersedes"); err != nil {
			return Decision{}, nil, err
		}
	}
	id := in.Number
	if id > MaxDecisionID {
		return Decision{}, nil, invalidf("decision number %d: the largest is %d", id, MaxDecisionID)
	}
	if id <= 0 || taken[id] {
		id = 1
		for n := range taken {
			if n >= id && n <= MaxDecisionID {
				id = n + 1
			}
		}
		if id > MaxDecisionID {
			// The largest number is taken: the lowest free one (docs/format.md "Decisions").
			id = lowestFreeID(taken)
		}
		if id > MaxDecisionID {
			return Decision{}, nil, invalidf("no decision number left: every number up to %d is taken (renumber the decisions)", MaxDecisionID)
		}
	}
	taken[id] = true
	d := Decision{ID: id, Title: strings.TrimSpace(in.Title), Status: status, StatusText: in.StatusText, Date: in.Date,
		Author: author, Supersedes: in.Supersedes, Source: in.Source, Scope: sc}
	if d.Date == "" {
		d.Date = now()
	}
	if err := fieldsReadBack(in); err != nil {
		return Decision{}, nil, err
	}
	body := []byte(bodyOf(in))
	d.Path = fmt.Sprintf("decisions/%04d-%s.md", id, Slug(d.Title))
	ed := Edits{}
	content := s.renderDecision(d, uuid.NewString(), body)
	ed.Put(sc, d.Path, content)
	// The record as written (uid, sections, body), as `ctx decision get` reads it back.
	written := ParseDecision(path.Base(d.Path), sc, content)
	written.Path = d.Path
	return written, ed, nil
}

func takenIDs(ctx context.Context, s *Store, v *View) (map[int]bool, error) {
	// Every scope's numbers, also for a public-only caller (over HTTP), who sees only the result: a public
	// decision never takes the number of a private one of this machine (docs/mcp.md).
	all, err := v.everyScope().ListDecisions(ctx)
	if err != nil {
		return nil, err
	}
	taken := map[int]bool{}
	for _, d := range all {
		taken[d.ID] = true
	}
	return taken, nil
}

// AddDecision records a new decision (one commit) and returns it with its id, and what the write
// committed: the commit it made on the decision's scope, never a tip read afterwards (another writer may
// have moved it already).
func (s *Store) AddDecision(ctx context.Context, in NewDecision) (Decision, *Committed, error) {
	if err := validFields("decision", in); err != nil {
		return Decision{}, nil, err
	}
	author, err := s.repo.Identity(ctx)
	if err != nil {
		return Decision{}, nil, err
	}
	var out Decision
	// Ctx-Key is the decision's number, known once the write has picked it (docs/architecture.md "Commits").
	op := Op{Name: "decision.add", Summary: "add decision " + strings.TrimSpace(in.Title),
		KeyOf: func() string { return strconv.Itoa(out.ID) }}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		taken, err := takenIDs(ctx, s, v)
		if err != nil {
			return nil, err
		}
		d, ed, err := s.decisionPlan(ctx, v, in, author.Name+" <"+author.Email+">", taken)
		out = d
		return ed, err
	})
	return out, c, err
}

// SetDecisionStatus changes a decision's status (and, for superseded, its superseded_by), one commit per
// scope touched. ref is an id or exact title. With supersededBy > 0 the replacing decision records the
// other side, its `supersedes` list gaining this decision's id (docs/format.md "Decisions"), in the same
// write. A decision cannot supersede itself. The Committed is the write's own commit; none when the status
// was already that.
func (s *Store) SetDecisionStatus(ctx context.Context, ref, status string, supersededBy int) (Decision, *Committed, error) {
	st, err := NormalizeStatus(status)
	if err != nil {
		return Decision{}, nil, err
	}
	switch {
	case supersededBy < 0:
		return Decision{}, nil, invalidf("superseded_by %d: a decision number is 1 or more", supersededBy)
	case supersededBy > 0 && st != "superseded":
		return Decision{}, nil, invalidf("superseded_by: only with status superseded (status %s)", st)
	}
	var out Decision
	// Ctx-Key is the decision's number, whatever ref named it: a title goes stale when the decision is
	// renamed (an ADR retitled and imported again), its number never changes (docs/architecture.md
	// "Commits").
	op := Op{Name: "decision.status", Key: ref, Summary: fmt.Sprintf("set decision %s status %s", ref, st),
		KeyOf: func() string { return decisionKey(out, ref) }}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		d, err := v.FindDecision(ctx, ref)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		if supersededBy > 0 {
			nd, err := v.FindDecision(ctx, strconv.Itoa(supersededBy))
			if err != nil {
				return nil, err
			}
			if d.Scope == Public {
				if err := s.publicRefs(ctx, v, []int{supersededBy}, "superseded_by"); err != nil {
					return nil, err
				}
			}
			if nd.Scope == Public {
				if err := s.publicRefs(ctx, v, []int{d.ID}, "supersedes"); err != nil {
					return nil, err
				}
			}
			if nd.ID == d.ID {
				return nil, invalidf("decision %d cannot supersede itself: give the id of the decision that replaces it", d.ID)
			}
			// No cycle: the replacing decision must not itself be replaced, directly or down a chain of
			// superseded_by links, by the decision it replaces.
			seen := map[int]bool{nd.ID: true}
			for next := nd; next.Status == "superseded" && next.SupersededBy > 0; {
				if next.SupersededBy == d.ID {
					return nil, invalidf("decision %d cannot supersede %d: %d is already superseded by %d (directly or through others); set %d's status first (ctx decision set-status %d accepted)",
						nd.ID, d.ID, nd.ID, d.ID, nd.ID, nd.ID)
				}
				if seen[next.SupersededBy] {
					break
				}
				seen[next.SupersededBy] = true
				n, err := v.FindDecision(ctx, strconv.Itoa(next.SupersededBy))
				if err != nil {
					break // a link to a decision that is gone (or private) ends the chain
				}
				next = n
			}
			if !slices.Contains(nd.Supersedes, d.ID) {
				list := append(slices.Clone(nd.Supersedes), d.ID)
				slices.Sort(list)
				b, err := s.editDecisionMeta(ctx, v, nd, func(m *Meta) { m.Set("supersedes", list) })
				if err != nil {
					return nil, err
				}
				ed.Put(nd.Scope, nd.Path, b)
			}
		}
		// The decision that replaced d until now no longer does when d gets another status or another
		// replacement: its supersedes list drops d, so the two sides of the link stay in step.
		if old := d.SupersededBy; old > 0 && old != d.ID && (st != "superseded" || (supersededBy > 0 && supersededBy != old)) {
			if od, err := v.FindDecision(ctx, strconv.Itoa(old)); err == nil && slices.Contains(od.Supersedes, d.ID) {
				list := slices.DeleteFunc(slices.Clone(od.Supersedes), func(n int) bool { return n == d.ID })
				b, err := s.editDecisionMeta(ctx, v, od, func(m *Meta) {
					if len(list) == 0 {
						m.Delete("supersedes")
					} else {
						m.Set("supersedes", list)
					}
				})
				if err != nil {
					return nil, err
				}
				ed.Put(od.Scope, od.Path, b)
			}
		}
		b, err := s.editDecisionMeta(ctx, v, d, func(m *Meta) {
			m.Set("status", st)
			if supersededBy > 0 {
				m.Set("superseded_by", supersededBy)
			} else if st != "superseded" {
				m.Delete("superseded_by")
			}
		})
		if err != nil {
			return nil, err
		}
		if supersededBy > 0 || st != "superseded" {
			d.SupersededBy = supersededBy
		}
		d.Status = st
		out = d
		ed.Put(d.Scope, d.Path, b)
		return ed, nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil, &NotFoundError{Msg: fmt.Sprintf("Decision '%s' not found", ref)}
	}
	return out, c, err
}

// decisionKey is the Ctx-Key of a write to decision d: its number, or ref as given when the write found no
// decision (the key of a commit that is not made).
func decisionKey(d Decision, ref string) string {
	if d.ID > 0 {
		return strconv.Itoa(d.ID)
	}
	return ref
}

// editDecisionMeta returns decision d's file with its front matter changed by fn; the body is kept byte
// for byte (a file whose front matter does not parse keeps it all as body under a new one).
func (s *Store) editDecisionMeta(ctx context.Context, v *View, d Decision, fn func(m *Meta)) ([]byte, error) {
	raw, err := v.ReadIn(ctx, d.Scope, d.Path)
	if err != nil {
		return nil, err
	}
	fm, body, ok := SplitFrontMatter(raw)
	m := NewMeta()
	if ok {
		if pm, err := ParseMeta(fm); err == nil {
			m = pm
		} else {
			body = raw
		}
	}
	fn(m)
	return JoinFrontMatter(m, body), nil
}
