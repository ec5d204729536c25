package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
			b, old, err := v.Read(ctx, p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &NotFoundError{Msg: fmt.Sprintf(kd.Missing, key)}
			}
			if err != nil || old == sc {
				return nil, err
			}
			if fm, body, ok := SplitFrontMatter(b); ok {
				if m, err := ParseMeta(fm); err == nil {
					m.Set("scope", string(sc))
					b = JoinFrontMatter(m, body)
				}
			}
			ed := Edits{}
			ed.Put(sc, p, b)
			ed.Del(old, p)
			return ed, nil
		}
	case "decision":
		fn = func(v *View) (Edits, error) {
			d, err := v.FindDecision(ctx, key)
			if err != nil || d.Scope == sc {
				return nil, err
			}
			b, err := v.ReadIn(ctx, d.Scope, d.Path)
			if err != nil {
				return nil, err
			}
			ed := Edits{}
			ed.Put(sc, d.Path, b)
			ed.Del(d.Scope, d.Path)
			return ed, nil
		}
	case "skill":
		fn = func(v *View) (Edits, error) {
			old, _, err := findSkill(ctx, v, key)
			if err != nil || old == sc {
				return nil, err
			}
			ed := Edits{}
			return ed, moveFolder(ctx, v, old, sc, skillDir(key), ed)
		}
	default:
		return nil, fmt.Errorf("set scope: unknown kind %q: use knowledge, convention, decision or skill", kind)
	}
	c, err := s.Write(ctx, op, fn)
	return c, wrapErr("set scope of "+k+" "+key, err)
}
