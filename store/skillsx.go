package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/merge"
	"github.com/google/uuid"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// The sidecar files of a skill folder (docs/format.md).
const (
	SkillFeedbackFile = ".feedback.ndjson" // LayoutFlat; LayoutSharded: .feedback/YYYY-MM.ndjson
	SkillUsageFile    = ".usage.ndjson"    // LayoutFlat; LayoutSharded: .usage/YYYY-MM.ndjson
	SkillProposalsDir = ".proposals"
)

// MaxSkillDescription is the longest description of the Agent Skills format (its specification: a
// non-empty description of at most 1024 characters).
const MaxSkillDescription = 1024

// ProposalStatuses are the SkillProposal status values (docs/format.md "Records").
var ProposalStatuses = []string{"pending", "accepted", "rejected", "upstream"}

func skillDir(name string) string { return "skills/" + name }

func skillMissing(name string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Skill '%s' not found", name)}
}

// findSkill returns the scope and bytes of a skill's SKILL.md; *NotFoundError "Skill 'x' not found"
// (docs/format.md "Not-found texts") when absent.
func findSkill(ctx context.Context, v *View, name string) (Scope, []byte, error) {
	if err := normKey(&name); err != nil {
		return "", nil, err
	}
	b, sc, err := v.Read(ctx, skillPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, skillMissing(name)
	}
	return sc, b, err
}

// renderSkillBody is the markdown body written for new instructions: a blank line after the front
// matter, the instructions, a final newline (the usual shape of a SKILL.md).
func renderSkillBody(instructions string) []byte {
	if instructions == "" {
		return nil
	}
	b := "\n" + strings.TrimLeft(instructions, "\n")
	if !strings.HasSuffix(b, "\n") {
		b += "\n"
	}
	return []byte(b)
}

// skillContent computes the SKILL.md for name/description/instructions given the current file (nil when
// new). Parts that do not change keep their original bytes: the front matter when name and description
// are the same, the body when it equals the instructions (ignoring surrounding blank space). Unknown
// front-matter keys are kept (the file is parsed with yaml.v3).
//
// Instructions that begin with a front-matter block that does not parse are refused (an error for which
// IsInvalid is true, naming the YAML error): stored as they are, they would give the file a second block
// that agents read as part of the instructions.
func skillContent(old []byte, name, description, instructions string) ([]byte, error) {
	// Instructions that are a whole SKILL.md (front matter, then the body): its front matter is the skill's,
	// with the name and description given, not a second block in the body.
	if fm, body, ok := SplitFrontMatter([]byte(instructions)); ok {
		m, err := ParseMeta(fm)
		if err != nil {
			return nil, invalidf("skill %s: the instructions begin with a front-matter block that does not parse (%v); fix the block, or remove it and pass name and description as arguments", name, err)
		}
		m.Set("name", name)
		m.Set("description", description)
		return JoinFrontMatter(m, renderSkillBody(string(body))), nil
	}
	if old != nil {
		if fm, body, ok := SplitFrontMatter(old); ok {
			if m, err := ParseMeta(fm); err == nil {
				bodySame := strings.TrimSpace(string(body)) == strings.TrimSpace(instructions)
				fmSame := m.String("name") == name && m.String("description") == description
				newBody := body
				if !bodySame {
					newBody = renderSkillBody(instructions)
				}
				if fmSame {
					prefix := old[:len(old)-len(body)]
					return append(append([]byte{}, prefix...), newBody...), nil
				}
				m.Set("name", name)
				m.Set("description", description)
				return JoinFrontMatter(m, newBody), nil
			}
		}
	}
	m := NewMeta()
	m.Set("name", name)
	m.Set("description", description)
	return JoinFrontMatter(m, renderSkillBody(instructions)), nil
}

// AddSkill writes skills/<name>/SKILL.md in the Agent Skills format (front matter name and description,
// then the instructions as the markdown body), one commit; none when nothing changes. An existing
// SKILL.md keeps its unknown front-matter keys, and its original bytes where they do not change; instructions
// that are a whole SKILL.md bring their own front matter instead (name and description set from the
// arguments). scope ""
// keeps the skill's current scope (public for a new one); another scope than the one holding it is an
// error wrapping ErrScopeClash (SetScope moves a skill). The name must pass ValidSkillName; the description
// must be 1..1024 characters (Agent Skills specification).
func (s *Store) AddSkill(ctx context.Context, name, description, instructions string, scope Scope) (Skill, *Committed, error) {
	name, err := ValidSkillName(name)
	if err != nil {
		return Skill{}, nil, fmt.Errorf("skill: %w", err)
	}
	if strings.TrimSpace(description) == "" {
		return Skill{}, nil, errors.New("skill: description is required (Agent Skills format)")
	}
	if err := validFields("skill "+name, struct{ Description, Instructions string }{description, instructions}); err != nil {
		return Skill{}, nil, err
	}
	if n := utf8.RuneCountInString(description); n > MaxSkillDescription {
		return Skill{}, nil, fmt.Errorf("skill: description is %d characters, at most %d allowed (Agent Skills format)", n, MaxSkillDescription)
	}
	if scope != "" {
		if _, err := ParseScope(string(scope)); err != nil {
			return Skill{}, nil, err
		}
	}
	var out Skill
	op := Op{Name: "skill.add", Key: name, Summary: "add skill " + name}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		old, oldScope, err := v.Read(ctx, skillPath(name))
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if !exists {
			old = nil
			if err := refuseLookalike(ctx, v, nil, "skill", "skills", "", name); err != nil {
				return nil, err
			}
		}
		sc := scope
		if sc == "" {
			sc = Public
			if exists {
				sc = oldScope
			}
		}
		content, err := skillContent(old, name, description, instructions)
		if err != nil {
			return nil, err
		}
		out = ParseSkill(name, sc, content)
		ed := Edits{}
		if exists && sc != oldScope {
			return nil, scopeClash("skill", name, oldScope, sc)
		} else if exists && bytes.Equal(content, old) {
			return nil, nil
		}
		ed.Put(sc, skillPath(name), content)
		return ed, nil
	})
	if err != nil {
		return Skill{}, nil, wrapErr("add skill "+name, err)
	}
	return out, c, nil
}

// moveFolder adds to ed the edits that move every file under dir from scope from to scope to; files of
// dir already in scope to that from does not have are deleted, so the folder ends up exactly as it was.
func moveFolder(ctx context.Context, v *View, from, to Scope, dir string, ed Edits) error {
	src, err := filesUnder(ctx, v, from, dir)
	if err != nil {
		return err
	}
	dst, err := filesUnder(ctx, v, to, dir)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, p := range src {
		b, err := v.ReadIn(ctx, from, p)
		if err != nil {
			return err
		}
		have[p] = true
		ed.Put(to, p, b)
		ed.Del(from, p)
	}
	for _, p := range dst {
		if !have[p] {
			ed.Del(to, p)
		}
	}
	return nil
}

// RemoveSkill deletes the skill's folder (SKILL.md and its sidecars) from every scope holding it, one
// commit per scope touched; *NotFoundError "Skill 'x' not found" when no scope has it.
func (s *Store) RemoveSkill(ctx context.Context, name string) (*Committed, error) {
	if err := normKey(&name); err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	op := Op{Name: "skill.rm", Key: name, Summary: "remove skill " + name}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		ed := Edits{}
		for _, sc := range Scopes {
			files, err := filesUnder(ctx, v, sc, skillDir(name))
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				ed.Del(sc, f)
			}
		}
		if len(ed) == 0 {
			return nil, skillMissing(name)
		}
		return ed, nil
	})
	return c, wrapErr("remove skill "+name, err)
}

// SkillUsage is one usage event of skills/<name>/.usage.ndjson (docs/format.md "Records"):
// {"id", "session_id", "agent", "timestamp"}.
type SkillUsage struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	Timestamp string `json:"timestamp"`
}

// SkillFeedback is the SkillFeedback record (docs/format.md "Records"; context://skills/{name}/feedback), one
// line of skills/<name>/.feedback.ndjson: {"id", "agent", "rating", "comment", "timestamp"}. RateSkill writes
// whole ratings 1..5; Rating is a float so that records written elsewhere with a fractional rating still read
// (and count in SkillStats) as they are.
type SkillFeedback struct {
	ID        string  `json:"id"`
	Agent     string  `json:"agent"`
	Rating    float64 `json:"rating"`
	Comment   string  `json:"comment"`
	Timestamp string  `json:"timestamp"`
}

// ReportSkillUsage appends a usage event {id, session_id, agent, timestamp} to the skill's
// .usage.ndjson (in the skill's scope), one commit. sessionID "" is s.Actor.Session.
func (s *Store) ReportSkillUsage(ctx context.Context, name, sessionID string) (SkillUsage, *Committed, error) {
	if sessionID == "" {
		sessionID = s.Actor.Session
	}
	u := SkillUsage{ID: uuid.NewString(), SessionID: sessionID, Agent: s.Actor.Agent, Timestamp: now()}
	op := Op{Name: "skill.usage", Key: name, Summary: "report usage of skill " + name}
	c, err := s.appendSkillLog(ctx, op, name, "usage", u)
	if err != nil {
		return SkillUsage{}, nil, err
	}
	return u, c, nil
}

// RateSkill appends SkillFeedback {id, agent, rating, comment, timestamp} to the skill's
// .feedback.ndjson, one commit. A rating outside 1..5 is an error and writes
// nothing.
func (s *Store) RateSkill(ctx context.Context, name string, rating int, comment string) (SkillFeedback, *Committed, error) {
	if rating < 1 || rating > 5 {
		return SkillFeedback{}, nil, invalidf("rate skill %s: rating %d is out of range: use a whole number from 1 to 5", name, rating)
	}
	if err := ValidText("rate skill "+name+": comment", comment); err != nil {
		return SkillFeedback{}, nil, err
	}
	f := SkillFeedback{ID: uuid.NewString(), Agent: s.Actor.Agent, Rating: float64(rating), Comment: comment, Timestamp: now()}
	op := Op{Name: "skill.rate", Key: name, Summary: fmt.Sprintf("rate skill %s %d", name, rating)}
	c, err := s.appendSkillLog(ctx, op, name, "feedback", f)
	if err != nil {
		return SkillFeedback{}, nil, err
	}
	return f, c, nil
}

func (s *Store) appendSkillLog(ctx context.Context, op Op, name, log string, rec any) (*Committed, error) {
	if err := normKey(&name); err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		sc, _, err := findSkill(ctx, v, name)
		if err != nil {
			return nil, err
		}
		layout, err := v.Layout(ctx)
		if err != nil {
			return nil, err
		}
		var key logKey
		if b, err := json.Marshal(rec); err == nil {
			_ = json.Unmarshal(b, &key)
		}
		p := skillLogPath(layout, name, log, key.Timestamp)
		old, err := v.ReadIn(ctx, sc, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		b, err := appendLine(old, rec)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(sc, p, b)
		return ed, nil
	})
	return c, wrapErr(op.Summary, err)
}

// logKey is the ordering key of an .ndjson line (docs/format.md: "ordered by timestamp, then id").
type logKey struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
}

func (a logKey) less(b logKey) bool {
	if c := compareTimes(a.Timestamp, b.Timestamp); c != 0 {
		return c < 0
	}
	return a.ID < b.ID
}

// appendLine adds rec as one compact JSON line to an .ndjson log, at its place by timestamp then id
// (after every line that is not later); the other lines are kept byte for byte.
func appendLine(old []byte, rec any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	line := buf.Bytes() // ends in '\n'
	var key logKey
	_ = json.Unmarshal(line, &key)
	lines := splitKeepNL(old)
	at := len(lines)
	for at > 0 {
		var k logKey
		if json.Unmarshal(lines[at-1], &k) != nil || !key.less(k) {
			break
		}
		at--
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i == at {
			out.Write(line)
		}
		out.Write(l)
		if !bytes.HasSuffix(l, []byte("\n")) {
			out.WriteByte('\n')
		}
	}
	if at == len(lines) {
		out.Write(line)
	}
	return out.Bytes(), nil
}

// splitKeepNL splits text into lines that keep their '\n' (the last may lack it); blank lines dropped.
func splitKeepNL(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i+1], b[i+1:]
		}
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// readLog decodes the lines of a skill log (log "usage" or "feedback", in the skill's scope): the flat
// skills/<name>/.<log>.ndjson and the month files skills/<name>/.<log>/YYYY-MM.ndjson together, a record id
// found twice read once, ordered by timestamp then id (docs/format.md "Logs"). Lines that are not valid
// JSON objects are skipped. No file: an empty log.
func readLog[T any](ctx context.Context, v *View, sc Scope, name, log string) ([]T, error) {
	paths, err := skillLogPaths(ctx, v, sc, name, log)
	if err != nil {
		return nil, err
	}
	var parts [][]byte
	for _, p := range paths {
		b, err := v.ReadIn(ctx, sc, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, b)
	}
	out := []T{}
	if len(parts) == 0 {
		return out, nil
	}
	all := parts[0]
	if len(parts) > 1 {
		all = merge.JoinLogs(parts...)
	}
	for _, l := range splitKeepNL(all) {
		var x T
		if json.Unmarshal(l, &x) == nil {
			out = append(out, x)
		}
	}
	return out, nil
}

// SkillFeedback returns the skill's feedback records in file order (as context://skills/{name}/feedback
// serves them); *NotFoundError "Skill 'x' not found" when the skill does not exist.
func (v *View) SkillFeedback(ctx context.Context, name string) ([]SkillFeedback, error) {
	sc, _, err := findSkill(ctx, v, name)
	if err != nil {
		return nil, err
	}
	return readLog[SkillFeedback](ctx, v, sc, name, "feedback")
}

// SkillUsages returns the skill's usage events in file order.
func (v *View) SkillUsages(ctx context.Context, name string) ([]SkillUsage, error) {
	sc, _, err := findSkill(ctx, v, name)
	if err != nil {
		return nil, err
	}
	return readLog[SkillUsage](ctx, v, sc, name, "usage")
}

// SkillStats is the SkillStats of docs/format.md "Records" (context://skills/stats):
//
//	{"skill_name", "usage_count", "avg_rating", "rating_count", "last_used", "needs_attention"}
//
// avg_rating is the mean rating rounded to 2 decimals (0 without ratings); last_used is the latest usage
// timestamp, null when never used.
type SkillStats struct {
	SkillName      string  `json:"skill_name"`
	UsageCount     int     `json:"usage_count"`
	AvgRating      float64 `json:"avg_rating"`
	RatingCount    int     `json:"rating_count"`
	LastUsed       *string `json:"last_used"`
	NeedsAttention bool    `json:"needs_attention"`
}

// NeedsAttention is the attention rule of docs/format.md "Records": true when a skill has 2 or more
// ratings and the average rating is below 3.0 (exactly: sum < 3·count, no rounding).
func NeedsAttention(ratings []float64) bool {
	if len(ratings) < 2 {
		return false
	}
	sum := 0.0
	for _, r := range ratings {
		sum += r
	}
	return sum/float64(len(ratings)) < 3.0
}

// SkillStats computes the stats of every skill (ordered by name) from its usage and feedback logs.
func (v *View) SkillStats(ctx context.Context) ([]SkillStats, error) {
	skills, err := v.ListSkills(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SkillStats, 0, len(skills))
	for _, sk := range skills {
		uses, err := readLog[SkillUsage](ctx, v, sk.Scope, sk.Name, "usage")
		if err != nil {
			return nil, err
		}
		fb, err := readLog[SkillFeedback](ctx, v, sk.Scope, sk.Name, "feedback")
		if err != nil {
			return nil, err
		}
		st := SkillStats{SkillName: sk.Name, UsageCount: len(uses), RatingCount: len(fb)}
		for _, u := range uses {
			if st.LastUsed == nil || compareTimes(u.Timestamp, *st.LastUsed) > 0 {
				t := u.Timestamp
				st.LastUsed = &t
			}
		}
		ratings := make([]float64, len(fb))
		sum := 0.0
		for i, f := range fb {
			ratings[i] = f.Rating
			sum += f.Rating
		}
		if len(fb) > 0 {
			st.AvgRating = math.Round(sum/float64(len(fb))*100) / 100
		}
		st.NeedsAttention = NeedsAttention(ratings)
		out = append(out, st)
	}
	return out, nil
}

// SkillProposal is the SkillProposal record (docs/format.md "Records"; context://skills/{name}/proposals),
// stored as skills/<name>/.proposals/<id>.json:
//
//	{"id", "skill_name", "agent", "rationale", "proposed_content", "diff_summary", "status",
//	 "created_at", "resolved_at" (null while pending), "resolved_by" ("" while pending)}
//
// diff_summary is a unified diff (@@ hunks, no file header) of SKILL.md, current → proposed.
type SkillProposal struct {
	ID              string  `json:"id"`
	SkillName       string  `json:"skill_name"`
	Agent           string  `json:"agent"`
	Rationale       string  `json:"rationale"`
	ProposedContent string  `json:"proposed_content"`
	DiffSummary     string  `json:"diff_summary"`
	Status          string  `json:"status"`
	CreatedAt       string  `json:"created_at"`
	ResolvedAt      *string `json:"resolved_at"`
	ResolvedBy      string  `json:"resolved_by"`
}

// proposalID is the id of the skill's proposal that id names: itself when a proposal has that id, else
// the one proposal whose id starts with it when it is a prefix of at least minIDPrefix hex digits (and
// dashes), as conflict ids are taken; several: an error listing them. Anything else is returned as it
// is, for ResolveProposal to report as not found.
func (s *Store) proposalID(ctx context.Context, name, id string) (string, error) {
	prefix := strings.ToLower(id)
	if len(strings.ReplaceAll(prefix, "-", "")) < minIDPrefix || strings.Trim(prefix, "0123456789abcdef-") != "" {
		return id, nil
	}
	v, err := s.RefView(ctx)
	if err != nil {
		return "", err
	}
	sc, _, err := findSkill(ctx, v, name)
	if err != nil {
		return id, nil
	}
	if _, err := v.ReadIn(ctx, sc, proposalPath(name, id)); err == nil {
		return id, nil
	}
	es, err := v.r.List(ctx, sc, skillDir(name)+"/"+SkillProposalsDir)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, e := range es {
		if full, ok := strings.CutSuffix(e.Name, ".json"); ok && !e.Dir && strings.HasPrefix(full, prefix) {
			ids = append(ids, full)
		}
	}
	switch len(ids) {
	case 0:
		return id, nil
	case 1:
		return ids[0], nil
	}
	return "", invalidf("proposal id %s is ambiguous: %d proposals of skill %s start with it (%s): pass more of the id", id, len(ids), name, strings.Join(ids, ", "))
}

func proposalPath(name, id string) string {
	return skillDir(name) + "/" + SkillProposalsDir + "/" + id + ".json"
}

// ProposeSkill records an improvement proposal for an existing skill: the whole proposed SKILL.md, the
// rationale, and a unified diff current → proposed made with go-diff; status pending. One commit, in the
// skill's scope. A proposal identical to the current SKILL.md is an error (nothing to propose).
func (s *Store) ProposeSkill(ctx context.Context, name, proposedContent, rationale string) (SkillProposal, *Committed, error) {
	if err := normKey(&name); err != nil {
		return SkillProposal{}, nil, fmt.Errorf("skill: %w", err)
	}
	if strings.TrimSpace(proposedContent) == "" {
		return SkillProposal{}, nil, invalidf("propose skill %s: the proposed content is empty", name)
	}
	if err := validFields("propose skill "+name, struct{ Content, Rationale string }{proposedContent, rationale}); err != nil {
		return SkillProposal{}, nil, err
	}
	// The proposal replaces SKILL.md when accepted: it must stay the same skill (Agent Skills: the name in
	// the front matter is the skill's folder name).
	if fm, _, ok := SplitFrontMatter([]byte(proposedContent)); ok {
		m, err := ParseMeta(fm)
		if err != nil {
			return SkillProposal{}, nil, invalidf("propose skill %s: the proposed front matter does not parse: %v", name, err)
		}
		if n := m.String("name"); n != "" && n != name {
			return SkillProposal{}, nil, invalidf("propose skill %s: the proposed SKILL.md is named %q; a proposal keeps the skill's name", name, n)
		}
	}
	id := uuid.NewString()
	var out SkillProposal
	op := Op{Name: "skill.propose", Key: name, Summary: "propose change to skill " + name}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		sc, cur, err := findSkill(ctx, v, name)
		if err != nil {
			return nil, err
		}
		proposed := withSkillFrontMatter(cur, proposedContent)
		if string(cur) == proposed {
			return nil, invalidf("the proposed content is the same as the current SKILL.md")
		}
		out = SkillProposal{ID: id, SkillName: name, Agent: s.Actor.Agent, Rationale: rationale,
			ProposedContent: proposed, DiffSummary: UnifiedDiff(string(cur), proposed, 3),
			Status: "pending", CreatedAt: now()}
		b, err := MarshalRecord(out)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(sc, proposalPath(name, id), b)
		return ed, nil
	})
	if err != nil {
		return SkillProposal{}, nil, wrapErr("propose skill "+name, err)
	}
	return out, c, nil
}

// withSkillFrontMatter is the whole SKILL.md a proposal stands for: proposed as given when it has front
// matter; else proposed is a new body under cur's front matter, byte for byte (with the blank line that
// separated it from cur's body), so that accepting it keeps the skill's name and description
// (docs/format.md "SkillProposal").
func withSkillFrontMatter(cur []byte, proposed string) string {
	if _, _, ok := SplitFrontMatter([]byte(proposed)); ok {
		return proposed
	}
	_, _, _, body, ok := merge.SplitFrontMatter(cur)
	if !ok {
		return proposed
	}
	head := string(cur[:len(cur)-len(body)])
	sep := body[:len(body)-len(bytes.TrimLeft(body, "\r\n"))]
	return head + string(sep) + strings.TrimLeft(proposed, "\r\n")
}

// ListProposals lists a skill's proposals ordered by created_at then id; status "" lists all, else only
// those with that status (one of pending, accepted, rejected, upstream). *NotFoundError when the skill
// does not exist. name "" lists the proposals of every skill, skill by skill.
func (v *View) ListProposals(ctx context.Context, name, status string) ([]SkillProposal, error) {
	if status != "" && !contains(ProposalStatuses, status) {
		return nil, invalidf("invalid proposal status %q: use one of %s", status, strings.Join(ProposalStatuses, ", "))
	}
	if name == "" {
		skills, err := v.ListSkills(ctx)
		if err != nil {
			return nil, err
		}
		out := []SkillProposal{}
		for _, sk := range skills {
			ps, err := v.ListProposals(ctx, sk.Name, status)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
		return out, nil
	}
	sc, _, err := findSkill(ctx, v, name)
	if err != nil {
		return nil, err
	}
	dir := skillDir(name) + "/" + SkillProposalsDir
	es, err := v.r.List(ctx, sc, dir)
	if err != nil {
		return nil, err
	}
	out := []SkillProposal{}
	for _, e := range es {
		if e.Dir || !strings.HasSuffix(e.Name, ".json") {
			continue
		}
		b, err := v.ReadIn(ctx, sc, dir+"/"+e.Name)
		if err != nil {
			return nil, err
		}
		var p SkillProposal
		if json.Unmarshal(b, &p) != nil {
			continue
		}
		if status == "" || p.Status == status {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := compareTimes(out[i].CreatedAt, out[j].CreatedAt); c != 0 {
			return c < 0
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ResolveProposal settles a pending proposal: decision "accept", "reject" or "upstream" (or the status
// words accepted, rejected, upstream) sets status, resolved_at (now) and resolved_by (the git identity,
// "Name <email>"). Accepting replaces SKILL.md with the proposed content in the same commit that marks the
// proposal accepted. A proposal that is not pending is an error; *NotFoundError when the skill
// or the proposal does not exist.
func (s *Store) ResolveProposal(ctx context.Context, name, id, decision string) (SkillProposal, *Committed, error) {
	status := map[string]string{"accept": "accepted", "accepted": "accepted", "reject": "rejected",
		"rejected": "rejected", "upstream": "upstream"}[strings.ToLower(strings.TrimSpace(decision))]
	if status == "" {
		return SkillProposal{}, nil, fmt.Errorf("invalid decision %q: use accept, reject or upstream", decision)
	}
	if err := normKey(&name); err != nil {
		return SkillProposal{}, nil, fmt.Errorf("skill: %w", err)
	}
	if err := normKey(&id); err != nil {
		return SkillProposal{}, nil, fmt.Errorf("proposal id: %w", err)
	}
	id, err := s.proposalID(ctx, name, id)
	if err != nil {
		return SkillProposal{}, nil, err
	}
	who, err := s.repo.Identity(ctx)
	if err != nil {
		return SkillProposal{}, nil, err
	}
	var out SkillProposal
	verb := map[string]string{"accepted": "accept", "rejected": "reject", "upstream": "upstream"}[status]
	op := Op{Name: "skill.proposal." + verb, Key: name + "/" + id, Summary: fmt.Sprintf("%s proposal %s for skill %s", verb, id, name)}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		sc, _, err := findSkill(ctx, v, name)
		if err != nil {
			return nil, err
		}
		raw, err := v.ReadIn(ctx, sc, proposalPath(name, id))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &NotFoundError{Msg: fmt.Sprintf("Proposal '%s' not found for skill '%s'", id, name)}
		}
		if err != nil {
			return nil, err
		}
		var p SkillProposal
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", proposalPath(name, id), err)
		}
		if p.Status != "pending" {
			return nil, fmt.Errorf("proposal %s is already %s", id, p.Status)
		}
		t := now()
		p.Status, p.ResolvedAt, p.ResolvedBy = status, &t, who.Name+" <"+who.Email+">"
		out = p
		b, err := marshalKeeping(raw, p)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(sc, proposalPath(name, id), b)
		if status == "accepted" {
			content, err := acceptedContent(ctx, v, sc, name, p)
			if err != nil {
				return nil, err
			}
			ed.Put(sc, skillPath(name), content)
		}
		return ed, nil
	})
	if err != nil {
		return SkillProposal{}, nil, wrapErr("resolve proposal "+id, err)
	}
	return out, c, nil
}

// UnifiedDiff renders the line diff of a → b as unified-diff hunks ("@@ -l,n +l,n @@" headers, context
// lines around each change, no file header), computed with go-diff's diffmatchpatch in line mode. A last
// line without a newline is followed by "\ No newline at end of file". Equal texts give "".
func UnifiedDiff(a, b string, context int) string {
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
	type dl struct {
		op   byte
		text string
	}
	var ops []dl
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, l := range splitLines(d.Text) {
			ops = append(ops, dl{op, l})
		}
	}
	// oldNo[i], newNo[i]: lines of a and b before ops[i].
	oldNo, newNo := make([]int, len(ops)+1), make([]int, len(ops)+1)
	for i, o := range ops {
		oldNo[i+1], newNo[i+1] = oldNo[i], newNo[i]
		if o.op != '+' {
			oldNo[i+1]++
		}
		if o.op != '-' {
			newNo[i+1]++
		}
	}
	rng := func(start, count int) string {
		if count == 0 {
			return fmt.Sprintf("%d,0", start)
		}
		if count == 1 {
			return fmt.Sprintf("%d", start+1)
		}
		return fmt.Sprintf("%d,%d", start+1, count)
	}
	var out strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].op == ' ' {
			i++
			continue
		}
		start := max(0, i-context)
		j := i
		for {
			for j < len(ops) && ops[j].op != ' ' {
				j++
			}
			k := j
			for k < len(ops) && ops[k].op == ' ' {
				k++
			}
			if k < len(ops) && k-j <= 2*context {
				j = k
				continue
			}
			break
		}
		end := min(len(ops), j+context)
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rng(oldNo[start], oldNo[end]-oldNo[start]), rng(newNo[start], newNo[end]-newNo[start]))
		for _, o := range ops[start:end] {
			out.WriteByte(o.op)
			out.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

// splitLines splits text into lines as go-diff's line mode does: each line keeps its '\n', a last line
// without one is a line too, and "" has no lines.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// acceptedContent is the SKILL.md an accepted proposal leaves: the proposed content when the skill is as
// it was when the proposal was made (its base, read back from the proposal's diff_summary), else the
// three-way merge (merge.Lines) of the base, the skill as it is now and the proposal, so that an edit made
// since is kept. Changes that overlap are refused (ErrInvalid), naming the proposal: nothing is lost. A
// proposal whose diff does not read back (made by hand) replaces SKILL.md as before.
func acceptedContent(ctx context.Context, v *View, sc Scope, name string, p SkillProposal) ([]byte, error) {
	cur, err := v.ReadIn(ctx, sc, skillPath(name))
	if err != nil {
		return nil, err
	}
	base, ok := proposalBase(p.ProposedContent, p.DiffSummary)
	if !ok || base == string(cur) {
		return []byte(p.ProposedContent), nil
	}
	merged, conflict := merge.Lines([]byte(base), cur, []byte(p.ProposedContent))
	if conflict {
		return nil, invalidf("skill %s changed since proposal %s was made, and the changes overlap the proposal's: nothing accepted; see the proposal (ctx skill proposals %s) and the skill, then propose again or edit the skill", name, p.ID, name)
	}
	return merged, nil
}

// proposalBase reads back the SKILL.md a proposal was made against from the proposed content and its
// unified diff (UnifiedDiff's hunks: "@@ -l,n +l,n @@", context, '-' and '+' lines). ok is false when the
// diff does not fit the proposed content.
func proposalBase(proposed, diff string) (string, bool) {
	if diff == "" {
		return proposed, false
	}
	pl, dl := splitLines(proposed), splitLines(diff)
	var base strings.Builder
	pi := 0
	for i := 0; i < len(dl); i++ {
		l := dl[i]
		if strings.HasPrefix(l, "@@ ") {
			f := strings.Fields(l)
			if len(f) < 3 || !strings.HasPrefix(f[2], "+") {
				return "", false
			}
			startS, countS, hasCount := strings.Cut(f[2][1:], ",")
			start, err := strconv.Atoi(startS)
			if err != nil {
				return "", false
			}
			before := start - 1
			if hasCount && countS == "0" {
				before = start
			}
			if before < pi || before > len(pl) {
				return "", false
			}
			for ; pi < before; pi++ {
				base.WriteString(pl[pi])
			}
			continue
		}
		if l == "" || l[0] == '\\' {
			continue
		}
		text := l[1:]
		if i+1 < len(dl) && strings.HasPrefix(dl[i+1], "\\") {
			text = strings.TrimSuffix(text, "\n")
		}
		switch l[0] {
		case ' ', '+':
			if pi >= len(pl) || pl[pi] != text {
				return "", false
			}
			pi++
			if l[0] == ' ' {
				base.WriteString(text)
			}
		case '-':
			base.WriteString(text)
		default:
			return "", false
		}
	}
	for ; pi < len(pl); pi++ {
		base.WriteString(pl[pi])
	}
	return base.String(), true
}
