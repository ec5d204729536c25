package adapters

import (
	"context"
	"fmt"

	"github.com/ctx-dev/ctx/store"
)

// Content is the public context of a store that an export writes: private and ephemeral entries are
// never in it (docs/adapters.md "What is exported"). Lists are sorted by key, name or decision number.
type Content struct {
	// Project is the project's name from the branch's manifest ("" when it has none).
	Project     string
	Conventions []store.Entry
	Knowledge   []store.Entry
	Decisions   []store.Decision
	// Skills hold each SKILL.md byte for byte in Content.
	Skills []store.Skill
}

// Load reads the public context at the tips of the context refs (not the checked-out tree, so that hand
// edits of .context/ are not exported before `ctx commit` records them). Entries of the private and
// ephemeral scopes are left out. Errors: store.ErrNotInitialized without a context branch, and read errors
// of the store, wrapped.
func Load(ctx context.Context, st *store.Store) (*Content, error) {
	ok, err := st.Initialized(ctx)
	if err != nil {
		return nil, fmt.Errorf("adapters: read the context branch: %w", err)
	}
	if !ok {
		return nil, store.ErrNotInitialized
	}
	v, err := st.RefView(ctx)
	if err != nil {
		return nil, fmt.Errorf("adapters: read the context branch: %w", err)
	}
	c := &Content{}
	m, err := v.ReadManifest(ctx)
	if err != nil {
		return nil, fmt.Errorf("adapters: %w", err)
	}
	c.Project = m.Project.Name
	for _, k := range []struct {
		kind store.Kind
		out  *[]store.Entry
	}{{store.ConventionKind, &c.Conventions}, {store.KnowledgeKind, &c.Knowledge}} {
		es, err := v.ListEntries(ctx, k.kind)
		if err != nil {
			return nil, fmt.Errorf("adapters: list %s: %w", k.kind.Dir, err)
		}
		for _, e := range es {
			if e.Scope == store.Public && store.ValidKey(e.Key) == nil {
				*k.out = append(*k.out, e)
			}
		}
	}
	ds, err := v.ListDecisions(ctx)
	if err != nil {
		return nil, fmt.Errorf("adapters: list decisions: %w", err)
	}
	for _, d := range ds {
		if d.Scope == store.Public {
			c.Decisions = append(c.Decisions, d)
		}
	}
	sks, err := v.ListSkills(ctx)
	if err != nil {
		return nil, fmt.Errorf("adapters: list skills: %w", err)
	}
	for _, sk := range sks {
		// A skill's name becomes a folder name in the work tree: only names ctx itself accepts
		// (docs/format.md "Keys and names"), whatever a fetched branch holds.
		if sk.Scope == store.Public && store.ValidKey(sk.Name) == nil {
			c.Skills = append(c.Skills, sk)
		}
	}
	return c, nil
}
