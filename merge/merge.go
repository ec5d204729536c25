// Package merge is the semantic 3-way merge of a ctx context branch (design
// §4), used by `ctx pull` when two machines changed the context at once. It
// is pure: no file system, no git, no clock.
//
// The input is three trees (base, ours, theirs) as maps from slash-separated
// paths (docs/format.md "Files") to contents. Each path is merged with the
// rule for its kind of file:
//
//	knowledge/*.md, conventions/*.md,     front matter key by key (3-way),
//	decisions/*.md, skills/*/SKILL.md      body by line-level diff3 (frontmatter.go, lines.go)
//	manifest.json, state.json,             field by field, recursing into
//	history/*.json, history/YYYY/MM/*.json, objects (jsonrec.go)
//	activity/**/*.json,
//	skills/*/.proposals/*.json,
//	conflicts/*.json
//	*.ndjson                               union by id, sorted by timestamp then id (ndjson.go)
//	decisions added on both sides from     one decision first (decisions.go, sameSource)
//	one source
//	decisions added twice with one number  renumbered first (decisions.go)
//	an entry in layout 1 on one side and   moved to layout 2 on every side first
//	layout 2 on another                    (layout.go; docs/merge.md "Two layouts, one entry")
//	anything else                          text: diff3; binary: whole file
//
// Whole-file rules, for every path: same content on both sides, or one side
// unchanged from base → that side's version (so a delete against an
// unchanged file deletes); deleted on one side and changed on the other →
// the change survives, a Note reports the delete and a Conflict records it
// as the lost version (LostDeleted); the one-file-per-record folders
// (history, activity, proposals, conflicts) are therefore a union. A file
// renamed on one side and changed at its old path on the other is followed
// by content similarity (renames.go). A record created on both sides at once
// takes neither side's zero-valued fields as edits (a field both sides added
// to a record that has a base does: two values of it conflict); lists of distinct
// scalars changed on both sides merge as sets (docs/format.md "Merging").
//
// When both sides changed the same field (or overlapping lines) differently,
// a winner is picked by a rule that never looks at which side is ours (later
// updated_at, date or timestamp; tie → byte-wise larger content), its value
// is kept in the file — never conflict markers — and a Conflict is returned
// and written as conflicts/<id>.json (docs/format.md "Conflicts"). Fields
// that describe the write itself (updated_at, author, agent, last_agent,
// last_machine, last_seen) are taken together from the winner, without a
// conflict, whenever both sides changed the file.
//
// A conflict of the base settled on both sides in different ways (its record
// deleted on both, the file different in more than those fields) is
// recorded again: the later settlement in the file, the other in a new
// Conflict (resolutions.go). manifest.json of two stores of different
// project.id keeps the identity of the store created first (jsonrec.go,
// firstIdentity).
//
// Two versions of one conflict record are merged as records (records.go):
// one record is kept, never a conflict whose path is a conflict record.
//
// Tree(base, ours, theirs) and Tree(base, theirs, ours) return the same
// Files, Conflicts and Notes.
package merge

import (
	"bytes"
	"sort"
)

// Files maps a slash-separated path (as in docs/format.md) to its content.
// A missing key means the file is absent; a present key with empty content
// is an empty file.
type Files map[string][]byte

// Result is the outcome of Tree.
type Result struct {
	// Files is the merged tree, including a conflicts/<id>.json record for
	// each new conflict. Contents may share memory with the inputs.
	Files Files
	// Conflicts are the new conflicts of this merge, sorted by path then ID
	// (also written as conflicts/<id>.json in Files).
	Conflicts []Conflict
	// Notes are things reported but decided: a delete that lost against an
	// edit, a renumbered decision, ... Sorted by path, kind, message.
	Notes []Note
}

// Conflict is one path where both sides changed the same thing differently
// (docs/format.md "Conflicts"). There is at most one per path and merge.
type Conflict struct {
	// ID is the first 16 hex digits of a sha256 over Path, Field, Base and
	// the two versions (Kept, Lost) in byte order; see conflictID.
	ID   string
	Path string
	// Field names what conflicted, comma-separated when several:
	// front-matter keys, "body" (overlapping body lines of a markdown file),
	// dotted JSON field paths ("project.name"; "<id>.<field>" in an ndjson
	// log), or "" when the file was merged as a whole (plain text, binary,
	// content that does not parse).
	Field string
	// Base is the base version of the file (nil when absent). Kept is the
	// merged file as written in Files; Lost is the same merge with the
	// losing side's value in every conflicting field or region. All three
	// are whole-file contents, so resolving means writing Kept or Lost.
	Base, Kept, Lost []byte
	// Rule says how the winner was picked.
	Rule string
	// LostDeleted is set when the lost version is the deletion of the file
	// (deleted on one side, changed on the other: the change is kept). Lost
	// is nil then, and resolving in favour of the lost version deletes Path.
	LostDeleted bool
	// KeptBy and LostBy say who wrote each version, as far as the caller
	// knows from the history (Tree leaves them empty: it sees no commits).
	// They go into the record when set.
	KeptBy, LostBy Side
	// RenamedFrom is, for the conflict of a file renamed on one side and deleted on the other
	// (renameclash.go), the path it was renamed from: the deleting side deleted that path and never held
	// Path, so the writer of the lost version (the delete) is found at RenamedFrom. "" otherwise; not
	// written into the record.
	RenamedFrom string
}

// Side names the writer of one version of a conflict: the last commit that
// changed the path on that side of the merge.
type Side struct {
	// Author is "Name <email>" of the commit's author.
	Author string `json:"author,omitempty"`
	// Machine and Agent are the commit's Ctx-Machine and Ctx-Agent trailers.
	Machine string `json:"machine,omitempty"`
	Agent   string `json:"agent,omitempty"`
	// Commit is the commit's hash (40 hex digits).
	Commit string `json:"commit,omitempty"`
}

// IsZero reports whether nothing is known about the side.
func (s Side) IsZero() bool { return s == Side{} }

// Note reports a decision the merge took on its own.
type Note struct {
	Path string
	// Kind: "delete-vs-edit" (a file, field or log record deleted on one
	// side and changed on the other: the change survived; for a file or a
	// field also recorded as a Conflict whose lost version is the delete),
	// "renamed" (a file renamed on one side and changed on the other: the
	// change followed the rename), "rename-rename" (a file renamed to two
	// different paths, one on each side: both kept, a note at each;
	// renameclash.go), "renumbered" (a
	// decision got a new number), "renumbered-reference" (supersedes or
	// superseded_by rewritten after a renumbering), "settled-twice" (a
	// conflict of the base settled differently on the two sides: one
	// settlement is in the file, the other recorded as a new Conflict),
	// "identity" (manifest.json of two stores of different project.id: the
	// store created first keeps its identity, the other is a Conflict's
	// lost version), "conflict-record" (a conflict record changed on both
	// sides: one record kept, records.go), "same-source" (a decision added
	// on both sides from one source: one decision kept, decisions.go).
	Kind    string
	Message string
	// From and To are, for "renumbered", the decision's number before and after the merge (0 otherwise):
	// what the merge commit records in its Ctx-Renumbered trailer (docs/architecture.md "Commits").
	From, To int
	// OldPath is, for "renumbered", the decision's path before the merge (on the side that had it; Path
	// is the new one), and for a decision's "rename-rename" the path of the side whose rename gave way:
	// what the merge commit records in a Ctx-Renamed trailer.
	OldPath string
}

// Tree merges ours and theirs against base, path by path (docs/merge.md). It
// never panics and never fails: content that does not parse falls back to a
// text or whole-file merge.
func Tree(base, ours, theirs Files) Result {
	base, ours, theirs = canonicalize(base, ours, theirs)
	clashes, clashNotes := renameClashes(base, ours, theirs)
	origOurs, origTheirs := ours, theirs
	ours, theirs, sourced := sameSource(base, ours, theirs)
	base, ours, theirs, renamedTwice := followRenames(base, ours, theirs)
	base, ours, theirs, renamed := followContentRenames(base, ours, theirs)
	ours, theirs, notes := renumber(base, ours, theirs)
	res := Result{Files: Files{}, Notes: append(append(append(append(notes, renamed...), sourced...), clashNotes...), renamedTwice...)}
	paths := map[string]bool{}
	for _, f := range []Files{base, ours, theirs} {
		for p := range f {
			paths[p] = true
		}
	}
	conflicts := clashes
	extra := Files{}
	for p := range paths {
		b, bok := base[p]
		o, ook := ours[p]
		t, tok := theirs[p]
		if ook && tok && isRecordPath(p) && !bytes.Equal(o, t) && !(bok && (bytes.Equal(b, o) || bytes.Equal(b, t))) {
			// Two versions of one conflict record: merged as records, never into a conflict of their own
			// (records.go).
			out, xp, x, ns := mergeRecordFile(p, o, t)
			res.Files[p] = out
			res.Notes = append(res.Notes, ns...)
			if xp != "" {
				extra[xp] = x
			}
			continue
		}
		out, present, c, ns := mergePath(p, b, bok, o, ook, t, tok)
		if present {
			res.Files[p] = out
		}
		res.Notes = append(res.Notes, ns...)
		if c != nil {
			conflicts = append(conflicts, *c)
		}
	}
	for xp, x := range extra {
		if _, taken := paths[xp]; !taken {
			res.Files[xp] = x
		}
	}
	skills, skillNotes := removedSkills(base, ours, theirs, res.Files)
	conflicts = append(conflicts, skills...)
	res.Notes = append(res.Notes, skillNotes...)
	conflicted := map[string]bool{}
	for _, c := range conflicts {
		conflicted[c.Path] = true
	}
	twice, twiceNotes := resolvedTwice(base, ours, theirs, res.Files, conflicted)
	conflicts = append(conflicts, twice...)
	res.Notes = append(res.Notes, twiceNotes...)
	for _, c := range twice {
		conflicted[c.Path] = true
	}
	conflicts = append(conflicts, supersedeCycles(base, ours, theirs, res.Files, conflicted)...)
	res.Notes = append(res.Notes, uniqueNumbers(base, origOurs, origTheirs, res.Files)...)
	for _, c := range conflicts {
		res.Files[c.RecordPath()] = c.Record()
	}
	sort.Slice(conflicts, func(i, j int) bool {
		if conflicts[i].Path != conflicts[j].Path {
			return conflicts[i].Path < conflicts[j].Path
		}
		return conflicts[i].ID < conflicts[j].ID
	})
	res.Conflicts = conflicts
	sort.Slice(res.Notes, func(i, j int) bool {
		x, y := res.Notes[i], res.Notes[j]
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		return x.Message < y.Message
	})
	// Drop exact repeats (one file rewritten the same way on both sides).
	notes = res.Notes[:0]
	for i, n := range res.Notes {
		if i == 0 || n != res.Notes[i-1] {
			notes = append(notes, n)
		}
	}
	res.Notes = notes
	return res
}

// same reports whether two optional contents are the same.
func same(x []byte, xok bool, y []byte, yok bool) bool {
	return xok == yok && (!xok || bytes.Equal(x, y))
}
