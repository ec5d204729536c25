package adapters

import (
	"context"
	"errors"

	"github.com/ctx-dev/ctx/adapters/internal/block"
)

// State is how a client's files compare with what an export would write.
type State string

// States, from best to worst; a client's state is the worst of its files'.
const (
	InStep     State = "in-step"     // every file is what an export writes
	Stale      State = "stale"       // ctx's files are there with older content (or a skill left the branch)
	Missing    State = "missing"     // a file or block is not there yet
	HandEdited State = "hand-edited" // a file of ctx's, or its block, was changed by hand or broken; or ctx's place is taken by the user's file
)

var rank = map[State]int{InStep: 0, Stale: 1, Missing: 2, HandEdited: 3}

// FileState is one file of a client in a status.
type FileState struct {
	Path    string `json:"path"`
	Kind    Kind   `json:"kind"`
	State   State  `json:"state"`
	Tracked bool   `json:"tracked,omitempty"`
	// Detail is the problem's text for HandEdited; for InStep and Missing a note on a file that is the
	// user's (a skill ctx did not write, an instruction file without ctx's block); "" otherwise.
	Detail string `json:"detail,omitempty"`
}

// ClientStatus is the status of one client.
type ClientStatus struct {
	Client  string      `json:"client"`
	Enabled bool        `json:"enabled"`
	State   State       `json:"state"`
	Files   []FileState `json:"files"`
}

// Status compares each client's files with the export of c (PlanExport, writing nothing) and reports a
// State per client and per file. Clients: Lookup names; none means every client.
func Status(ctx context.Context, opts Options, c *Content, clients ...string) ([]ClientStatus, error) {
	pl, err := PlanExport(ctx, opts, c, clients...)
	if err != nil {
		return nil, err
	}
	cs, _ := Lookup(clients...)
	enabled := map[string]bool{}
	for _, n := range pl.rec.Enabled {
		enabled[n] = true
	}
	out := make([]ClientStatus, 0, len(cs))
	for _, cl := range cs {
		st := ClientStatus{Client: cl.Name, Enabled: enabled[cl.Name], State: InStep, Files: []FileState{}}
		add := func(f FileState) {
			st.Files = append(st.Files, f)
			if rank[f.State] > rank[st.State] {
				st.State = f.State
			}
		}
		for _, ch := range pl.Changes {
			if !has(ch.Clients, cl.Name) {
				continue
			}
			f := FileState{Path: ch.Path, Kind: ch.Kind, Tracked: ch.Tracked}
			switch ch.Action {
			case Unchanged:
				f.State = InStep
				if ch.foreign {
					f.Detail = "the user's own file, with the bytes an export writes; ctx leaves it alone and never updates or removes it"
				}
			case Create:
				f.State = Missing
				if ch.Old != nil {
					f.Detail = "the file is there without ctx's block"
				}
			default:
				f.State = Stale
			}
			add(f)
		}
		for _, p := range pl.Problems {
			if !has(p.Clients, cl.Name) {
				continue
			}
			kind := KindSkill
			if errors.Is(p.Err, block.ErrBroken) || errors.Is(p.Err, block.ErrHandEdited) {
				kind = KindBlock
			} else if p.Path == cl.Instructions {
				kind = KindBlock
			} else if cl.Rules != "" && len(p.Path) > len(cl.Rules) && p.Path[:len(cl.Rules)] == cl.Rules {
				kind = KindRule
			}
			add(FileState{Path: p.Path, Kind: kind, State: HandEdited, Detail: p.Err.Error()})
		}
		out = append(out, st)
	}
	return out, nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
