package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/lazyre"
)

// AddMember adds {name, machine, added} to manifest.json's team.members (docs/format.md "Records") and bumps
// updated_at, one commit. name must be a valid key (docs/format.md "Keys and names"); machine "" records no
// machine (a teammate added from here is not on this machine). A member already listed with the same name and
// machine is not added twice (no commit; the existing one is returned). The rest of manifest.json, unknown
// fields included, is kept as it is.
func (s *Store) AddMember(ctx context.Context, name, machine string) (Member, *Committed, error) {
	if err := normKey(&name); err != nil {
		return Member{}, nil, fmt.Errorf("member: %w", err)
	}
	if machine != "" {
		if err := normKey(&machine); err != nil {
			return Member{}, nil, fmt.Errorf("machine: %w", err)
		}
	}
	var out Member
	summary := "add member " + name
	if machine != "" {
		summary += " on " + machine
	}
	op := Op{Name: "team.add", Key: name, Summary: summary}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		m, err := v.ReadManifest(ctx)
		if err != nil {
			return nil, err
		}
		for _, mb := range m.Team.Members {
			if mb.Name == name && mb.Machine == machine {
				out = mb
				return nil, nil
			}
		}
		for _, mb := range m.Team.Members {
			if mb.Name != name && Skeleton(mb.Name) == Skeleton(name) {
				return nil, invalidf("member %q looks like the existing member %q (they differ only in characters that look alike: %s): use %q, or a name that reads differently",
					name, mb.Name, describeDiff(name, mb.Name), mb.Name)
			}
		}
		t := now()
		out = Member{Name: name, Machine: machine, Added: t}
		members := append(append([]Member{}, m.Team.Members...), out)
		return editManifest(ctx, v, t, func(obj jsonObject) error {
			team := childObject(obj, "team")
			if err := team.set("members", members); err != nil {
				return err
			}
			return obj.set("team", team)
		})
	})
	if err != nil {
		return Member{}, nil, wrapErr("add member "+name, err)
	}
	return out, c, nil
}

// ListMembers returns manifest.json's team.members in their stored order.
func (v *View) ListMembers(ctx context.Context) ([]Member, error) {
	m, err := v.ReadManifest(ctx)
	if err != nil {
		return nil, err
	}
	return m.Team.Members, nil
}

// ProjectSummary is context://summary (docs/mcp.md):
//
//	{"project": "my-project", "knowledge_count": 12, "convention_count": 3, "decisions_count": 5,
//	 "skills_count": 3, "current_task": "...", "blockers": ["..."]}
//
// Counts cover every scope (as the list resources do); blockers is [] when there are none.
type ProjectSummary struct {
	Project         string   `json:"project"`
	KnowledgeCount  int      `json:"knowledge_count"`
	ConventionCount int      `json:"convention_count"`
	DecisionsCount  int      `json:"decisions_count"`
	SkillsCount     int      `json:"skills_count"`
	CurrentTask     string   `json:"current_task"`
	Blockers        []string `json:"blockers"`
}

// Summary computes the project summary of context://summary: the manifest's project name, the number of
// knowledge entries, conventions, decisions and skills, and the state's current task and blockers.
func (v *View) Summary(ctx context.Context) (ProjectSummary, error) {
	var out ProjectSummary
	m, err := v.ReadManifest(ctx)
	if err != nil {
		return out, err
	}
	out.Project = m.Project.Name
	kn, err := v.ListEntries(ctx, KnowledgeKind)
	if err != nil {
		return out, err
	}
	cv, err := v.ListEntries(ctx, ConventionKind)
	if err != nil {
		return out, err
	}
	ds, err := v.ListDecisions(ctx)
	if err != nil {
		return out, err
	}
	sk, err := v.ListSkills(ctx)
	if err != nil {
		return out, err
	}
	st, err := v.GetState(ctx)
	if err != nil {
		return out, err
	}
	out.KnowledgeCount, out.ConventionCount, out.DecisionsCount, out.SkillsCount = len(kn), len(cv), len(ds), len(sk)
	out.CurrentTask, out.Blockers = st.CurrentTask, st.Blockers
	if out.Blockers == nil {
		out.Blockers = []string{}
	}
	return out, nil
}

// adapterName is the form of a key of manifest.json's adapters: a client name with '_' for '-'
// (claude_code for the client claude-code, as docs/format.md "Records" shows it).
var adapterName = lazyre.New(`^[a-z0-9]+(?:_[a-z0-9]+)*$`)

// SetAdapters sets adapters.<name>.enabled in manifest.json to the value given for each name (docs/format.md
// "Records": {"adapters": {"claude_code": {"enabled": true}}}) and bumps updated_at, one commit; nothing is
// committed when every one already holds its value. The names are adapterName's form (an error otherwise,
// nothing written); an adapter's other fields and the rest of manifest.json, unknown fields included, are
// kept as they are. `ctx adapters enable|disable` calls it: the manifest says which clients the project
// was last set to use, while what refreshes a work tree's files is that work tree's record
// (docs/adapters.md "Refresh").
func (s *Store) SetAdapters(ctx context.Context, enabled map[string]bool) (*Committed, error) {
	names := slices.Sorted(maps.Keys(enabled))
	if len(names) == 0 {
		return &Committed{Commits: map[Scope]gitstore.Hash{}}, nil
	}
	var parts []string
	for _, n := range names {
		if !adapterName.Get().MatchString(n) {
			return nil, invalidf("adapter name %q: use lowercase letters, digits and single underscores (claude_code)", n)
		}
		verb := "disable"
		if enabled[n] {
			verb = "enable"
		}
		parts = append(parts, verb+" "+n)
	}
	op := Op{Name: "adapters.set", Key: strings.Join(names, ","), Summary: "adapters: " + strings.Join(parts, ", ")}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		m, err := v.ReadManifest(ctx)
		if err != nil {
			return nil, err
		}
		same := true
		for _, n := range names {
			a, ok := m.Adapters[n]
			same = same && ok && a.Enabled == enabled[n]
		}
		if same {
			return nil, nil
		}
		return editManifest(ctx, v, now(), func(obj jsonObject) error {
			ads := childObject(obj, "adapters")
			for _, n := range names {
				ad := childObject(ads, n)
				if err := ad.set("enabled", enabled[n]); err != nil {
					return err
				}
				if err := ads.set(n, ad); err != nil {
					return err
				}
			}
			return obj.set("adapters", ads)
		})
	})
	if err != nil {
		return nil, wrapErr("set adapters", err)
	}
	return c, nil
}

// editManifest is the edit of manifest.json that change makes to its top-level object (read as stored on
// the public scope, unknown fields kept), with updated_at set to t (RFC 3339, as now gives it): one Put of
// the public manifest.
func editManifest(ctx context.Context, v *View, t string, change func(obj jsonObject) error) (Edits, error) {
	raw, err := v.ReadIn(ctx, Public, ManifestPath)
	if err != nil {
		return nil, err
	}
	obj, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestPath, err)
	}
	if err := change(obj); err != nil {
		return nil, err
	}
	if err := obj.set("updated_at", t); err != nil {
		return nil, err
	}
	b, err := MarshalRecord(obj)
	if err != nil {
		return nil, err
	}
	ed := Edits{}
	ed.Put(Public, ManifestPath, b)
	return ed, nil
}

// childObject is obj's member key as an object to edit: a new empty one when it is absent or not an object.
func childObject(obj jsonObject, key string) jsonObject {
	if r, ok := obj.get(key); ok {
		if c, err := parseObject(r); err == nil {
			return c
		}
	}
	return jsonObject{}
}
