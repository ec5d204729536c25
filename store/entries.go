package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// Kind is a kind of keyed markdown entry: knowledge or convention.
type Kind struct {
	Name    string // "knowledge", "convention"
	Dir     string // folder on the branch
	Missing string // the not-found text (docs/format.md), with %s for the key
}

// The two kinds of keyed markdown entries (docs/format.md: knowledge and conventions).
var (
	KnowledgeKind  = Kind{Name: "knowledge", Dir: "knowledge", Missing: "Knowledge entry '%s' not found"}
	ConventionKind = Kind{Name: "convention", Dir: "conventions", Missing: "Convention '%s' not found"}
)

// Provenance values of knowledge and conventions (docs/format.md).
var Provenances = []string{"agent_generated", "from_approved_context", "owner_approved", "owner_instruction"}

// Entry is a knowledge entry or a convention (docs/format.md): the body is kept byte for byte.
type Entry struct {
	Key        string `json:"key"`
	Content    string `json:"content"`
	Scope      Scope  `json:"scope"`
	Author     string `json:"author,omitempty"`
	Agent      string `json:"agent,omitempty"`
	UpdatedAt  string `json:"updated_at,omitempty"`
	Provenance string `json:"provenance,omitempty"`
}

func (k Kind) path(key string) string { return k.Dir + "/" + key + ".md" }

// ParseEntry reads an entry file (front matter by ReadFrontMatter). A file without front matter is all
// body. The entry's Content is the body less exactly one final newline (EntryContent).
func ParseEntry(key string, sc Scope, b []byte) Entry {
	fm, body := ReadFrontMatter(b)
	return Entry{Key: key, Scope: sc, Content: EntryContent(body), Author: fm.Values["author"], Agent: fm.Values["agent"],
		UpdatedAt: fm.Values["updated_at"], Provenance: fm.Values["provenance"]}
}

// EntryContent is the content of a knowledge or convention entry whose file has body: the body without
// its final newline, exactly one "\n" removed when there is one (docs/format.md "Knowledge and
// conventions"). A write stores content + "\n" (EntryBody), so that every entry file ends in a newline as
// git users expect, and every content reads back exactly as written, newlines of its own included. A body
// without a final newline (written by a ctx before this rule, or by hand) reads as it is.
func EntryContent(body []byte) string { return strings.TrimSuffix(string(body), "\n") }

// EntryBody is the body an entry's file holds for content: content and one newline (see EntryContent).
func EntryBody(content string) []byte { return []byte(content + "\n") }

// GetEntry reads one entry; a *NotFoundError with the not-found text of docs/format.md when absent.
func (v *View) GetEntry(ctx context.Context, k Kind, key string) (Entry, error) {
	if err := normKey(&key); err != nil {
		return Entry{}, err
	}
	b, sc, err := v.Read(ctx, k.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, &NotFoundError{Msg: fmt.Sprintf(k.Missing, key)}
	}
	if err != nil {
		return Entry{}, err
	}
	return ParseEntry(key, sc, b), nil
}

// ListEntries lists every entry of a kind in every scope, ordered by key.
func (v *View) ListEntries(ctx context.Context, k Kind) ([]Entry, error) {
	names, err := v.List(ctx, k.Dir)
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for _, n := range names {
		key, ok := strings.CutSuffix(n.Name, ".md")
		if n.Dir || !ok {
			continue
		}
		b, err := v.ReadIn(ctx, n.Scope, k.Dir+"/"+n.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, ParseEntry(key, n.Scope, b))
	}
	return out, nil
}

// ListEntryHeads is ListEntries reading at most n bytes of each entry (n > 0): its front matter and the
// beginning of its body, whatever the entries' sizes, for listings that show a line of each (ctx knowledge
// list). An entry longer than n has only its first n bytes parsed, so its Content is the beginning of the
// body (possibly cut inside a UTF-8 sequence at the end: show its first line only).
func (v *View) ListEntryHeads(ctx context.Context, k Kind, n int64) ([]Entry, error) {
	names, err := v.List(ctx, k.Dir)
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for _, e := range names {
		key, ok := strings.CutSuffix(e.Name, ".md")
		if e.Dir || !ok {
			continue
		}
		b, _, err := v.ReadPrefix(ctx, e.Scope, k.Dir+"/"+e.Name, n)
		if err != nil {
			return nil, err
		}
		out = append(out, ParseEntry(key, e.Scope, b))
	}
	return out, nil
}

// SetEntry is the input of SetEntry: Scope "" keeps the entry's current scope (public for a new one).
type SetEntry struct {
	Key, Content string
	Scope        Scope
	Provenance   string
}

// SetEntry writes an entry (one commit; none when nothing changed). Scope "" keeps the entry where it
// is; naming another scope than the one holding it is an error wrapping ErrScopeClash (a write never
// moves an entry: SetScope does), and nothing is written. The content is stored byte for byte, followed
// by one newline that reading removes (EntryBody, EntryContent); content equal to what the entry holds
// (EntryContent of its body, so an older file without the newline too) writes nothing. The
// front matter keeps unknown keys of the previous version and records author, agent, updated_at,
// provenance and scope.
func (s *Store) SetEntry(ctx context.Context, k Kind, in SetEntry) (*Committed, error) {
	if err := normKey(&in.Key); err != nil {
		return nil, err
	}
	if !utf8.ValidString(in.Content) {
		return nil, invalidf("%s %s: the content is not UTF-8 text (entries are markdown; JSON and MCP readers cannot carry other bytes)", k.Name, in.Key)
	}
	if strings.TrimSpace(in.Content) == "" {
		return nil, invalidf("%s %s: the content is empty: an entry holds text (to remove the entry: ctx %s rm %s)", k.Name, in.Key, k.Name, in.Key)
	}
	if in.Provenance != "" && !contains(Provenances, in.Provenance) {
		return nil, invalidf("invalid provenance %q: use one of %s", in.Provenance, strings.Join(Provenances, ", "))
	}
	author, err := s.repo.Identity(ctx)
	if err != nil {
		return nil, err
	}
	op := Op{Name: k.Name + ".set", Key: in.Key, Summary: fmt.Sprintf("set %s %s", k.Name, in.Key)}
	who := author.Name + " <" + author.Email + ">"
	return s.Write(ctx, op, func(v *View) (Edits, error) {
		ed := Edits{}
		return ed, s.entryEdits(ctx, v, k, in, who, ed)
	})
}

// entryEdits adds to ed the edits that set an entry on view v (see SetEntry).
func (s *Store) entryEdits(ctx context.Context, v *View, k Kind, in SetEntry, author string, ed Edits) error {
	p := k.path(in.Key)
	old, oldScope, err := v.Read(ctx, p)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !exists {
		if err := refuseLookalike(ctx, v, ed, k.Name, k.Dir, ".md", in.Key); err != nil {
			return err
		}
	}
	sc := in.Scope
	if sc == "" {
		sc = Public
		if exists {
			sc = oldScope
		}
	}
	if exists && sc != oldScope {
		return scopeClash(k.Name, in.Key, oldScope, sc)
	}
	m := NewMeta()
	if exists {
		if fm, body, ok := SplitFrontMatter(old); ok {
			if pm, err := ParseMeta(fm); err == nil {
				m = pm
			}
			// Unchanged content and scope: nothing to write, not even a new timestamp.
			if EntryContent(body) == in.Content && sc == oldScope && (in.Provenance == "" || in.Provenance == m.String("provenance")) {
				return nil
			}
		}
	}
	prov := in.Provenance
	if prov == "" {
		prov = m.String("provenance")
	}
	if prov == "" {
		prov = "owner_instruction"
		if s.Actor.Agent != "cli" {
			prov = "agent_generated"
		}
	}
	m.Set("author", author)
	m.Set("agent", s.Actor.Agent)
	m.Set("updated_at", now())
	m.Set("provenance", prov)
	m.Set("scope", string(sc))
	ed.Put(sc, p, JoinFrontMatter(m, EntryBody(in.Content)))
	return nil
}

// RemoveEntry deletes an entry from whichever scope holds it; a *NotFoundError when absent.
func (s *Store) RemoveEntry(ctx context.Context, k Kind, key string) (*Committed, error) {
	if err := normKey(&key); err != nil {
		return nil, err
	}
	p := k.path(key)
	op := Op{Name: k.Name + ".rm", Key: key, Summary: fmt.Sprintf("remove %s %s", k.Name, key)}
	return s.Write(ctx, op, func(v *View) (Edits, error) {
		ed := Edits{}
		for _, sc := range Scopes {
			if _, err := v.ReadIn(ctx, sc, p); err == nil {
				ed.Del(sc, p)
			}
		}
		if len(ed) == 0 {
			return nil, &NotFoundError{Msg: fmt.Sprintf(k.Missing, key)}
		}
		return ed, nil
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
