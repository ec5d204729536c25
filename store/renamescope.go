package store

import (
	"context"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/merge"
)

// renameScopeLimit bounds the (deleted, added) pairs compared by similarity when a hand-edit scan looks
// for renamed private entries, like git's diff.renameLimit; beyond it only identical content is matched.
const renameScopeLimit = 10_000

// explicitScope reads the `scope` field of a file's front matter: ok is false when it has none (no front
// matter, no field, or one that does not parse: ctx commit refuses the last).
func explicitScope(b []byte) (Scope, bool) {
	fm, _, ok := SplitFrontMatter(b)
	if !ok {
		return "", false
	}
	m, err := ParseMeta(fm)
	if err != nil || m.String("scope") == "" {
		return "", false
	}
	sc, err := ParseScope(m.String("scope"))
	if err != nil {
		return "", false
	}
	return sc, true
}

// skillDirOf is the folder of the skill a path belongs to ("skills/NAME"), or "".
func skillDirOf(p string) string {
	rest, ok := strings.CutPrefix(p, "skills/")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return "skills/" + name
}

// keepRenamedScopes gives a file added by hand the scope of a private or ephemeral file deleted by hand
// that it is a rename of (docs/security.md "Nothing of a private entry on the public branch"): decisions
// and SKILL.md carry no scope line, so without it `mv` of a private entry would make its new path public.
// As git detects renames, an added file whose content is identical or most similar (at least 50%, the
// merge layer's rename measure, on the body) to a deleted one is its rename. A file whose front matter
// names its scope keeps that (ctx commit checks it); the other files added in a skill folder that took a
// private scope this way take it too. deleted holds the scope and blob of each file deleted by hand.
// added holds the content of each added file that names no scope (the scan read it already).
func (s *Store) keepRenamedScopes(ctx context.Context, out []HandEdit, deleted map[string]indexEntry, added map[string][]byte) {
	type old struct {
		scope Scope
		blob  gitstore.Hash
		path  string
		text  string
	}
	var olds []old
	for p, e := range deleted {
		if e.scope != Public {
			olds = append(olds, old{scope: e.scope, blob: e.blob, path: p})
		}
	}
	if len(olds) == 0 {
		return
	}
	var addedAt []int
	for i, e := range out {
		if e.Change == ChangeAdded && e.Scope == Public {
			addedAt = append(addedAt, i)
		}
	}
	if len(addedAt) == 0 {
		return
	}
	similar := len(olds)*len(addedAt) <= renameScopeLimit
	if similar {
		for i := range olds {
			b, err := s.repo.ReadBlob(ctx, olds[i].blob)
			if err != nil {
				continue // not comparable by content: only an identical blob matches it
			}
			olds[i].text = renameBody(b)
		}
	}
	skillScope := map[string]Scope{}
	var unexplicit []int
	for _, i := range addedAt {
		p := out[i].Path
		b, ok := added[p]
		if !ok {
			continue
		}
		unexplicit = append(unexplicit, i)
		h := blobHash(b)
		best, bestScore := -1, 0.0
		for k, o := range olds {
			if o.blob == h {
				best, bestScore = k, 1
				break
			}
			if !similar || o.text == "" {
				continue
			}
			if sim := merge.Similarity(o.text, renameBody(b)); sim >= 0.5 && sim > bestScore {
				best, bestScore = k, sim
			}
		}
		if best < 0 {
			continue
		}
		out[i].Scope = olds[best].scope
		if d := skillDirOf(p); d != "" {
			skillScope[d] = olds[best].scope
		}
	}
	for _, i := range unexplicit {
		if sc, ok := skillScope[skillDirOf(out[i].Path)]; ok && out[i].Scope == Public {
			out[i].Scope = sc
		}
	}
}

// renameBody is what rename similarity compares: the body of a file with front matter (a rename may
// rewrite the front matter: a decision's number), else the whole content.
func renameBody(b []byte) string {
	if _, body, ok := SplitFrontMatter(b); ok && len(body) > 0 {
		return string(body)
	}
	return string(b)
}
