package merge

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Decisions numbered twice, docs/merge.md: both sides added decisions/<NNNN>-*.md
// with the same number but different decisions (different `uid`; without a
// uid, different paths).
//
// Before the path-by-path merge, for every clashing number (ascending), the
// clashing new decisions are ordered by `date` (as time when it parses),
// then `uid`, then path, then content. The first keeps the number; each
// other one gets the next free number above the largest number found in
// base, ours and theirs together. A renumbered decision gets the new number
// in its file name (the slug is kept) and in its front-matter `id`. The side
// that added it has its references rewritten: in each decision file that
// side added or changed, `supersedes` and `superseded_by` values equal to an
// old number of that side become the new number, and so do the decisions_added
// of each session record that side added or changed. The ordering never looks at
// which side is ours, so every machine picks the same numbers. Numbers
// written in a decision's body text are not rewritten.

var decisionPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^decisions/([0-9]+)((?:-[^/]*)?\.md)$`) })

type decision struct {
	side    int // 0 ours, 1 theirs
	path    string
	num     int
	rest    string // "-slug.md"
	uid     string
	dateKey string
	content []byte
}

func (d decision) identity() string {
	if d.uid != "" {
		return "uid:" + d.uid
	}
	return "path:" + d.path
}

func decisionNum(path string) (int, string, bool) {
	m := decisionPath().FindStringSubmatch(path)
	if m == nil || len(m[1]) > 9 {
		return 0, "", false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return n, m[2], true
}

func newDecision(side int, path string, content []byte) (decision, bool) {
	n, rest, ok := decisionNum(path)
	if !ok {
		return decision{}, false
	}
	d := decision{side: side, path: path, num: n, rest: rest, content: content}
	if doc, ok := parseMD(content); ok {
		if c, ok := doc.chunks["uid"]; ok {
			if v, ok := chunkValue("uid", c); ok {
				d.uid = scalarString(v)
			}
		}
		if c, ok := doc.chunks["date"]; ok {
			if v, ok := chunkValue("date", c); ok {
				s := scalarString(v)
				if t, ok := parseTime(s); ok {
					d.dateKey = "0" + t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
				} else {
					d.dateKey = "1" + s
				}
			}
		}
	}
	if d.dateKey == "" {
		d.dateKey = "2"
	}
	return d, true
}

func decisionLess(x, y decision) bool {
	if x.dateKey != y.dateKey {
		return x.dateKey < y.dateKey
	}
	if x.uid != y.uid {
		return x.uid < y.uid
	}
	if x.path != y.path {
		return x.path < y.path
	}
	return string(x.content) < string(y.content)
}

// renumber resolves decision numbers added on both sides. It returns copies
// of ours and theirs with renumbered files moved and rewritten (the inputs
// are not modified), and a Note per renumbering.
func renumber(base, ours, theirs Files) (Files, Files, []Note) {
	sides := [2]Files{ours, theirs}
	maxNum := 0
	byNum := map[int][]decision{}
	for _, f := range []Files{base, ours, theirs} {
		for p := range f {
			if n, _, ok := decisionNum(p); ok && n > maxNum {
				maxNum = n
			}
		}
	}
	for s, f := range sides {
		for p, c := range f {
			if _, inBase := base[p]; inBase {
				continue
			}
			if d, ok := newDecision(s, p, c); ok {
				byNum[d.num] = append(byNum[d.num], d)
			}
		}
	}
	var nums []int
	for n, ds := range byNum {
		// The merge makes a duplicate only when each side added a decision
		// the other side does not have; a side that already held two
		// decisions with one number is left as it is.
		var ids [2]map[string]bool
		ids[0], ids[1] = map[string]bool{}, map[string]bool{}
		for _, d := range ds {
			ids[d.side][d.identity()] = true
		}
		onlyOurs, onlyTheirs := false, false
		for id := range ids[0] {
			onlyOurs = onlyOurs || !ids[1][id]
		}
		for id := range ids[1] {
			onlyTheirs = onlyTheirs || !ids[0][id]
		}
		if onlyOurs && onlyTheirs {
			nums = append(nums, n)
		}
	}
	if len(nums) == 0 {
		return ours, theirs, nil
	}
	sort.Ints(nums)
	out := [2]Files{copyFiles(ours), copyFiles(theirs)}
	remap := [2]map[int]int{{}, {}}
	var notes []Note
	noted := map[string]bool{}
	for _, n := range nums {
		ds := byNum[n]
		sort.Slice(ds, func(i, j int) bool { return decisionLess(ds[i], ds[j]) })
		// One new number per identity, in order; the first keeps n.
		newNum := map[string]int{}
		for _, d := range ds {
			id := d.identity()
			if _, ok := newNum[id]; ok {
				continue
			}
			if len(newNum) == 0 {
				newNum[id] = n
				continue
			}
			maxNum++
			newNum[id] = maxNum
		}
		for _, d := range ds {
			m := newNum[d.identity()]
			if m == n {
				continue
			}
			np := fmt.Sprintf("decisions/%04d%s", m, d.rest)
			delete(out[d.side], d.path)
			out[d.side][np] = setDecisionID(d.content, m)
			remap[d.side][n] = m
			if !noted[d.identity()] {
				noted[d.identity()] = true
				notes = append(notes, Note{Path: np, Kind: "renumbered", From: n, To: m, OldPath: d.path,
					Message: fmt.Sprintf("decision %d was added on both sides: %s renumbered to %d (%s)", n, d.path, m, np)})
			}
		}
	}
	notes = rewriteAllRefs(base, out, remap, "supersedes/superseded_by rewritten to the renumbered decisions", notes)
	return out[0], out[1], notes
}

// rewriteAllRefs rewrites, on each side s, the supersedes/superseded_by numbers of every decision file of
// out[s] that differs from base by remap[s] (old number → new), adding a "renumbered-reference" note
// with message msg to notes for each file changed, and the decisions_added of every session record of
// out[s] that differs from base, with a note of its own (docs/merge.md "Decisions numbered twice"); it
// returns notes.
func rewriteAllRefs(base Files, out [2]Files, remap [2]map[int]int, msg string, notes []Note) []Note {
	for s := range out {
		if len(remap[s]) == 0 {
			continue
		}
		for p, c := range out[s] {
			_, _, isDecision := decisionNum(p)
			_, isSession := SessionID(p)
			if !isDecision && !isSession {
				continue
			}
			if b, ok := base[p]; ok && string(b) == string(c) {
				continue
			}
			if isSession {
				if nc, changed := rewriteSessionRefs(c, remap[s]); changed {
					out[s][p] = nc
					notes = append(notes, Note{Path: p, Kind: "renumbered-reference",
						Message: "decisions_added rewritten to the decisions' new numbers"})
				}
				continue
			}
			if nc, changed := rewriteRefs(c, remap[s]); changed {
				out[s][p] = nc
				notes = append(notes, Note{Path: p, Kind: "renumbered-reference", Message: msg})
			}
		}
	}
	return notes
}

// rewriteSessionRefs maps the numbers in a session record's decisions_added (strings, as ctx writes them,
// or numbers written by another tool: each keeps its type). A record that does not parse, or holds no
// such number, is returned as it is.
func rewriteSessionRefs(content []byte, remap map[int]int) ([]byte, bool) {
	o, ok := parseObj(content)
	if !ok {
		return content, false
	}
	raw, ok := o.vals["decisions_added"]
	if !ok {
		return content, false
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return content, false
	}
	changed := false
	for i, e := range list {
		var str string
		isString := json.Unmarshal(e, &str) == nil
		if !isString {
			str = string(e)
		}
		n, err := strconv.Atoi(strings.TrimSpace(str))
		if err != nil {
			continue
		}
		m, ok := remap[n]
		if !ok {
			continue
		}
		if isString {
			list[i] = jsonString(strconv.Itoa(m))
		} else {
			list[i] = json.RawMessage(strconv.Itoa(m))
		}
		changed = true
	}
	if !changed {
		return content, false
	}
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = string(e)
	}
	o.vals["decisions_added"] = []byte("[" + strings.Join(parts, ",") + "]")
	return o.record(), true
}

func copyFiles(f Files) Files {
	out := make(Files, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}

// setChunk replaces the value of key in d, keeping the chunk's line ending.
func setChunk(d *mdDoc, key, value string) {
	nl := "\n"
	if strings.HasSuffix(d.chunks[key], "\r\n") {
		nl = "\r\n"
	}
	d.chunks[key] = key + ": " + value + nl
}

// setDecisionID writes id: n into a decision's front matter, when it has
// one that parses.
func setDecisionID(content []byte, n int) []byte {
	d, ok := parseMD(content)
	if !ok {
		return content
	}
	if _, has := d.chunks["id"]; !has {
		return content
	}
	setChunk(&d, "id", strconv.Itoa(n))
	return d.render()
}

// rewriteRefs maps the numbers in supersedes and superseded_by.
func rewriteRefs(content []byte, remap map[int]int) ([]byte, bool) {
	d, ok := parseMD(content)
	if !ok {
		return content, false
	}
	changed := false
	mapNum := func(v any) (string, bool) {
		n, ok := v.(int)
		if !ok {
			return scalarString(v), false
		}
		if m, ok := remap[n]; ok {
			return strconv.Itoa(m), true
		}
		return strconv.Itoa(n), false
	}
	if c, ok := d.chunks["superseded_by"]; ok {
		if v, ok := chunkValue("superseded_by", c); ok {
			if s, ch := mapNum(v); ch {
				setChunk(&d, "superseded_by", s)
				changed = true
			}
		}
	}
	if c, ok := d.chunks["supersedes"]; ok {
		if v, ok := chunkValue("supersedes", c); ok {
			switch x := v.(type) {
			case []any:
				parts := make([]string, len(x))
				ch := false
				for i, e := range x {
					var c bool
					parts[i], c = mapNum(e)
					ch = ch || c
				}
				if ch {
					setChunk(&d, "supersedes", "["+strings.Join(parts, ", ")+"]")
					changed = true
				}
			default:
				if s, ch := mapNum(x); ch {
					setChunk(&d, "supersedes", s)
					changed = true
				}
			}
		}
	}
	if !changed {
		return content, false
	}
	return d.render(), true
}

// followRenames keeps one decision in one file when a side renumbered it (docs/merge.md, "the same on every
// machine"): decisions are identified by their `uid`, and a renumbering moves the file
// (decisions/0003-x.md -> decisions/0010-x.md). Without this, an edit of the old file on one side and the
// move on the other would leave two copies of the decision, and two machines that renumbered the same
// decision differently would each bring their copy. Before the path-by-path merge, for every uid held in
// exactly one file by each side that has it:
//
//   - one side moved it (its path differs from the base's) and the other kept the base's path: the other
//     side's file, and the base's, move to the new path, so the edit and the move merge there;
//   - both sides have it at different paths (both moved it, or both got it from different merges): the
//     path with the larger number wins (renumbering only ever moves a decision up, so the larger number is
//     the later decision); the other side's file moves there with its id rewritten.
//
// A decision both sides renamed away from the base's path, to two different paths (by hand, or two
// renumberings), keeps one file, the one the rule above picks (a decision is one file: two files of one uid
// and number would clash), with a "rename-rename" note at it naming the other path (OldPath), so that the
// other side's rename is reported, not lost silently (docs/merge.md "Renames").
//
// The rules never look at which side is ours, so the result is the same whichever side merges.
func followRenames(base, ours, theirs Files) (Files, Files, Files, []Note) {
	index := func(f Files) map[string][]string {
		out := map[string][]string{}
		for p, c := range f {
			if d, ok := newDecision(0, p, c); ok && d.uid != "" {
				out[d.uid] = append(out[d.uid], p)
			}
		}
		return out
	}
	bi, oi, ti := index(base), index(ours), index(theirs)
	var moves []struct {
		side     int // 0 ours, 1 theirs, 2 base
		from, to string
	}
	one := func(m map[string][]string, uid string) string {
		if ps := m[uid]; len(ps) == 1 {
			return ps[0]
		}
		return ""
	}
	uids := map[string]bool{}
	for u := range oi {
		uids[u] = true
	}
	for u := range ti {
		uids[u] = true
	}
	var notes []Note
	for u := range uids {
		op, tp, bp := one(oi, u), one(ti, u), one(bi, u)
		if op == "" || tp == "" || op == tp {
			continue
		}
		if bp != "" && op != bp && tp != bp {
			on, _, _ := decisionNum(op)
			tn, _, _ := decisionNum(tp)
			win, lose := op, tp
			if tn > on || tn == on && tp > op {
				win, lose = tp, op
			}
			notes = append(notes, Note{Path: win, OldPath: lose, Kind: "rename-rename",
				Message: "decision renamed from " + bp + " to " + win + " on one side and to " + lose + " on the other: one decision is one file, kept at " +
					win + " (the larger number, then the later name); rename it by hand to keep " + lose})
		}
		target := op
		switch {
		case bp != "" && tp == bp:
			target = op
		case bp != "" && op == bp:
			target = tp
		default:
			on, _, _ := decisionNum(op)
			tn, _, _ := decisionNum(tp)
			if tn > on || tn == on && tp > op {
				target = tp
			}
		}
		if op != target {
			moves = append(moves, struct {
				side     int
				from, to string
			}{0, op, target})
		}
		if tp != target {
			moves = append(moves, struct {
				side     int
				from, to string
			}{1, tp, target})
		}
		if bp != "" && bp != target {
			moves = append(moves, struct {
				side     int
				from, to string
			}{2, bp, target})
		}
	}
	if len(moves) == 0 {
		return base, ours, theirs, notes
	}
	out := [3]Files{copyFiles(ours), copyFiles(theirs), copyFiles(base)}
	for _, m := range moves {
		c := out[m.side][m.from]
		delete(out[m.side], m.from)
		if n, _, ok := decisionNum(m.to); ok {
			c = setDecisionID(c, n)
		}
		out[m.side][m.to] = c
	}
	return out[2], out[0], out[1], notes
}

// uniqueNumbers is the last guard of docs/merge.md's "two decisions both numbered 2 after a merge" (known
// failures): in the merged files, every number held by more than one decision (by uid) keeps the one the
// base had at that path, else the first by date then uid; each other one moves to the next free number
// above the largest, in that same order, with its id rewritten and a Note. It works on the merged result
// alone, so it is the same whichever side merged. A number that one side already held twice is left as
// it is (as renumber does): the merge did not make that clash, and merging a side with itself must give
// that side back.
func uniqueNumbers(base, ours, theirs, merged Files) []Note {
	heldTwice := map[int]bool{}
	for _, f := range []Files{ours, theirs} {
		ids := map[int]map[string]bool{}
		for p, c := range f {
			if d, ok := newDecision(0, p, c); ok {
				if ids[d.num] == nil {
					ids[d.num] = map[string]bool{}
				}
				ids[d.num][d.identity()] = true
				if len(ids[d.num]) > 1 {
					heldTwice[d.num] = true
				}
			}
		}
	}
	byNum := map[int][]decision{}
	maxNum := 0
	for p, c := range merged {
		d, ok := newDecision(0, p, c)
		if !ok {
			continue
		}
		byNum[d.num] = append(byNum[d.num], d)
		if d.num > maxNum {
			maxNum = d.num
		}
	}
	var nums []int
	for n, ds := range byNum {
		ids := map[string]bool{}
		for _, d := range ds {
			ids[d.identity()] = true
		}
		if len(ids) > 1 && !heldTwice[n] {
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	var notes []Note
	for _, n := range nums {
		ds := byNum[n]
		sort.Slice(ds, func(i, j int) bool {
			_, bi := base[ds[i].path]
			_, bj := base[ds[j].path]
			if bi != bj {
				return bi
			}
			return decisionLess(ds[i], ds[j])
		})
		keep := ds[0].identity()
		for _, d := range ds[1:] {
			if d.identity() == keep {
				continue
			}
			maxNum++
			np := fmt.Sprintf("decisions/%04d%s", maxNum, d.rest)
			delete(merged, d.path)
			merged[np] = setDecisionID(d.content, maxNum)
			notes = append(notes, Note{Path: np, Kind: "renumbered", From: n, To: maxNum, OldPath: d.path,
				Message: fmt.Sprintf("decision %d was held by two decisions after the merge: %s renumbered to %d (%s)", n, d.path, maxNum, np)})
		}
	}
	return notes
}

// sameSource makes one decision of two that the two sides added from one source (docs/merge.md "One
// decision imported twice"): `ctx import` of the same ADR folder on two clones writes each ADR on both,
// with its own uid (and maybe author and date), which the merge would otherwise keep as two decisions,
// one of them renumbered. Before the other decision rules, for every `source` (front matter) that exactly
// one new decision of each side names (new: its path and uid are not the base's; the two of different
// identity), the decisions are ordered as renumber orders them (date, uid, path, content); the second one
// takes the first one's path, id and uid. When the two differ in nothing else than those and the stamps
// (date, metaKeys), it becomes the first one whole; otherwise the per-kind rules merge the two at that
// path (a conflict records what differs). A move changes references to the old number on that side
// (supersedes, superseded_by), as renumber does. A move to a path the side holds already is not made.
// Nothing looks at which side is ours.
func sameSource(base, ours, theirs Files) (Files, Files, []Note) {
	baseUIDs := map[string]bool{}
	for p, c := range base {
		if d, ok := newDecision(0, p, c); ok && d.uid != "" {
			baseUIDs[d.uid] = true
		}
	}
	type src struct {
		d   decision
		doc mdDoc
	}
	bySource := [2]map[string][]src{{}, {}}
	for s, f := range []Files{ours, theirs} {
		for p, c := range f {
			if _, inBase := base[p]; inBase {
				continue
			}
			d, ok := newDecision(s, p, c)
			if !ok || d.uid != "" && baseUIDs[d.uid] {
				continue
			}
			doc, ok := parseMD(c)
			if !ok {
				continue
			}
			v, ok := chunkValue("source", doc.chunks["source"])
			if !ok || scalarString(v) == "" {
				continue
			}
			k := scalarString(v)
			bySource[s][k] = append(bySource[s][k], src{d, doc})
		}
	}
	var sources []string
	for k, xs := range bySource[0] {
		if ys := bySource[1][k]; len(xs) == 1 && len(ys) == 1 && xs[0].d.identity() != ys[0].d.identity() {
			sources = append(sources, k)
		}
	}
	if len(sources) == 0 {
		return ours, theirs, nil
	}
	sort.Strings(sources)
	out := [2]Files{copyFiles(ours), copyFiles(theirs)}
	remap := [2]map[int]int{{}, {}}
	var notes []Note
	for _, k := range sources {
		first, second := bySource[0][k][0], bySource[1][k][0]
		if decisionLess(second.d, first.d) {
			first, second = second, first
		}
		side := out[second.d.side]
		if _, taken := side[first.d.path]; taken && first.d.path != second.d.path {
			continue
		}
		var c []byte
		if sameBut(first.doc, second.doc, sourceIgnored) {
			c = first.d.content
		} else {
			doc := second.doc
			for _, key := range []string{"id", "uid"} {
				if fc, ok := first.doc.chunks[key]; ok && doc.chunks[key] != "" {
					doc.chunks[key] = fc
				}
			}
			c = doc.render()
		}
		delete(side, second.d.path)
		side[first.d.path] = c
		if second.d.num != first.d.num {
			remap[second.d.side][second.d.num] = first.d.num
		}
		msg := fmt.Sprintf("decision added on both sides from %s: one decision", k)
		if second.d.path != first.d.path {
			msg += " (" + second.d.path + " is " + first.d.path + ")"
		}
		notes = append(notes, Note{Path: first.d.path, Kind: "same-source", Message: msg})
	}
	notes = rewriteAllRefs(base, out, remap, "supersedes/superseded_by rewritten to the decision kept for one source", notes)
	return out[0], out[1], notes
}

// sourceIgnored are the front-matter keys in which two imports of one source may differ and still be one
// decision: its number and uid, and when and by whom it was written.
var sourceIgnored = map[string]bool{"id": true, "uid": true, "date": true}

// sameBut reports whether two markdown documents are the same apart from the keys of ignore and metaKeys.
func sameBut(x, y mdDoc, ignore map[string]bool) bool {
	if x.body != y.body || x.hasFM != y.hasFM {
		return false
	}
	keys := map[string]bool{}
	for _, k := range x.keys {
		keys[k] = true
	}
	for _, k := range y.keys {
		keys[k] = true
	}
	for k := range keys {
		if ignore[k] || metaKeys[k] {
			continue
		}
		cx, okx := x.chunks[k]
		cy, oky := y.chunks[k]
		if okx != oky || !sameChunk(k, cx, cy) {
			return false
		}
	}
	return true
}
