package merge

import (
	"bytes"
	"strings"
)

// Changes made on one side only (docs/merge.md "What a pull reads"). A path that one side changed since the
// base and the other did not merges to the changing side's version (Tree's whole-file rules), whatever the
// rest of the tree holds, unless one of Tree's rules across paths moves or rewrites it:
//   - decisions (renumbered, matched by uid) and conflict records (settled twice) are merged with their
//     folders;
//   - session records and skill logs may be moved to their other layout (canonicalize);
//   - a file renamed on one side and changed at its old path on the other is followed to the new path,
//     which the renaming side added (followContentRenames);
//   - a conflict record of the base that both sides deleted names a path whose two settlements are
//     compared (resolvedTwice);
//   - a skill's SKILL.md that one side deleted is kept when the other side changed the skill's
//     folder (removedSkills).
// OneSided says which paths the first two leave alone; NeedsOneSided says, from the rest of the merge's
// input, whether the last three could apply. When they cannot, a caller may leave out of Tree's input the
// paths OneSided accepts and take each one's changed side as it is (git's "trivial merge": the tree entry,
// without reading the file): the result is the same as Tree's over every path (TestOneSidedAsTree).

// OneSided reports whether path p, changed on one side only, may be left out of Tree's input and taken
// from that side as it is, as far as its own kind goes (NeedsOneSided decides for the whole merge): not a
// decision or a conflict record, not a session record, a skill log or a skill's SKILL.md.
func OneSided(p string) bool {
	if strings.HasPrefix(p, "decisions/") || strings.HasPrefix(p, "conflicts/") {
		return false
	}
	if _, ok := SessionID(p); ok {
		return false
	}
	if _, _, ok := logFlat(p); ok {
		return false
	}
	if _, _, ok := logSharded(p); ok {
		return false
	}
	if _, ok := skillMD(p); ok {
		return false // kept when the other side changed the folder of the skill it removes (skillfolder.go)
	}
	return true
}

// NeedsOneSided reports whether the paths changed on one side only could change the merge of base, ours
// and theirs, Tree's input without them (the paths both sides changed, those OneSided refuses, and the
// folders merged together: decisions/ and conflicts/ whole): true when a path of base is deleted on one
// side and changed on the other (a rename could be followed to a file the deleting side added), or deleted
// on both sides (a rename on one side clashes with the other's delete or rename, renameClashes), or when a
// conflict record of base is deleted on both sides (its path's settlements are compared), or when a skill's
// SKILL.md of base is deleted on one side and held by the other (a change of the folder on the holding side
// keeps the skill whole, removedSkills). The caller then gives Tree every changed path.
func NeedsOneSided(base, ours, theirs Files) bool {
	for p, b := range base {
		o, ook := ours[p]
		t, tok := theirs[p]
		if _, ok := skillMD(p); ok && ook != tok {
			return true // a skill removed on one side: the other's proposal, log or file keeps it (removedSkills)
		}
		if strings.HasPrefix(p, "conflicts/") && !ook && !tok {
			return true
		}
		if !ook && !tok && renameable(p) {
			return true // deleted on both sides: renamed on one, it may clash (renameClashes)
		}
		if ook != tok && renameable(p) {
			if ook && !bytes.Equal(o, b) || tok && !bytes.Equal(t, b) {
				return true
			}
		}
	}
	return false
}
