package store

import (
	"context"
	"encoding/json"
	"strings"
)

// UpdateBranch records branch ("" = detached HEAD) in this machine's active activity entries of the
// member of the git identity (any agent), as the post-checkout hook does (docs/hooks.md: "refresh ... this
// machine's activity (branch)"). One commit when an entry changed; none when this machine has no active
// entry or the branch is already recorded.
func (s *Store) UpdateBranch(ctx context.Context, branch string) (*Committed, error) {
	member, err := s.member(ctx, "")
	if err != nil {
		return nil, err
	}
	op := Op{Name: "activity.branch", Key: member, Summary: "branch " + branch}
	return s.Write(ctx, op, func(v *View) (Edits, error) {
		ed := Edits{}
		agents, err := v.List(ctx, "activity/"+member)
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			if a.Dir || !strings.HasSuffix(a.Name, "--"+s.Actor.Machine+".json") {
				continue
			}
			p := "activity/" + member + "/" + a.Name
			raw, err := v.ReadIn(ctx, a.Scope, p)
			if err != nil {
				return nil, err
			}
			var e ActivityEntry
			if json.Unmarshal(raw, &e) != nil || e.Status != StatusActive {
				continue
			}
			if (e.Branch == nil && branch == "") || (e.Branch != nil && *e.Branch == branch) {
				continue
			}
			e.Branch = nullable(&branch)
			e.UpdatedAt = now()
			b, err := marshalKeeping(raw, e)
			if err != nil {
				return nil, err
			}
			ed.Put(a.Scope, p, b)
		}
		return ed, nil
	})
}
