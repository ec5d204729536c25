package merge

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
)

// JSON records: manifest.json, state.json, history/*.json,
// skills/*/.proposals/*.json, activity/**/*.json, conflicts/*.json
// (docs/format.md "JSON records", docs/merge.md "front matter, JSON records").
//
// The object is merged field by field, 3-way, recursing into nested
// objects; fields only one side knows are carried through. Arrays are values,
// except an array both sides changed whose elements, in all three versions,
// are distinct scalars (strings, numbers, booleans, null): it is merged as a
// set (elements added by either side kept, elements removed by either side
// removed; the winner's order, the other side's additions placed after their
// predecessor). Output: two-space indentation, a final newline, the winner's
// key order with the other side's new keys placed after their predecessor.
// Values keep their bytes (numbers and string escapes are not rewritten).

// jobj is a JSON object with its key order; values are compact JSON.
type jobj struct {
	keys []string
	vals map[string][]byte
}

// parseObj parses a JSON object; ok is false for anything else.
func parseObj(b []byte) (*jobj, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil || t != json.Delim('{') {
		return nil, false
	}
	o := &jobj{vals: map[string][]byte{}}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, ok := kt.(string)
		if !ok {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return nil, false
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = c.Bytes()
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return o, true
}

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// compact writes o as compact JSON.
func (o *jobj) compact() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(k))
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// record writes o as a JSON record: two-space indented, final newline.
func (o *jobj) record() []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.compact(), "", "  "); err != nil {
		return append(o.compact(), '\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// stamps returns the top-level string values of the stamp keys.
func (o *jobj) stamps() map[string]string {
	out := map[string]string{}
	for _, k := range stampKeys {
		var s string
		if v, ok := o.vals[k]; ok && json.Unmarshal(v, &s) == nil {
			out[k] = s
		}
	}
	return out
}

// mergeObj merges objects a and b against base (nil: absent). a is the
// overall winner: its value is taken for metadata keys, and for conflicting
// fields when aWins (the kept pass; the lost pass has aWins false). Field
// names in log are dotted paths below prefix. created says that the whole
// record has no base (a file, or an NDJSON line, created on both sides at
// once): only then is a field one side wrote with its type's zero value not
// an edit (docs/merge.md "Created on both sides"). A field both sides added
// to a record that has a base, with different values, is a conflict: there
// `false` is what `ctx adapters disable` wrote, not a default.
func mergeObj(base, a, b *jobj, aWins, created bool, prefix string, log *fieldLog) *jobj {
	if base == nil {
		base = &jobj{vals: map[string][]byte{}}
	}
	out := &jobj{vals: map[string][]byte{}}
	for _, k := range sortedUnion(base.keys, a.keys, b.keys) {
		bv, bok := base.vals[k]
		av, aok := a.vals[k]
		cv, cok := b.vals[k]
		field := prefix + k
		var v []byte
		present := true
		switch {
		case metaKeys[k]:
			// The kept version names the winner's write; the lost one its own (who wrote it, when).
			v, present = av, aok
			if !aWins {
				v, present = cv, cok
			}
		case aok == cok && (!aok || bytes.Equal(av, cv)):
			v, present = av, aok
		case aok == bok && (!aok || bytes.Equal(av, bv)):
			v, present = cv, cok
		case cok == bok && (!cok || bytes.Equal(cv, bv)):
			v, present = av, aok
		case created && !bok && isZeroJSON(cv):
			// Added on both sides, one of them with its type's zero value: that side only wrote the
			// default of a field it did not set (a record created on both sides at once).
			v = av
		case created && !bok && isZeroJSON(av):
			v = cv
		case !aok || !cok:
			// The change is kept in the kept version; the lost version has the delete.
			v = av
			if !aok {
				v = cv
			}
			present = aWins
			log.conflict(field)
			log.note("delete-vs-edit", "field "+field+" deleted on one side and changed on the other: the change is kept")
		case isObject(av) && isObject(cv):
			ao, ok1 := parseObj(av)
			co, ok2 := parseObj(cv)
			var bo *jobj
			if bok && isObject(bv) {
				bo, _ = parseObj(bv)
			}
			if ok1 && ok2 {
				v = mergeObj(bo, ao, co, aWins, created, field+".", log).compact()
				break
			}
			fallthrough
		default:
			if s, ok := mergeSet(bv, av, cv); ok {
				v = s
				break
			}
			log.conflict(field)
			v = av
			if !aWins {
				v = cv
			}
		}
		if present {
			out.vals[k] = v
		}
	}
	out.keys = mergeOrder(a.keys, b.keys, func(k string) bool { _, ok := out.vals[k]; return ok })
	return out
}

// isZeroJSON reports whether a compact JSON value is its type's zero value:
// "", 0, false, null, [] or {}.
func isZeroJSON(raw []byte) bool {
	switch string(raw) {
	case `""`, "false", "null", "[]", "{}":
		return true
	}
	var f float64
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && json.Unmarshal(raw, &f) == nil && f == 0
}

// scalarSet splits a compact JSON array of distinct scalars; ok is false
// for anything else.
func scalarSet(raw []byte) ([]string, bool) {
	var elems []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	out := make([]string, 0, len(elems))
	seen := map[string]bool{}
	for _, e := range elems {
		var c bytes.Buffer
		if json.Compact(&c, e) != nil || c.Len() == 0 {
			return nil, false
		}
		s := c.String()
		if s[0] == '{' || s[0] == '[' || seen[s] {
			return nil, false
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, true
}

// mergeSet merges arrays of distinct scalars as sets (see the package
// rules above). base may be nil (absent).
func mergeSet(base, a, b []byte) ([]byte, bool) {
	as, ok1 := scalarSet(a)
	bs, ok2 := scalarSet(b)
	if !ok1 || !ok2 {
		return nil, false
	}
	var base0 []string
	if base != nil {
		var ok bool
		if base0, ok = scalarSet(base); !ok {
			return nil, false
		}
	}
	in := func(l []string) map[string]bool {
		m := make(map[string]bool, len(l))
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	inBase, inA, inB := in(base0), in(as), in(bs)
	keep := func(s string) bool {
		if inBase[s] {
			return inA[s] && inB[s]
		}
		return inA[s] || inB[s]
	}
	return []byte("[" + strings.Join(mergeOrder(as, bs, keep), ",") + "]"), true
}

// mergeRecord merges a JSON record both sides changed. A version that is
// not a JSON object cannot be merged by field: the winner is kept whole and
// the conflict has the field "". An unreadable base counts as empty.
func mergeRecord(path string, base []byte, baseOK bool, x, y []byte) (kept, lost []byte, fields []string, rule string, notes []Note) {
	xo, ok1 := parseObj(x)
	yo, ok2 := parseObj(y)
	if !ok1 || !ok2 {
		return wholeFile(x, y, stampsOf(xo), stampsOf(yo))
	}
	aWins, rule := pickWinner(x, y, xo.stamps(), yo.stamps())
	xFirst, twoIDs := false, false
	if path == manifestPath {
		if xFirst, twoIDs = firstIdentity(xo, yo); twoIDs {
			aWins, rule = xFirst, identityRule
		}
	}
	a, b := xo, yo
	if !aWins {
		a, b = yo, xo
	}
	var bo *jobj
	if baseOK {
		bo, _ = parseObj(base)
	}
	log := &fieldLog{path: path}
	// An unreadable base counts as empty: the record is then created on both sides, as without one.
	k := mergeObj(bo, a, b, true, bo == nil, "", log)
	l := mergeObj(bo, a, b, false, bo == nil, "", nil)
	notes = log.notes
	if twoIDs && slices.Contains(log.fields, "project.id") {
		notes = append(notes, identityNote(xo, yo, xFirst))
	}
	return k.record(), l.record(), log.fields, rule, notes
}

// manifestPath is the store's manifest (docs/format.md "Records").
const manifestPath = "manifest.json"

// identityRule is the rule of a manifest conflict between two stores of different identity.
const identityRule = "the store created first keeps its identity: earlier created_at, ties by smaller project.id"

// identity returns a manifest's project.id and created_at ("" when absent or not a string).
func identity(o *jobj) (id, created string) {
	if p, ok := parseObj(o.vals["project"]); ok {
		_ = json.Unmarshal(p.vals["id"], &id)
	}
	_ = json.Unmarshal(o.vals["created_at"], &created)
	return id, created
}

// firstIdentity decides the manifest merge of two stores of different identity (project.id set on both
// sides and different: a store created offline by `ctx init` merged with the team's, or two stores
// started apart): the store that existed first wins every conflicting field, its project (id, name,
// repo_url) and created_at included, and the other version is the conflict's lost one (docs/merge.md
// "Two stores, one identity"). First is the earlier created_at (as time, when both parse and differ),
// else the byte-wise smaller project.id. ok is false when the sides share one identity (or either lacks
// one): the usual rule applies.
func firstIdentity(x, y *jobj) (xFirst, ok bool) {
	xid, xc := identity(x)
	yid, yc := identity(y)
	if xid == "" || yid == "" || xid == yid {
		return false, false
	}
	if tx, okx := parseTime(xc); okx {
		if ty, oky := parseTime(yc); oky && !tx.Equal(ty) {
			return tx.Before(ty), true
		}
	}
	return xid < yid, true
}

// identityNote reports the merge of two stores of different identity: which one kept it.
func identityNote(x, y *jobj, xFirst bool) Note {
	if !xFirst {
		x, y = y, x
	}
	kid, kc := identity(x)
	lid, lc := identity(y)
	q := strconv.Quote // the values come from fetched trees: no control characters in a message
	return Note{Path: manifestPath, Kind: "identity", Message: "two stores of different identity merged: project " + q(kid) +
		" (created " + q(kc) + ") keeps its identity; project " + q(lid) + " (created " + q(lc) + ") is the conflict's lost version"}
}

func stampsOf(o *jobj) map[string]string {
	if o == nil {
		return nil
	}
	return o.stamps()
}

// wholeFile keeps the winner of two versions whole; the loser is lost.
func wholeFile(x, y []byte, sx, sy map[string]string) (kept, lost []byte, fields []string, rule string, notes []Note) {
	aWins, rule := pickWinner(x, y, sx, sy)
	if aWins {
		return x, y, []string{""}, rule, nil
	}
	return y, x, []string{""}, rule, nil
}
