package merge

import (
	"path"
	"strings"
)

// Path-by-path dispatch of Tree (docs/merge.md "Rules by kind of file", docs/format.md "Files").

type kind int

const (
	kindOther    kind = iota // generic: text diff3, else whole file
	kindMarkdown             // front matter + body
	kindJSON                 // JSON record
	kindNDJSON               // log, one JSON object a line
)

var markdownGlobs = []string{"knowledge/*.md", "conventions/*.md", "decisions/*.md", "skills/*/SKILL.md"}

var jsonGlobs = []string{"manifest.json", "state.json", "history/*.json", "skills/*/.proposals/*.json", "conflicts/*.json"}

// kindOf classifies a path of the context branch.
func kindOf(p string) kind {
	for _, g := range markdownGlobs {
		if ok, _ := path.Match(g, p); ok {
			return kindMarkdown
		}
	}
	for _, g := range jsonGlobs {
		if ok, _ := path.Match(g, p); ok {
			return kindJSON
		}
	}
	if _, ok := SessionID(p); ok {
		return kindJSON
	}
	if strings.HasPrefix(p, "activity/") && strings.HasSuffix(p, ".json") {
		return kindJSON
	}
	if strings.HasSuffix(p, ".ndjson") {
		return kindNDJSON
	}
	return kindOther
}

// mergePath merges one path. present is false when the merged tree has no
// file there.
func mergePath(p string, b []byte, bok bool, o []byte, ook bool, t []byte, tok bool) (out []byte, present bool, c *Conflict, notes []Note) {
	switch {
	case same(o, ook, t, tok):
		return o, ook, nil, nil
	case same(b, bok, o, ook):
		return t, tok, nil, nil
	case same(b, bok, t, tok):
		return o, ook, nil, nil
	case !ook || !tok:
		// The change is kept; the delete is reported and, except for a conflict record itself, recorded as
		// the lost version of a conflict, so that `ctx conflicts` lists it and `ctx resolve` can still
		// delete the file.
		edit := o
		if !ook {
			edit = t
		}
		notes = []Note{{Path: p, Kind: "delete-vs-edit",
			Message: "deleted on one side and changed on the other: the change is kept"}}
		if strings.HasPrefix(p, "conflicts/") {
			return edit, true, nil, notes
		}
		if !bok {
			b = nil
		}
		cf := newConflict(p, []string{""}, b, bok, edit, nil, "the change wins over the delete")
		cf.LostDeleted = true
		cf.ID = conflictID(p, cf.Field, b, bok, edit, nil, true)
		return edit, true, &cf, notes
	}
	if !bok {
		b = nil
	}
	var kept, lost []byte
	var fields []string
	var rule string
	switch kindOf(p) {
	case kindMarkdown:
		kept, lost, fields, rule, notes = mergeMarkdown(p, b, bok, o, t)
	case kindJSON:
		kept, lost, fields, rule, notes = mergeRecord(p, b, bok, o, t)
	case kindNDJSON:
		kept, lost, fields, rule, notes = mergeND(p, b, o, t)
	default:
		if isText(o) && isText(t) && isText(b) {
			kept, lost, fields, rule, notes = mergeText(b, o, t, nil, nil)
		} else {
			kept, lost, fields, rule, notes = wholeFile(o, t, nil, nil)
		}
	}
	if len(fields) > 0 {
		cf := newConflict(p, fields, b, bok, kept, lost, rule)
		c = &cf
	}
	return kept, true, c, notes
}
