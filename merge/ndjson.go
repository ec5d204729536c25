package merge

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// .ndjson logs: skills/*/.feedback/YYYY-MM.ndjson, skills/*/.usage/YYYY-MM.ndjson (layout 1:
// skills/*/.feedback.ndjson, skills/*/.usage.ndjson) and any
// other *.ndjson file (docs/format.md "Logs", docs/merge.md "union by id,
// ordered by timestamp then id").
//
// Each line is a record keyed by its "id" (a line that is not a JSON object
// with an id is keyed by its own bytes, so it behaves as a set element). The
// logs are merged by record, 3-way:
//   - a record added on either side is kept (union);
//   - a record deleted on one side stays deleted only if the other side left
//     it unchanged; deleted on one side and changed on the other, the change
//     is kept and a Note reports the delete;
//   - a record both sides changed is merged field by field like a JSON
//     record (jsonrec.go); the winner of a conflicting field is picked per
//     line by pickWinner (later timestamp, else larger line).
// The merged lines are sorted by timestamp (RFC 3339 compared as time;
// records without a readable timestamp after those with one), then id,
// then the line's bytes; blank lines are dropped; every line ends in "\n".

type ndLine struct {
	raw string
	id  string
	obj *jobj
}

// sortKey orders lines by timestamp, then id, then bytes.
func (l ndLine) sortKey() string {
	ts := ""
	if l.obj != nil {
		var s string
		if v, ok := l.obj.vals["timestamp"]; ok && json.Unmarshal(v, &s) == nil {
			if t, ok := parseTime(s); ok {
				ts = "0" + t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
			} else {
				ts = "1" + s
			}
		}
	}
	if ts == "" {
		ts = "2"
	}
	return ts + "\x00" + l.id + "\x00" + l.raw
}

// parseNDLine parses one line of a log (a trailing "\r" dropped): ok is false for a blank line; key is
// "id:<id>" for a record with an id, else "line:<the line>".
func parseNDLine(raw string) (l ndLine, key string, ok bool) {
	raw = strings.TrimSuffix(raw, "\r")
	if strings.TrimSpace(raw) == "" {
		return l, "", false
	}
	l = ndLine{raw: raw}
	key = "line:" + raw
	if o, ok := parseObj([]byte(raw)); ok {
		l.obj = o
		if v, ok := o.vals["id"]; ok {
			var s string
			if json.Unmarshal(v, &s) == nil {
				l.id = s
			} else {
				l.id = string(v)
			}
			key = "id:" + l.id
		}
	}
	return l, key, true
}

// parseND returns the records of a log by key.
func parseND(content []byte) map[string]ndLine {
	out := map[string]ndLine{}
	seen := map[string]int{}
	for _, raw := range strings.Split(string(content), "\n") {
		l, key, ok := parseNDLine(raw)
		if !ok {
			continue
		}
		if n := seen[key]; n > 0 {
			seen[key] = n + 1
			key += "#" + strconv.Itoa(n)
		} else {
			seen[key] = 1
		}
		out[key] = l
	}
	return out
}

// mergeND merges two versions of a log both sides changed.
func mergeND(path string, base []byte, x, y []byte) (kept, lost []byte, fields []string, rule string, notes []Note) {
	bm, xm, ym := parseND(base), parseND(x), parseND(y)
	keys := map[string]bool{}
	for _, m := range []map[string]ndLine{bm, xm, ym} {
		for k := range m {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	log := &fieldLog{path: path}
	var kl, ll []ndLine
	for _, k := range sorted {
		bl, bok := bm[k]
		xl, xok := xm[k]
		yl, yok := ym[k]
		switch {
		case xok == yok && (!xok || xl.raw == yl.raw):
			if xok {
				kl, ll = append(kl, xl), append(ll, xl)
			}
		case xok == bok && (!xok || xl.raw == bl.raw):
			if yok {
				kl, ll = append(kl, yl), append(ll, yl)
			}
		case yok == bok && (!yok || yl.raw == bl.raw):
			if xok {
				kl, ll = append(kl, xl), append(ll, xl)
			}
		case !xok || !yok:
			l := xl
			if !xok {
				l = yl
			}
			kl, ll = append(kl, l), append(ll, l)
			log.note("delete-vs-edit", "record "+l.id+" deleted on one side and changed on the other: the change is kept")
		default:
			aWins, _ := pickWinner([]byte(xl.raw), []byte(yl.raw), stampsOf(xl.obj), stampsOf(yl.obj))
			a, b := xl, yl
			if !aWins {
				a, b = yl, xl
			}
			if a.obj != nil && b.obj != nil {
				var bo *jobj
				if bok {
					bo = bl.obj
				}
				prefix := a.id + "."
				ko := mergeObj(bo, a.obj, b.obj, true, bo == nil, prefix, log)
				lo := mergeObj(bo, a.obj, b.obj, false, bo == nil, prefix, nil)
				kl = append(kl, ndLine{raw: string(ko.compact()), id: a.id, obj: ko})
				ll = append(ll, ndLine{raw: string(lo.compact()), id: a.id, obj: lo})
				break
			}
			log.conflict(a.id)
			kl, ll = append(kl, a), append(ll, b)
		}
	}
	rule = "per record: later timestamp wins; ties by larger line"
	return renderND(kl), renderND(ll), log.fields, rule, log.notes
}

func renderND(lines []ndLine) []byte {
	keys := make([]string, len(lines))
	idx := make([]int, len(lines))
	for i, l := range lines {
		keys[i] = l.sortKey()
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return keys[idx[i]] < keys[idx[j]] })
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(lines[i].raw)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
