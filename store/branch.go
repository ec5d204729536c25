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
	// Most machines have no active entry: tell that from the names of the activity folder, without
	// asking git for the identity or taking the lock of a write (the post-checkout hook, docs/hooks.md).
	if v, err := s.RefView(ctx); err == nil {
		if some, err := s.anyMachineFile(ctx, v); err == nil && !some {
			return &Committed{}, nil
		}
	}
	member, err := s.member(ctx, "")
	if err != nil {
		return nil, err
	}
	op := Op{Name: "activity.branch", Key: member, Summary: "branch " + branch}
	return s.Write(ctx, op, func(v *View) (Edits, error) {
		ed := Edits{}
		active, err := s.machineActivity(ctx, v, member)
		if err != nil {
			return nil, err
		}
		for _, a := range active {
			e := a.entry
			if (e.Branch == nil && branch == "") || (e.Branch != nil && *e.Branch == branch) {
				continue
			}
			e.Branch = nullable(&branch)
			e.UpdatedAt = now()
			b, err := marshalKeeping(a.raw, e)
			if err != nil {
				return nil, err
			}
			ed.Put(a.scope, a.path, b)
		}
		return ed, nil
	})
}

// FollowsBranch reports whether this machine has an active activity entry of the member of the git
// identity at the refs' tips: only then does UpdateBranch have something to keep in step with git's HEAD
// (the post-checkout hook records this in its stamp, docs/hooks.md "A checkout that moves nothing").
func (s *Store) FollowsBranch(ctx context.Context) (bool, error) {
	v, err := s.RefView(ctx)
	if err != nil {
		return false, err
	}
	if some, err := s.anyMachineFile(ctx, v); err != nil || !some {
		return false, err
	}
	member, err := s.member(ctx, "")
	if err != nil {
		return false, err
	}
	active, err := s.machineActivity(ctx, v, member)
	return len(active) > 0, err
}

// anyMachineFile reports whether any member's activity folder in v holds a file of this machine
// ("<agent>--<machine>.json"), active or not: when none does, no entry of this machine can be active.
func (s *Store) anyMachineFile(ctx context.Context, v *View) (bool, error) {
	members, err := v.List(ctx, "activity")
	if err != nil {
		return false, err
	}
	for _, m := range members {
		if !m.Dir {
			continue
		}
		files, err := v.List(ctx, "activity/"+m.Name)
		if err != nil {
			return false, err
		}
		for _, f := range files {
			if !f.Dir && strings.HasSuffix(f.Name, "--"+s.Actor.Machine+".json") {
				return true, nil
			}
		}
	}
	return false, nil
}

// machineFile is one active activity entry of this machine.
type machineFile struct {
	scope Scope
	path  string
	raw   []byte
	entry ActivityEntry
}

// machineActivity returns the active activity entries of member for this machine (any agent) in v.
func (s *Store) machineActivity(ctx context.Context, v *View, member string) ([]machineFile, error) {
	agents, err := v.List(ctx, "activity/"+member)
	if err != nil {
		return nil, err
	}
	var out []machineFile
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
		out = append(out, machineFile{scope: a.Scope, path: p, raw: raw, entry: e})
	}
	return out, nil
}
