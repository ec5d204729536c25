package merge

import (
	"bytes"
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Renames by content (docs/format.md "Merging"): a file renamed on one side
// (deleted at its old path, added at a new one, as a hand edit of .context/
// and `ctx commit` records it) while the other side changed it at the old
// path. Like git's rename detection, the added file whose content is most
// similar to the base version of the deleted one (at least
// renameMinSimilarity) is taken as its new name, and the other side's
// change is merged into it there, instead of surviving at the old path
// beside the renamed copy. Decisions are matched by their uid instead
// (followRenames), conflict records never move.

// renameMinSimilarity is git's default rename threshold (-M50%).
const renameMinSimilarity = 0.5

// renameLimit bounds the number of (deleted, added) pairs compared per side,
// like git's diff.renameLimit; beyond it no rename is followed.
const renameLimit = 100_000

// renameable reports whether a path may be followed through a rename:
// knowledge, conventions, SKILL.md and other files; not decisions (matched
// by uid), JSON records or logs.
func renameable(p string) bool {
	switch kindOf(p) {
	case kindMarkdown:
		return !strings.HasPrefix(p, "decisions/")
	case kindOther:
		return !strings.HasPrefix(p, "conflicts/")
	}
	return false
}

// topDir is the first segment of a path ("" for a top-level file).
func topDir(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// renameText is what similarity compares: the body of a markdown file with
// front matter (the front matter holds who wrote it and when, which a
// rename rewrites), else the whole content.
func renameText(p string, b []byte) string {
	if kindOf(p) == kindMarkdown {
		if _, _, _, body, ok := splitFM(string(b)); ok && body != "" {
			return body
		}
	}
	return string(b)
}

// similarity is 2 × the bytes of the lines a and b have in common (go-diff
// line mode) over their total size, from 0 to 1.
func similarity(a, b string) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	common := 0
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines) {
		if d.Type == diffmatchpatch.DiffEqual {
			common += len(d.Text)
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// addedPaths are the paths side added that neither base nor other holds and that may be followed
// through a rename (renameable): the candidates for a file's new name on that side, sorted.
func addedPaths(base, side, other Files) []string {
	var out []string
	for q := range side {
		if _, ok := base[q]; ok || !renameable(q) {
			continue
		}
		if _, ok := other[q]; !ok {
			out = append(out, q)
		}
	}
	sort.Strings(out)
	return out
}

// renameSimilarity is the similarity of the base version of p (bt, its renameText) and qb, the content
// of q on a side, and ok when q can be p's new name: the same top folder and kind, and a similarity of
// at least renameMinSimilarity.
func renameSimilarity(p, bt, q string, qb []byte) (float64, bool) {
	if topDir(p) != topDir(q) || kindOf(p) != kindOf(q) {
		return 0, false
	}
	qt := renameText(q, qb)
	// The share of common bytes cannot exceed 2·min/(sum): skip pairs too different in size.
	if lo, hi := min(len(bt), len(qt)), max(len(bt), len(qt)); hi > 0 && 2*float64(lo)/float64(lo+hi) < renameMinSimilarity {
		return 0, false
	}
	s := similarity(bt, qt)
	return s, s >= renameMinSimilarity
}

type rename struct {
	side     int // 0: ours renamed, 1: theirs renamed
	from, to string
	sim      float64
}

// followContentRenames finds, for each side, the files it renamed while the
// other side changed them at the old path, and moves the other side's
// version (and the base's) to the new path, so that Tree merges the change
// into the renamed file. It returns the rewritten trees and a "renamed" Note
// per rename followed (at the new path). The result does not depend on
// which side is ours.
func followContentRenames(base, ours, theirs Files) (Files, Files, Files, []Note) {
	sides := [2]Files{ours, theirs}
	var found []rename
	for x := 0; x < 2; x++ {
		xs, ys := sides[x], sides[1-x]
		var deleted []string
		for p, b := range base {
			if _, ok := xs[p]; ok || !renameable(p) {
				continue
			}
			if y, ok := ys[p]; ok && !bytes.Equal(y, b) {
				deleted = append(deleted, p)
			}
		}
		if len(deleted) == 0 {
			continue
		}
		added := addedPaths(base, xs, ys)
		if len(added) == 0 || len(deleted)*len(added) > renameLimit {
			continue
		}
		sort.Strings(deleted)
		var cands []rename
		for _, p := range deleted {
			bt := renameText(p, base[p])
			for _, q := range added {
				if s, ok := renameSimilarity(p, bt, q, xs[q]); ok {
					cands = append(cands, rename{side: x, from: p, to: q, sim: s})
				}
			}
		}
		sort.SliceStable(cands, func(i, j int) bool {
			if cands[i].sim != cands[j].sim {
				return cands[i].sim > cands[j].sim
			}
			if cands[i].from != cands[j].from {
				return cands[i].from < cands[j].from
			}
			return cands[i].to < cands[j].to
		})
		usedFrom, usedTo := map[string]bool{}, map[string]bool{}
		for _, c := range cands {
			if usedFrom[c.from] || usedTo[c.to] {
				continue
			}
			usedFrom[c.from], usedTo[c.to] = true, true
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		return base, ours, theirs, nil
	}
	nb, out := copyFiles(base), [2]Files{copyFiles(ours), copyFiles(theirs)}
	var notes []Note
	for _, r := range found {
		other := out[1-r.side]
		other[r.to] = other[r.from]
		delete(other, r.from)
		nb[r.to] = nb[r.from]
		delete(nb, r.from)
		notes = append(notes, Note{Path: r.to, Kind: "renamed",
			Message: "renamed from " + r.from + " on one side and changed there on the other: the change follows the rename"})
	}
	return nb, out[0], out[1], notes
}

// Similarity is how alike two texts are, by the measure the merge follows renames with (docs/merge.md
// "Renames", git's -M): 2 × the bytes of the lines a and b have in common over their total size, from 0
// (nothing in common) to 1 (equal; two empty texts included).
func Similarity(a, b string) float64 { return similarity(a, b) }
