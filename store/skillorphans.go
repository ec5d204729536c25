package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/ctx-dev/ctx/gitstore"
)

// orphanedSkills returns, as clashes of kind "skill-orphaned", the skill folders that hold files (usage
// and feedback logs, proposals) but whose skill no scope holds (no SKILL.md): no reader lists them (ctx
// skill list, context://skills), and a new skill of that name would take their ratings as its own. A merge
// keeps a skill that one side removed while the other rated or used it (docs/merge.md); such a folder
// comes from plain git, another tool, or a merge of an older ctx. Sorted by name.
func orphanedSkills(ctx context.Context, v *View) ([]Clash, error) {
	held := map[string]bool{}
	folders := map[string][]ScopedPath{}
	var names []string
	for _, sc := range Scopes {
		es, err := v.r.List(ctx, sc, "skills")
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if !e.Dir {
				continue
			}
			files, err := v.r.List(ctx, sc, "skills/"+e.Name)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(files, func(f gitstore.Entry) bool { return f.Name == "SKILL.md" && !f.Dir }) {
				held[e.Name] = true
				continue
			}
			if len(files) == 0 {
				continue
			}
			if folders[e.Name] == nil {
				names = append(names, e.Name)
			}
			folders[e.Name] = append(folders[e.Name], ScopedPath{Scope: sc, Path: "skills/" + e.Name + "/"})
		}
	}
	slices.Sort(names)
	var out []Clash
	for _, n := range names {
		if held[n] {
			continue
		}
		out = append(out, Clash{Kind: "skill-orphaned", Paths: folders[n], Fix: fmt.Sprintf(
			"skills/%s/ holds logs or proposals of a skill that does not exist (no SKILL.md): no reader lists them, "+
				"and a new skill %s would take their ratings; remove the folder (git rm -r, or rm -r .context/skills/%s/ and ctx commit), "+
				"or add the skill again to keep them (ctx skill add %s)", n, n, n, n)})
	}
	return out, nil
}
