package merge

import "sort"

// Renames that clash (docs/merge.md "Renames"): a file of the base that neither side holds any more, because
// one side renamed it (its content, at least renameMinSimilarity alike, at a new path of that side only)
// while the other deleted it or renamed it elsewhere. followContentRenames does not see these (the other
// side did not change the file at the old path). As git does, nothing is lost:
//   - renamed on one side, deleted on the other: the renamed file is kept, with the note and the conflict
//     an edit against a delete gets (its lost version is the delete, so ctx resolve can still delete it);
//   - renamed to two different paths: both are kept, with a "rename-rename" note at each.

// renameClashes returns the conflicts and notes of the clashing renames of base, ours and theirs (no tree is
// changed). The result does not depend on which side is ours.
func renameClashes(base, ours, theirs Files) ([]Conflict, []Note) {
	sides := [2]Files{ours, theirs}
	var gone []string
	for p := range base {
		_, o := ours[p]
		_, t := theirs[p]
		if !o && !t && renameable(p) {
			gone = append(gone, p)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	sort.Strings(gone)
	// The paths each side added that the other does not hold: the candidates for a rename.
	var added [2][]string
	for x := 0; x < 2; x++ {
		added[x] = addedPaths(base, sides[x], sides[1-x])
	}
	if len(added[0])+len(added[1]) == 0 || len(gone)*(len(added[0])+len(added[1])) > renameLimit {
		return nil, nil
	}
	var conflicts []Conflict
	var notes []Note
	used := [2]map[string]bool{{}, {}}
	for _, p := range gone {
		bt := renameText(p, base[p])
		var to [2]string
		for x := 0; x < 2; x++ {
			best := 0.0
			for _, q := range added[x] {
				if used[x][q] {
					continue
				}
				if s, ok := renameSimilarity(p, bt, q, sides[x][q]); ok && s > best {
					best, to[x] = s, q
				}
			}
			if to[x] != "" {
				used[x][to[x]] = true
			}
		}
		switch {
		case to[0] != "" && to[1] != "":
			for x := 0; x < 2; x++ {
				notes = append(notes, Note{Path: to[x], Kind: "rename-rename",
					Message: "renamed from " + p + " to " + to[x] + " on one side and to " + to[1-x] + " on the other: both are kept"})
			}
		case to[0] != "" || to[1] != "":
			x := 0
			if to[0] == "" {
				x = 1
			}
			q, kept := to[x], sides[x][to[x]]
			notes = append(notes, Note{Path: q, Kind: "delete-vs-edit",
				Message: "deleted on one side and renamed from " + p + " on the other: the renamed file is kept"})
			cf := newConflict(q, []string{""}, base[p], true, kept, nil, "the rename wins over the delete")
			cf.LostDeleted = true
			cf.RenamedFrom = p
			cf.ID = conflictID(q, cf.Field, base[p], true, kept, nil, true)
			conflicts = append(conflicts, cf)
		}
	}
	return conflicts, notes
}
