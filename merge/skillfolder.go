package merge

import (
	"bytes"
	"sort"
	"strings"
)

// A skill removed on one side and used, rated or otherwise changed on the other (docs/merge.md "A skill
// removed on one side, changed on the other"). Path by path, the delete of skills/<name>/SKILL.md against
// an unchanged SKILL.md deletes it, while the other side's new log lines (a rating, a use) are kept: the
// folder was left with logs of a skill that no longer exists, which no reader lists, and a later skill of
// that name inherited them. A delete against an edit keeps the edit: the edit here is to the skill's
// folder, so the skill is kept whole as the changing side holds it, with a delete-vs-edit note and a conflict whose
// lost version is the delete (ctx conflicts lists it, ctx resolve can still delete it).

// skillMD returns the skill folder ("skills/<name>/") of a SKILL.md path, false for any other path.
func skillMD(p string) (string, bool) {
	parts := strings.Split(p, "/")
	if len(parts) != 3 || parts[0] != "skills" || parts[1] == "" || parts[2] != "SKILL.md" {
		return "", false
	}
	return "skills/" + parts[1] + "/", true
}

// skillFolder returns the skill folder of a path below skills/<name>/ (not SKILL.md itself), false for
// any other path.
func skillFolder(p string) (string, bool) {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) != 3 || parts[0] != "skills" || parts[1] == "" || parts[2] == "SKILL.md" {
		return "", false
	}
	return "skills/" + parts[1] + "/", true
}

// removedSkills keeps SKILL.md of every skill whose SKILL.md one side deleted (the base held it, the merge
// dropped it) while the other side, which still holds it, added or changed a file of its folder that the
// merged tree keeps. merged gets the keeping side's SKILL.md and every other file of the folder that the
// keeping side holds and merged lacks (a script the removing side deleted with the skill); the conflicts
// and notes are returned. The rule looks at who holds SKILL.md, never at which side is ours.
func removedSkills(base, ours, theirs, merged Files) ([]Conflict, []Note) {
	changed := map[string]bool{} // folders with a file the merge kept that the side holding SKILL.md added or changed
	for p := range merged {
		dir, ok := skillFolder(p)
		if !ok || changed[dir] {
			continue
		}
		if _, kept := merged[dir+"SKILL.md"]; kept {
			continue
		}
		b, bok := base[p]
		for _, side := range []Files{ours, theirs} {
			s, sok := side[p]
			if _, holds := side[dir+"SKILL.md"]; holds && sok && !(bok && bytes.Equal(s, b)) {
				changed[dir] = true
			}
		}
	}
	dirs := make([]string, 0, len(changed))
	for dir := range changed {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	var conflicts []Conflict
	var notes []Note
	for _, dir := range dirs {
		p := dir + "SKILL.md"
		b, bok := base[p]
		o, ook := ours[p]
		t, tok := theirs[p]
		if !bok || ook == tok {
			continue // created by one side, or held by both (then kept) or by neither
		}
		kept, keeper := o, ours
		if tok {
			kept, keeper = t, theirs
		}
		merged[p] = kept
		for q, c := range keeper { // the rest of the skill: files the remover deleted come back too
			if _, in := merged[q]; !in && strings.HasPrefix(q, dir) {
				merged[q] = c
			}
		}
		notes = append(notes, Note{Path: p, Kind: "delete-vs-edit",
			Message: "skill removed on one side while the other side changed its folder (" + dir + "): the skill is kept"})
		cf := newConflict(p, []string{""}, b, true, kept, nil, "a change of the skill's folder wins over the skill's removal")
		cf.LostDeleted = true
		cf.ID = conflictID(p, cf.Field, b, true, kept, nil, true)
		conflicts = append(conflicts, cf)
	}
	return conflicts, notes
}
