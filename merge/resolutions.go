package merge

import (
	"bytes"
	"strings"
)

// Two settlements of one conflict (docs/merge.md "One conflict settled twice").
//
// A conflict recorded in the base (conflicts/<id>.json) and settled on both sides (the record deleted on
// both) may have been settled in two different ways. The path-by-path merge cannot always see it: a
// settlement that keeps the version the file already holds changes nothing of the content (at most the
// stamps: updated_at, author...; a decision has none), so the other side's settlement would win silently.
// resolvedTwice compares the two settlements instead: when the file differs between the sides in more
// than the stamps (metaKeys), or one side deleted it, the settlement that wins by the usual rule (later
// updated_at, date or timestamp; ties by larger content; a change wins over a delete) is written whole
// and the other one is recorded as a new conflict. Nothing looks at which side is ours.

// resolvedTwice records a conflict for every path whose base conflict record both sides deleted with
// different settlements, unless the path-by-path merge already recorded one there (conflicted lists
// those paths). It writes the winning settlement into files and returns the new conflicts and notes.
func resolvedTwice(base, ours, theirs, files Files, conflicted map[string]bool) ([]Conflict, []Note) {
	var out []Conflict
	var notes []Note
	done := map[string]bool{}
	for rp, rb := range base {
		if !strings.HasPrefix(rp, "conflicts/") || !strings.HasSuffix(rp, ".json") {
			continue
		}
		if _, ok := ours[rp]; ok {
			continue
		}
		if _, ok := theirs[rp]; ok {
			continue
		}
		rec, err := ParseRecord(rb)
		p := rec.Path
		// A record is well formed when its file is named by its id (conflicts/<id>.json); others are left.
		if err != nil || rp != "conflicts/"+rec.ID+".json" || strings.HasPrefix(p, "conflicts/") || conflicted[p] || done[p] {
			continue
		}
		o, ook := ours[p]
		t, tok := theirs[p]
		if !ook && !tok || ook && tok && sameContent(p, o, t) {
			continue
		}
		done[p] = true
		b, bok := base[p]
		if !bok {
			b = nil
		}
		var c Conflict
		if !ook || !tok {
			edit := o
			if !ook {
				edit = t
			}
			c = newConflict(p, []string{""}, b, bok, edit, nil, "settled twice: the change wins over the delete")
			c.LostDeleted = true
			c.ID = conflictID(p, c.Field, b, bok, edit, nil, true)
		} else {
			aWins, rule := pickWinner(o, t, stampsFor(p, o), stampsFor(p, t))
			kept, lost := o, t
			if !aWins {
				kept, lost = t, o
			}
			c = newConflict(p, []string{""}, b, bok, kept, lost, "settled twice: "+rule)
		}
		files[p] = c.Kept
		out = append(out, c)
		notes = append(notes, Note{Path: p, Kind: "settled-twice", Message: "conflict " + rec.ID +
			" was settled differently on the two sides: one settlement is in the file, the other in conflict " + c.ID})
	}
	return out, notes
}

// stampsFor returns the stamp keys (stampKeys) of a markdown entry's front matter or a JSON record's top
// level; nil for anything else.
func stampsFor(p string, b []byte) map[string]string {
	switch kindOf(p) {
	case kindMarkdown:
		if d, ok := parseMD(b); ok {
			return d.stamps()
		}
	case kindJSON:
		if o, ok := parseObj(b); ok {
			return o.stamps()
		}
	}
	return nil
}

// sameContent reports whether two versions of p hold the same content apart from the keys that describe
// the write (metaKeys: updated_at, author, ...): front-matter keys of a markdown entry, top-level fields of
// a JSON record. Other files, and versions that do not parse, compare byte for byte.
func sameContent(p string, x, y []byte) bool {
	if bytes.Equal(x, y) {
		return true
	}
	switch kindOf(p) {
	case kindMarkdown:
		xd, ok1 := parseMD(x)
		yd, ok2 := parseMD(y)
		if !ok1 || !ok2 || xd.pre != yd.pre || xd.body != yd.body {
			return false
		}
		for _, k := range sortedUnion(xd.keys, yd.keys) {
			if metaKeys[k] {
				continue
			}
			xc, xok := xd.chunks[k]
			yc, yok := yd.chunks[k]
			if xok != yok || xok && !sameChunk(k, xc, yc) {
				return false
			}
		}
		return true
	case kindJSON:
		xo, ok1 := parseObj(x)
		yo, ok2 := parseObj(y)
		if !ok1 || !ok2 {
			return false
		}
		for _, k := range sortedUnion(xo.keys, yo.keys) {
			if metaKeys[k] {
				continue
			}
			xv, xok := xo.vals[k]
			yv, yok := yo.vals[k]
			if xok != yok || !bytes.Equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}
