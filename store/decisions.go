package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"
)

// DecisionStatuses are seed 000's decision status values.
var DecisionStatuses = []string{"proposed", "accepted", "deprecated", "superseded"}

// Decision is an ADR (docs/format.md, seed 000). Context, Decision and Consequences are read from the
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

var decisionFile = regexp.MustCompile(`^(\d{4,})-(.*)\.md$`)

// ParseDecision reads a decisions/NNNN-slug.md file.
func ParseDecision(name string, sc Scope, b []byte) Decision {
	d := Decision{Scope: sc, Path: "decisions/" + name, Body: string(b)}
	if m := decisionFile.FindStringSubmatch(name); m != nil {
		d.ID, _ = strconv.Atoi(m[1])
	}
	if fm, body, ok := SplitFrontMatter(b); ok {
		if m, err := ParseMeta(fm); err == nil {
			d.Body = string(body)
			if id, err := strconv.Atoi(m.String("id")); err == nil && id > 0 {
				d.ID = id
			}
			d.UID, d.Title, d.Status, d.StatusText = m.String("uid"), m.String("title"), m.String("status"), m.String("status_text")
			d.Date, d.Author, d.Source = m.String("date"), m.String("author"), m.String("source")
			m.Decode("supersedes", &d.Supersedes)
			d.SupersededBy, _ = strconv.Atoi(m.String("superseded_by"))
		}
	}
	d.Context = section(d.Body, "context", "context and problem statement")
	d.Decision = section(d.Body, "decision", "decision outcome")
	d.Consequences = section(d.Body, "consequences")
	return d
}

// section returns the text under the first markdown heading (any level) whose title, lower-cased and
// without a leading number, is one of names; up to the next heading of the same or a higher level.
func section(body string, names ...string) string {
	lines := strings.Split(body, "\n")
	start, level := -1, 0
	for i, l := range lines {
		t := strings.TrimRight(l, "\r")
		if !strings.HasPrefix(t, "#") {
			continue
		}
		lv := len(t) - len(strings.TrimLeft(t, "#"))
		title := strings.ToLower(strings.TrimSpace(t[lv:]))
		title = strings.TrimLeftFunc(title, func(r rune) bool { return unicode.IsDigit(r) || r == '.' || r == ' ' })
		if start >= 0 {
			if lv <= level {
				return strings.TrimSpace(strings.Join(lines[start:i], "\n"))
			}
			continue
		}
		for _, n := range names {
			if title == n {
				start, level = i+1, lv
			}
		}
	}
	if start < 0 {
		return ""
	}
	return strings.TrimSpace(strings.Join(lines[start:], "\n"))
}

// ListDecisions lists the decisions of every scope ordered by id.
func (s *Store) ListDecisions(ctx context.Context, v *View) ([]Decision, error) {
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

// AmbiguousError is a title that names several decisions; it lists them.
type AmbiguousError struct {
	Ref     string
	Matches []Decision
}

func (e *AmbiguousError) Error() string {
	var ids []string
	for _, d := range e.Matches {
		ids = append(ids, fmt.Sprintf("%d (%s)", d.ID, d.Path))
	}
	return fmt.Sprintf("decision %q is ambiguous: it matches %s; use the id", e.Ref, strings.Join(ids, ", "))
}

// FindDecision looks a decision up by numeric id or exact title (seed 000: "Decision ID (numeric) or
// title"). Errors: *NotFoundError ("Decision '99' not found"), *AmbiguousError for a title used twice.
func (s *Store) FindDecision(ctx context.Context, v *View, ref string) (Decision, error) {
	all, err := s.ListDecisions(ctx, v)
	if err != nil {
		return Decision{}, err
	}
	if id, err := strconv.Atoi(strings.TrimSpace(ref)); err == nil {
		for _, d := range all {
			if d.ID == id {
				return d, nil
			}
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

// NormalizeStatus maps a status to seed 000's values: "" → proposed; an unknown word is an error.
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
	all, err := s.ListDecisions(ctx, v)
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
		return Decision{}, nil, errors.New("a decision needs a title")
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
	if id <= 0 || taken[id] {
		id = 1
		for n := range taken {
			if n >= id {
				id = n + 1
			}
		}
	}
	taken[id] = true
	d := Decision{ID: id, Title: strings.TrimSpace(in.Title), Status: status, StatusText: in.StatusText, Date: in.Date,
		Author: author, Supersedes: in.Supersedes, Source: in.Source, Scope: sc}
	if d.Date == "" {
		d.Date = now()
	}
	var body []byte
	if in.Body != nil {
		body = []byte(*in.Body)
	} else {
		body = []byte(fmt.Sprintf("## Context\n\n%s\n\n## Decision\n\n%s\n\n## Consequences\n\n%s\n",
			strings.TrimSpace(in.Context), strings.TrimSpace(in.Decision), strings.TrimSpace(in.Consequences)))
	}
	d.Path = fmt.Sprintf("decisions/%04d-%s.md", id, Slug(d.Title))
	ed := Edits{}
	ed.Put(sc, d.Path, s.renderDecision(d, uuid.NewString(), body))
	return d, ed, nil
}

func takenIDs(ctx context.Context, s *Store, v *View) (map[int]bool, error) {
	all, err := s.ListDecisions(ctx, v)
	if err != nil {
		return nil, err
	}
	taken := map[int]bool{}
	for _, d := range all {
		taken[d.ID] = true
	}
	return taken, nil
}

// AddDecision records a new decision (one commit) and returns it with its id.
func (s *Store) AddDecision(ctx context.Context, in NewDecision) (Decision, error) {
	if err := validFields("decision", in); err != nil {
		return Decision{}, err
	}
	author, err := s.Repo.Identity(ctx)
	if err != nil {
		return Decision{}, err
	}
	var out Decision
	op := Op{Name: "decision.add", Summary: "add decision " + strings.TrimSpace(in.Title)}
	_, err = s.Write(ctx, op, func(v *View) (Edits, error) {
		taken, err := takenIDs(ctx, s, v)
		if err != nil {
			return nil, err
		}
		d, ed, err := s.decisionPlan(ctx, v, in, author.Name+" <"+author.Email+">", taken)
		out = d
		return ed, err
	})
	return out, err
}

// SetDecisionStatus changes a decision's status (and, for superseded, its superseded_by), one commit.
// ref is an id or exact title.
func (s *Store) SetDecisionStatus(ctx context.Context, ref, status string, supersededBy int) (Decision, error) {
	st, err := NormalizeStatus(status)
	if err != nil {
		return Decision{}, err
	}
	var out Decision
	op := Op{Name: "decision.status", Key: ref, Summary: fmt.Sprintf("set decision %s status %s", ref, st)}
	_, err = s.Write(ctx, op, func(v *View) (Edits, error) {
		d, err := s.FindDecision(ctx, v, ref)
		if err != nil {
			return nil, err
		}
		if supersededBy > 0 {
			if _, err := s.FindDecision(ctx, v, strconv.Itoa(supersededBy)); err != nil {
				return nil, err
			}
			if d.Scope == Public {
				if err := s.publicRefs(ctx, v, []int{supersededBy}, "superseded_by"); err != nil {
					return nil, err
				}
			}
		}
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
		m.Set("status", st)
		if supersededBy > 0 {
			m.Set("superseded_by", supersededBy)
		}
		d.Status, d.SupersededBy = st, supersededBy
		out = d
		ed := Edits{}
		ed.Put(d.Scope, d.Path, JoinFrontMatter(m, body))
		return ed, nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return out, &NotFoundError{Msg: fmt.Sprintf("Decision '%s' not found", ref)}
	}
	return out, err
}
