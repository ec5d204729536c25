package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
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

// Apply validates every item of the batch first (nothing is written when one is invalid), then commits
// them together with op's message. It returns the decisions as numbered.
func (s *Store) Apply(ctx context.Context, op Op, b Batch) (*Committed, []Decision, error) {
	for _, e := range b.Entries {
		if err := ValidKey(e.Key); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", e.Kind.Name, err)
		}
		if !utf8.ValidString(e.Content) {
			return nil, nil, invalidf("%s %s: the content is not UTF-8 text", e.Kind.Name, e.Key)
		}
	}
	for _, sk := range b.Skills {
		if err := ValidKey(sk.Name); err != nil {
			return nil, nil, fmt.Errorf("skill: %w", err)
		}
		if err := ValidText("skill "+sk.Name+" SKILL.md", string(sk.Content)); err != nil {
			return nil, nil, err
		}
	}
	for _, d := range b.Decisions {
		if strings.TrimSpace(d.Title) == "" {
			return nil, nil, fmt.Errorf("decision from %s: a decision needs a title", d.Source)
		}
		if err := validFields("decision from "+d.Source, d); err != nil {
			return nil, nil, err
		}
	}
	author, err := s.Repo.Identity(ctx)
	if err != nil {
		return nil, nil, err
	}
	who := author.Name + " <" + author.Email + ">"
	var decisions []Decision
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		decisions = nil
		ed := Edits{}
		for _, e := range b.Entries {
			if err := s.entryEdits(ctx, v, e.Kind, e.SetEntry, who, ed); err != nil {
				return nil, err
			}
		}
		for _, sk := range b.Skills {
			sc := sk.Scope
			if sc == "" {
				sc = Public
			}
			if _, _, err := v.Read(ctx, skillPath(sk.Name)); err != nil {
				if err := refuseLookalike(ctx, v, ed, "skill", "skills", "", sk.Name); err != nil {
					return nil, err
				}
			}
			ed.Put(sc, "skills/"+sk.Name+"/SKILL.md", sk.Content)
		}
		existing, err := s.ListDecisions(ctx, v)
		if err != nil {
			return nil, err
		}
		taken := map[int]bool{}
		bySource := map[string]Decision{}
		for _, d := range existing {
			taken[d.ID] = true
			if d.Source != "" {
				bySource[d.Source] = d
			}
		}
		// Decisions with their own number claim it first, in order, so that an ADR folder keeps its numbering.
		order := make([]int, 0, len(b.Decisions))
		for i, d := range b.Decisions {
			if d.Number > 0 {
				order = append(order, i)
			}
		}
		for i, d := range b.Decisions {
			if d.Number <= 0 {
				order = append(order, i)
			}
		}
		for _, i := range order {
			nd := b.Decisions[i]
			if old, ok := bySource[nd.Source]; ok && nd.Source != "" && nd.Body != nil && old.Body == *nd.Body {
				decisions = append(decisions, old) // imported before, unchanged: nothing to do
				continue
			}
			d, e, err := s.decisionPlan(ctx, v, nd, who, taken)
			if err != nil {
				return nil, err
			}
			for sc, ch := range e {
				ed[sc] = append(ed[sc], ch...)
			}
			decisions = append(decisions, d)
		}
		return ed, nil
	})
	return c, decisions, err
}
