package store

import "github.com/ctx-dev/ctx/merge"

// The JSON reports of a pull and a push: what `ctx pull --json`, `ctx push --json` and `ctx sync --json`
// print, and what the MCP tools context_pull and context_push return as structured content (one shape for
// both; docs/sync.md "JSON output"). Lists are never null, so a reader can iterate without a check.

// PullReport is a pull's result as JSON. Old and New are full commit ids, "" when there was none.
type PullReport struct {
	Remote string `json:"remote"`
	Found  bool   `json:"found"`  // the remote has a context branch
	Action string `json:"action"` // none, up-to-date, fast-forward, merge, adopted (PullAction)
	Old    string `json:"old"`
	New    string `json:"new"`
	// Conflicts are the open conflicts the merge recorded in conflicts/<id>.json.
	Conflicts []ConflictReport `json:"conflicts"`
	// Decided are the conflicts decided at once by --strategy (no record written); Strategy names it.
	Decided  []ConflictReport `json:"decided"`
	Strategy string           `json:"strategy,omitempty"`
	Notes    []NoteReport     `json:"notes"`
	// HandEdits are the hand edits of .context/ committed before the pull.
	HandEdits []HandEdit `json:"hand_edits"`
	// RefreshKept are files of .context/ edited by hand that the refresh left as they were.
	RefreshKept []string `json:"refresh_kept"`
	// RefreshSkipped are entries of the branch the refresh did not check out (unsafe names, links).
	RefreshSkipped []Problem `json:"refresh_skipped"`
	// Warnings are problems after the branch moved (the pull landed).
	Warnings []string `json:"warnings"`
	// NoShared: the remote has machine refs but no shared branch (PullResult.NoShared); SharedPruned: its
	// remote-tracking ref was removed.
	NoShared     bool `json:"no_shared_branch,omitempty"`
	SharedPruned bool `json:"shared_pruned,omitempty"`
}

// ConflictReport is one conflict of a merge: its record's id, the path, the field(s) and the rule that
// picked the version kept (merge.Conflict without the versions; ctx conflicts --json has them).
type ConflictReport struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// NoteReport is one note of a merge (merge.Note): a rename followed, a decision renumbered, a deletion
// that lost to an edit.
type NoteReport struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// PushReport is a push's result as JSON. Tip is the full commit id pushed; MachineRef is
// refs/ctx/machines/<id>, "" when the remote refuses machine refs; Shared is updated, behind (another
// machine moved the shared branch first: no failure) or refused. Pulls are the merges made on the way
// (a remote without machine refs), Merges their count.
type PushReport struct {
	Remote     string       `json:"remote"`
	Tip        string       `json:"tip"`
	MachineRef string       `json:"machine_ref"`
	Shared     string       `json:"shared"`
	Retries    int          `json:"retries"`
	Merges     int          `json:"merges"`
	Pulls      []PullReport `json:"pulls"`
	Warnings   []string     `json:"warnings"`
}

// Report is r as JSON (PullReport).
func (r *PullResult) Report() PullReport {
	out := PullReport{
		Remote: r.Remote, Found: r.Found, NoShared: r.Found && r.NoShared, SharedPruned: r.SharedPruned, Action: r.Action.String(), Old: hashString(r.Old), New: hashString(r.New),
		Conflicts: conflictReports(r.Conflicts), Decided: conflictReports(r.Decided), Notes: []NoteReport{},
		HandEdits: nonNil(r.HandEdits), RefreshKept: nonNil(r.RefreshKept), RefreshSkipped: nonNil(r.RefreshSkipped),
		Warnings: nonNil(r.Warnings),
	}
	if out.Action == "" {
		out.Action = PullNone.String()
	}
	if len(r.Decided) > 0 {
		out.Strategy = string(r.Strategy)
	}
	for _, n := range r.Notes {
		out.Notes = append(out.Notes, NoteReport{Path: n.Path, Kind: n.Kind, Message: n.Message})
	}
	return out
}

// Report is r as JSON (PushReport).
func (r *PushResult) Report() PushReport {
	out := PushReport{Remote: r.Remote, Tip: hashString(r.Tip), MachineRef: r.Machine, Shared: string(r.Shared),
		Retries: r.Retries, Merges: len(r.Pulls), Pulls: []PullReport{}, Warnings: nonNil(r.Warnings)}
	for i := range r.Pulls {
		out.Pulls = append(out.Pulls, r.Pulls[i].Report())
	}
	return out
}

func conflictReports(cs []merge.Conflict) []ConflictReport {
	out := make([]ConflictReport, 0, len(cs))
	for _, c := range cs {
		out = append(out, ConflictReport{ID: c.ID, Path: c.Path, Field: c.Field, Rule: c.Rule})
	}
	return out
}

// hashString is h's full hex form, "" for the zero hash (no commit).
func hashString(h Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
