package merge

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Supersede cycles (docs/merge.md "Supersede cycles"): each side may supersede one decision by another
// (superseded_by), which a single writer refuses when it closes a cycle. Two sides can still close one
// between them: ours supersedes 3 by 4 while theirs supersedes 4 by 3, each change valid on its own side.
// The merge then keeps the change of the decision that wins pickWinner (its later date) and puts the
// other decision's status and superseded_by back to the base's, recorded as a Conflict whose lost version
// is the merged file with the cycle: nothing is lost, and ctx conflicts resolves it either way.

// supersedeCycles breaks the cycles of superseded_by that merged holds and neither side held on its own;
// it rewrites merged in place and returns the conflicts. Paths already conflicted are left alone.
func supersedeCycles(base, ours, theirs, merged Files, conflicted map[string]bool) []Conflict {
	next, paths := supersedeGraph(merged)
	if len(next) == 0 {
		return nil
	}
	oursNext, _ := supersedeGraph(ours)
	theirsNext, _ := supersedeGraph(theirs)
	var out []Conflict
	for _, cycle := range Cycles(next) {
		if hasCycle(oursNext, cycle) || hasCycle(theirsNext, cycle) {
			continue // one side's own: not the merge's to break
		}
		// The candidates: decisions of the cycle whose supersede the merge brought (not the base's), in a
		// file the merge did not conflict on and the base holds.
		var loser string
		var loserDoc mdDoc
		loserNum := 0
		for _, n := range cycle {
			p := paths[n]
			b, bok := base[p]
			if !bok || conflicted[p] {
				continue
			}
			bd, ok := parseMD(b)
			if !ok || supersededBy(bd) == next[n] {
				continue
			}
			d, ok := parseMD(merged[p])
			if !ok {
				continue
			}
			if loser == "" {
				loser, loserDoc, loserNum = p, d, n
				continue
			}
			// The earlier change loses (pickWinner on the two files: later date, then larger content).
			if aWins, _ := pickWinner(merged[loser], merged[p], loserDoc.stamps(), d.stamps()); aWins {
				loser, loserDoc, loserNum = p, d, n
			}
		}
		if loser == "" {
			continue
		}
		bd, _ := parseMD(base[loser])
		kept := loserDoc
		kept.keys = slices.Clone(kept.keys)
		kept.chunks = make(map[string]string, len(loserDoc.chunks))
		for k, v := range loserDoc.chunks {
			kept.chunks[k] = v
		}
		for _, k := range []string{"status", "superseded_by"} {
			if c, ok := bd.chunks[k]; ok {
				if _, had := kept.chunks[k]; !had {
					kept.keys = append(kept.keys, k)
				}
				kept.chunks[k] = c
			} else if _, had := kept.chunks[k]; had {
				delete(kept.chunks, k)
				kept.keys = slices.DeleteFunc(kept.keys, func(x string) bool { return x == k })
			}
		}
		lost := merged[loser]
		merged[loser] = kept.render()
		// The decision it was to be superseded by no longer lists it in supersedes (unless the base did).
		if tp := paths[next[loserNum]]; !conflicted[tp] {
			if td, ok := parseMD(merged[tp]); ok && slices.Contains(supersedes(td), loserNum) {
				if bt, ok := parseMD(base[tp]); !ok || !slices.Contains(supersedes(bt), loserNum) {
					merged[tp] = withoutSupersedes(td, loserNum)
				}
			}
		}
		out = append(out, newConflict(loser, []string{"status", "superseded_by"}, base[loser], true, merged[loser], lost,
			"supersede cycle: the later decision's supersede wins; the earlier one's status and superseded_by are the base's"))
		conflicted[loser] = true
	}
	return out
}

// supersedeGraph reads superseded_by of every decision of f: number -> the number it is superseded by,
// and number -> path (decisions whose number two files share are left out: uniqueNumbers reports them).
func supersedeGraph(f Files) (map[int]int, map[int]string) {
	next, paths, dup := map[int]int{}, map[int]string{}, map[int]bool{}
	for p, content := range f {
		n, _, ok := decisionNum(p)
		if !ok {
			continue
		}
		if _, seen := paths[n]; seen {
			dup[n] = true
			continue
		}
		paths[n] = p
		d, ok := parseMD(content)
		if !ok {
			continue
		}
		if to := supersededBy(d); to > 0 {
			next[n] = to
		}
	}
	for n := range dup {
		delete(next, n)
		delete(paths, n)
	}
	return next, paths
}

// supersededBy is a decision's superseded_by number, 0 when it has none.
func supersededBy(d mdDoc) int {
	c, ok := d.chunks["superseded_by"]
	if !ok {
		return 0
	}
	v, ok := chunkValue("superseded_by", c)
	if !ok {
		return 0
	}
	n, _ := v.(int)
	return n
}

// Cycles returns the cycles of next (number -> the number it links to, each at most one: superseded_by),
// each as its numbers in ascending order, in ascending order of their smallest number; a number linked to
// itself is a cycle of one. Links to numbers next does not hold end a walk. The one walk of supersede
// cycles, for the merge and for store's checks (docs/merge.md "Supersede cycles").
func Cycles(next map[int]int) [][]int {
	nodes := make([]int, 0, len(next))
	for n := range next {
		nodes = append(nodes, n)
	}
	sort.Ints(nodes)
	state := map[int]int{} // 0 unseen, 1 on the current walk, 2 done
	var out [][]int
	for _, start := range nodes {
		var walk []int
		n := start
		for state[n] != 2 {
			if state[n] == 1 {
				i := slices.Index(walk, n)
				cycle := slices.Clone(walk[i:])
				sort.Ints(cycle)
				out = append(out, cycle)
				break
			}
			state[n] = 1
			walk = append(walk, n)
			to, ok := next[n]
			if !ok {
				break
			}
			n = to
		}
		for _, w := range walk {
			state[w] = 2
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// hasCycle reports whether next holds the whole cycle (each of its numbers superseded by one of them).
func hasCycle(next map[int]int, cycle []int) bool {
	for _, n := range cycle {
		to, ok := next[n]
		if !ok || !slices.Contains(cycle, to) {
			return false
		}
	}
	return true
}

// supersedes is a decision's supersedes numbers (a list or one number).
func supersedes(d mdDoc) []int {
	c, ok := d.chunks["supersedes"]
	if !ok {
		return nil
	}
	v, ok := chunkValue("supersedes", c)
	if !ok {
		return nil
	}
	var out []int
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if n, ok := e.(int); ok {
				out = append(out, n)
			}
		}
	case int:
		out = append(out, x)
	}
	return out
}

// withoutSupersedes renders d with n taken out of its supersedes (the key dropped when none is left).
func withoutSupersedes(d mdDoc, n int) []byte {
	var rest []string
	for _, m := range supersedes(d) {
		if m != n {
			rest = append(rest, strconv.Itoa(m))
		}
	}
	d.chunks = maps.Clone(d.chunks)
	if len(rest) == 0 {
		delete(d.chunks, "supersedes")
		d.keys = slices.DeleteFunc(slices.Clone(d.keys), func(k string) bool { return k == "supersedes" })
	} else {
		setChunk(&d, "supersedes", "["+strings.Join(rest, ", ")+"]")
	}
	return d.render()
}
