package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// ErrScopeClash is wrapped by the error of a write that names a scope other than the one holding the
// entry (it also wraps ErrInvalid). A write never moves or removes an entry it was not asked to: moving
// is SetScope's job alone (docs/format.md "Scopes").
var ErrScopeClash = errors.New("the entry is in another scope")

// scopeClash is the ErrScopeClash error for kind ("knowledge", "convention", "skill") and key held in
// scope have while the write asked for want.
func scopeClash(kind, key string, have, want Scope) error {
	return &invalidError{wrapped: ErrScopeClash, msg: fmt.Sprintf(
		"%s %s is %s, not %s: a write never moves an entry to another scope; move it first with `ctx %s scope %s %s` "+
			"(MCP: context_set_scope), or choose another key", kind, key, have, want, kind, key, want)}
}

// SetScope moves an entry to another scope in one step: one Write, under the one ctx lock,
// that deletes it from the ref of its current scope and writes it to the ref of the new one (docs/format.md:
// an entry lives in exactly one ref). kind is "knowledge", "convention", "decision" or "skill" (plurals
// accepted). key is the key, the skill name, or for a decision its id or exact title. A skill moves with
// its whole folder (SKILL.md, feedback, usage, proposals). Knowledge and conventions get their `scope`
// front-matter field updated (docs/format.md); decisions and SKILL.md have no such field and move byte for
// byte. Already in that scope: no commit. Missing: *NotFoundError with the not-found text of docs/format.md.
// An entry a merge left in two or more scopes (a "scopes" Clash) ends in scope alone: the copy scope holds
// stays as it is and the others are removed; when scope holds none, the copy read (ephemeral, private,
// public first) moves there and the others are removed.
func (s *Store) SetScope(ctx context.Context, kind, key string, scope Scope) (*Committed, error) {
	sc, err := ParseScope(string(scope))
	if err != nil {
		return nil, err
	}
	k := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(kind)), "s")
	if k != "decision" {
		if err := normKey(&key); err != nil {
			return nil, err
		}
	}
	op := Op{Name: k + ".scope", Key: key, Summary: fmt.Sprintf("move %s %s to %s", k, key, sc)}
	var fn func(v *View) (Edits, error)
	switch k {
	case "knowledge", "convention":
		kd := KnowledgeKind
		if k == "convention" {
			kd = ConventionKind
		}
		fn = func(v *View) (Edits, error) {
			p := kd.path(key)
			b, _, err := v.Read(ctx, p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &NotFoundError{Msg: fmt.Sprintf(kd.Missing, key)}
			}
			if err != nil {
				return nil, err
			}
			ed, held, err := otherCopies(ctx, v, p, sc)
			if err != nil || held {
				// Already in sc: nothing to do, or the copies a merge left in other scopes to remove.
				return ed, err
			}
			if fm, body, ok := SplitFrontMatter(b); ok {
				if m, err := ParseMeta(fm); err == nil {
					m.Set("scope", string(sc))
					b = JoinFrontMatter(m, body)
				}
			}
			ed.Put(sc, p, b) // ed deletes it from old (and from a third scope holding a copy)
			return ed, nil
		}
	case "decision":
		// Ctx-Key is the decision's number, not the title it may be named by (decisionKey).
		var found Decision
		op.KeyOf = func() string { return decisionKey(found, key) }
		fn = func(v *View) (Edits, error) {
			d, err := v.FindDecision(ctx, key)
			if err != nil {
				return nil, err
			}
			found = d
			ed, held, err := otherCopies(ctx, v, d.Path, sc)
			if err != nil || held {
				return ed, err
			}
			b, err := v.ReadIn(ctx, d.Scope, d.Path)
			if err != nil {
				return nil, err
			}
			ed.Put(sc, d.Path, b)
			return ed, nil
		}
	case "skill":
		fn = func(v *View) (Edits, error) {
			old, _, err := findSkill(ctx, v, key)
			if err != nil {
				return nil, err
			}
			if _, err := v.ReadIn(ctx, sc, skillPath(key)); err == nil {
				// SCOPE holds the skill, and perhaps another scope too (a merge; scopeClashes): its
				// folder stays, the others' go.
				ed := Edits{}
				return ed, dropSkillCopies(ctx, v, key, ed, sc)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			ed := Edits{}
			// A copy in a third scope (a merge) goes too: the entry ends in SCOPE alone.
			if err := dropSkillCopies(ctx, v, key, ed, sc, old); err != nil {
				return nil, err
			}
			return ed, moveFolder(ctx, v, old, sc, skillDir(key), ed)
		}
	default:
		return nil, fmt.Errorf("set scope: unknown kind %q: use knowledge, convention, decision or skill", kind)
	}
	c, err := s.Write(ctx, op, fn)
	return c, wrapErr("set scope of "+k+" "+key, err)
}

// otherCopies returns the edits that delete file p from every scope but keep that holds it, and whether
// keep holds it. An entry is in one scope's ref, but a merge can leave it in two (scopeClashes): SetScope
// then keeps the copy of the scope asked for, or moves the one read, and removes the others.
func otherCopies(ctx context.Context, v *View, p string, keep Scope) (Edits, bool, error) {
	ed, held := Edits{}, false
	for _, o := range Scopes {
		_, err := v.ReadIn(ctx, o, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, false, err
		case o == keep:
			held = true
		default:
			ed.Del(o, p)
		}
	}
	return ed, held, nil
}

// dropSkillCopies adds to ed the deletion of the skill key's folder in every scope but keep (a skill held
// by two scopes after a merge: scopeClashes).
func dropSkillCopies(ctx context.Context, v *View, key string, ed Edits, keep ...Scope) error {
	for _, o := range Scopes {
		if slices.Contains(keep, o) {
			continue
		}
		files, err := filesUnder(ctx, v, o, skillDir(key))
		if err != nil {
			return err
		}
		for _, f := range files {
			ed.Del(o, f)
		}
	}
	return nil
}
