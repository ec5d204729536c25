package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/merge"
)

// keyedFolders are the folders whose keys must not look alike (refuseLookalike): the kinds' folders of
// <key>.md files and the skills' folder of <name>/ folders.
var keyedFolders = []struct{ what, dir, suffix string }{
	{KnowledgeKind.Name, KnowledgeKind.Dir, ".md"},
	{ConventionKind.Name, ConventionKind.Dir, ".md"},
	{"skill", "skills", ""},
}

// keyedPathOf returns the folder (index in keyedFolders) and key of path p of the checked-out tree, ok false for
// a path of no keyed folder.
func keyedPathOf(p string) (int, string, bool) {
	for i, f := range keyedFolders {
		rest, ok := strings.CutPrefix(p, f.dir+"/")
		if !ok {
			continue
		}
		if f.suffix == "" {
			name, _, _ := strings.Cut(rest, "/")
			return i, name, name != ""
		}
		key, ok := strings.CutSuffix(rest, f.suffix)
		return i, key, ok && !strings.Contains(key, "/")
	}
	return 0, "", false
}

// handEditRules checks the hand edits that ValidateFile passed (disk: their content) against the rules
// every write of ctx enforces, with v the refs' tips: a new key must not look like an existing one (the
// write path's refuseLookalike, same message), a knowledge or convention entry must hold text, and a new
// decision must not take the number or uid of another. It returns one problem a file, each naming it.
func handEditRules(ctx context.Context, v *View, edits []HandEdit, disk map[string][]byte) ([]string, error) {
	var problems []string
	gone := map[string]bool{} // paths the hand edits delete: their keys and numbers are free
	for _, e := range edits {
		if e.Change == ChangeDeleted {
			gone[e.Path] = true
		}
	}
	// Empty entries.
	for _, e := range edits {
		data, ok := disk[e.Path]
		if !ok {
			continue
		}
		if i, key, ok := keyedPathOf(e.Path); ok && keyedFolders[i].suffix != "" {
			if _, body := ReadFrontMatter(data); strings.TrimSpace(string(body)) == "" {
				problems = append(problems, fmt.Sprintf("%s: the content is empty: an entry holds text (to remove the entry: delete the file, or ctx %s rm %s)",
					e.Path, keyedFolders[i].what, key))
			}
		}
	}
	// Look-alike keys: a key added by hand against the keys of the refs (but those it deletes) and against
	// the other keys added by hand.
	added := map[int][]string{} // keyedFolders index -> keys added, in path order
	seenKey := map[string]bool{}
	for _, e := range edits {
		if e.Change != ChangeAdded {
			continue
		}
		if _, ok := disk[e.Path]; !ok {
			continue
		}
		i, key, ok := keyedPathOf(e.Path)
		if !ok || seenKey[keyedFolders[i].dir+"/"+key] {
			continue
		}
		seenKey[keyedFolders[i].dir+"/"+key] = true
		added[i] = append(added[i], key)
	}
	for i, keys := range added {
		f := keyedFolders[i]
		// The skeleton of each key added before, to its first key: one pass, not one over every earlier
		// key per key (2,000 files added by hand were 2 million skeletons).
		earlier := map[string]string{}
		for _, key := range keys {
			other, err := lookalike(ctx, v, nil, f.dir, f.suffix, key)
			if err != nil {
				return nil, err
			}
			sk := Skeleton(key)
			if other == "" {
				other = earlier[sk]
			}
			if _, ok := earlier[sk]; !ok {
				earlier[sk] = key
			}
			if other != "" && !gone[f.dir+"/"+other+f.suffix] {
				problems = append(problems, fmt.Sprintf("%s: %s %q looks like the existing %s %q (they differ only in characters that look alike: %s): use %q, or a key that reads differently",
					f.dir+"/"+key+f.suffix, f.what, key, f.what, other, describeDiff(key, other), other+f.suffix))
			}
		}
	}
	// Decision numbers, uids and supersede links, of the decisions added and of those edited (an edit of
	// the front matter's id, uid or superseded_by can clash as an added file can).
	var newDecisions []Decision
	edited := map[string]bool{} // paths of the decisions added or edited
	for _, e := range edits {
		data, ok := disk[e.Path]
		if !ok || (e.Change != ChangeAdded && e.Change != ChangeModified) || !strings.HasPrefix(e.Path, "decisions/") {
			continue
		}
		newDecisions = append(newDecisions, ParseDecision(strings.TrimPrefix(e.Path, "decisions/"), e.Scope, data))
		edited[e.Path] = true
	}
	if len(newDecisions) > 0 {
		all, err := v.ListDecisions(ctx)
		if err != nil {
			return nil, err
		}
		var held []Decision
		for _, d := range all {
			if !gone[d.Path] && !edited[d.Path] {
				held = append(held, d)
			}
		}
		problems = append(problems, supersedeCycles(held, newDecisions)...)
		for _, d := range newDecisions {
			for _, o := range held {
				switch {
				case d.ID > 0 && d.ID == o.ID:
					problems = append(problems, fmt.Sprintf("%s: decision number %d is already %s: decisions are numbered once (add a decision with ctx decision add, or give the file a free number)", d.Path, d.ID, o.Path))
				case d.UID != "" && d.UID == o.UID:
					problems = append(problems, fmt.Sprintf("%s: uid %s is already that of %s: a copied decision needs its own uid (remove the uid line, or add it with ctx decision add)", d.Path, d.UID, o.Path))
				default:
					continue
				}
				break
			}
			held = append(held, d)
		}
	}
	sort.Strings(problems)
	return problems, nil
}

// supersedeCycles returns a problem for each decision of edited whose superseded_by chain, over held and
// edited together, comes back to it (a cycle ctx decision set-status refuses; readers following the
// links would go round for ever). Links to numbers no decision holds end a chain.
func supersedeCycles(held, edited []Decision) []string {
	next := map[int]int{}
	for _, ds := range [][]Decision{held, edited} {
		for _, d := range ds {
			if d.ID > 0 && d.Status == "superseded" && d.SupersededBy > 0 {
				next[d.ID] = d.SupersededBy
			}
		}
	}
	inCycle := map[int]bool{}
	for _, c := range merge.Cycles(next) {
		for _, n := range c {
			inCycle[n] = true
		}
	}
	var problems []string
	for _, d := range edited {
		if d.ID <= 0 || !inCycle[d.ID] {
			continue // a cycle that does not pass through d: reported for its own members if edited
		}
		chain := cycleFrom(next, d.ID)
		parts := make([]string, 0, len(chain)+1)
		for _, n := range append(chain, d.ID) {
			parts = append(parts, strconv.Itoa(n))
		}
		problems = append(problems, fmt.Sprintf("%s: superseded_by makes a cycle (%s): a decision cannot be replaced, directly or through others, by one it replaces (set one of them back with status accepted)",
			d.Path, strings.Join(parts, " -> ")))
	}
	return problems
}

// Clash is a pair (or more) of entries of the context refs that ctx's writes never make side by side but
// that a merge, an older ctx or plain git can put there (ctx doctor): keys that look alike
// (refuseLookalike), or decisions that share a number or a uid. Every entry stays readable; the clash is
// repaired by renaming or removing one of them.
type Clash struct {
	// Kind is "lookalike", "decision-number", "decision-uid", "supersede-cycle" (decisions superseded by
	// each other in a cycle: a resolution or plain git wrote it), "scopes" (one entry held by two or more
	// scopes' refs: Paths holds the same path once per scope) or "skill-orphaned" (a skill folder holding
	// logs but no SKILL.md in any scope: orphanedSkills).
	Kind string `json:"kind"`
	// Paths are the entries' paths (a skill's folder ends in "/"), sorted, with their scope.
	Paths []ScopedPath `json:"paths"`
	// Fix says how to repair it.
	Fix string `json:"fix"`
}

// ScopedPath is a path of a context ref with the scope that holds it.
type ScopedPath struct {
	Scope Scope  `json:"scope"`
	Path  string `json:"path"`
}

// Clashes returns the clashes of the refs' tips (see Clash), in a stable order: look-alike keys by
// folder, then decisions by number and uid. It records them for Status (RecordedClashes), keyed by the
// tips it checked.
func (s *Store) Clashes(ctx context.Context) ([]Clash, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.RefView(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := clashes(ctx, v)
	if err != nil {
		return nil, err
	}
	// The view may be of newer tips than those read first (a write in between): the record is then keyed
	// by the older ones, which RecordedClashes only trusts as far as the clashes' paths still exist.
	s.recordClashes(ctx, tips, cs)
	return cs, nil
}

func clashes(ctx context.Context, v *View) ([]Clash, error) {
	var out []Clash
	for _, f := range keyedFolders {
		names, err := v.List(ctx, f.dir)
		if err != nil {
			return nil, err
		}
		bySkel := pathGroups[string]{}
		for _, n := range names {
			key, ok := n.Name, n.Dir
			if f.suffix != "" {
				key, ok = strings.CutSuffix(n.Name, f.suffix)
				ok = ok && !n.Dir
			}
			if !ok {
				continue
			}
			p := f.dir + "/" + n.Name
			if n.Dir {
				p += "/"
			}
			sk := Skeleton(key)
			bySkel[sk] = append(bySkel[sk], ScopedPath{Scope: n.Scope, Path: p})
		}
		for _, sk := range bySkel.shared() {
			out = append(out, Clash{Kind: "lookalike", Paths: bySkel[sk],
				Fix: fmt.Sprintf("these %s keys look alike (or fold to one name on a case-insensitive file system): keep one, rename or remove the others (ctx %s rm <key>)", f.what, f.what)})
		}
	}
	all, err := v.ListDecisions(ctx)
	if err != nil {
		return nil, err
	}
	byID, byUID := pathGroups[int]{}, pathGroups[string]{}
	for _, d := range all {
		sp := ScopedPath{Scope: d.Scope, Path: d.Path}
		if d.ID > 0 {
			byID[d.ID] = append(byID[d.ID], sp)
		}
		if d.UID != "" {
			byUID[d.UID] = append(byUID[d.UID], sp)
		}
	}
	for _, id := range byID.shared() {
		out = append(out, Clash{Kind: "decision-number", Paths: byID[id],
			Fix: fmt.Sprintf("decisions share the number %d, so commands that take it refuse it: give all but one a free number (rename the file, change its id: line and remove its uid: line), then ctx commit", id)})
	}
	for _, u := range byUID.shared() {
		out = append(out, Clash{Kind: "decision-uid", Paths: byUID[u],
			Fix: "decisions share the uid " + u + ": remove the uid: line of the copies (or remove the copies), then ctx commit"})
	}
	for _, g := range supersedeCycleGroups(all) {
		c := Clash{Kind: "supersede-cycle"}
		chain := make([]string, 0, len(g)+1)
		for _, d := range g {
			c.Paths = append(c.Paths, ScopedPath{Scope: d.Scope, Path: d.Path})
			chain = append(chain, strconv.Itoa(d.ID))
		}
		chain = append(chain, chain[0])
		c.Fix = fmt.Sprintf("these decisions replace each other in a cycle of superseded_by (%s), which ctx decision supersede refuses: set one back (ctx decision set-status %d accepted), or keep the right version of an open conflict on them (ctx conflicts)",
			strings.Join(chain, " -> "), g[0].ID)
		sort.Slice(c.Paths, func(i, j int) bool { return c.Paths[i].Path < c.Paths[j].Path })
		out = append(out, c)
	}
	sc, err := scopeClashes(ctx, v)
	if err != nil {
		return nil, err
	}
	orphans, err := orphanedSkills(ctx, v)
	return append(append(out, sc...), orphans...), err
}

// scopeFolders are the folders of entries, with the command that moves one (ctx <what> scope KEY SCOPE)
// and whether an entry is a folder (a skill) rather than a file.
var scopeFolders = []struct {
	what, dir string
	folder    bool
}{
	{KnowledgeKind.Name, KnowledgeKind.Dir, false},
	{ConventionKind.Name, ConventionKind.Dir, false},
	{"decision", "decisions", false},
	{"skill", "skills", true},
}

// scopeClashes returns the entries held by more than one scope's ref (kind "scopes"), by folder then
// name. ctx's writes never put an entry in two scopes (docs/format.md), but a merge can: this machine
// moves a public entry to the private scope while another edits it, and the merge of the other machine,
// which cannot see this one's private ref, keeps the edit (a change wins over a delete). The readers see
// the copy of the first scope by precedence (ephemeral, private, public), so the other is hidden until
// ctx <kind> scope KEY SCOPE keeps the copy of SCOPE and removes the others (SetScope).
func scopeClashes(ctx context.Context, v *View) ([]Clash, error) {
	var out []Clash
	for _, f := range scopeFolders {
		held := map[string][]ScopedPath{}
		var names []string
		for _, sc := range Scopes {
			es, err := v.r.List(ctx, sc, f.dir)
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				if e.Dir != f.folder || (!f.folder && !strings.HasSuffix(e.Name, ".md")) {
					continue
				}
				p := f.dir + "/" + e.Name
				if f.folder {
					p += "/"
				}
				if held[e.Name] == nil {
					names = append(names, e.Name)
				}
				held[e.Name] = append(held[e.Name], ScopedPath{Scope: sc, Path: p})
			}
		}
		slices.Sort(names)
		for _, n := range names {
			ps := held[n]
			if len(ps) < 2 {
				continue
			}
			key := strings.TrimSuffix(n, ".md")
			if num, _, _ := strings.Cut(key, "-"); f.dir == "decisions" {
				if id, err := strconv.Atoi(num); err == nil {
					key = strconv.Itoa(id)
				}
			}
			scs := make([]string, len(ps))
			for i, p := range ps {
				scs[i] = string(p.Scope)
			}
			out = append(out, Clash{Kind: "scopes", Paths: ps, Fix: fmt.Sprintf(
				"%s %s is held by the %s scopes (a merge kept another machine's edit of it while this one moved it, "+
					"or a token of ctx mcp serve --http, which sees the public scope only, wrote the public copy): "+
					"ctx reads the %s copy, the others are hidden; keep one with `ctx %s scope %s SCOPE`, "+
					"which keeps the copy of SCOPE and removes the others (read the public one with `git show %s`)",
				f.what, key, strings.Join(scs, " and "), ps[0].Scope, f.what, key, "<context branch>:"+ps[len(ps)-1].Path)})
		}
	}
	return out, nil
}

// pathGroups are the paths that hold each value of K (a skeleton, a decision number, a uid), in the order
// they were found.
type pathGroups[K cmp.Ordered] map[K][]ScopedPath

// shared returns the values held by more than one path, sorted.
func (g pathGroups[K]) shared() []K {
	var out []K
	for k, ps := range g {
		if len(ps) > 1 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// handEditProblems reads the files of the hand edits (all but deletions) from the checkout and checks them
// as CommitHandEdits does before it commits: size, links, paths and content (ValidateFile), scopes, then
// the rules of handEditRules. It returns the files' content by path and one problem a file, each starting
// with the file's path and ": ".
func (s *Store) handEditProblems(ctx context.Context, edits []HandEdit) (map[string][]byte, []string, error) {
	fsys, err := openCheckout(s.CheckoutRoot())
	if err != nil {
		return nil, nil, err
	}
	defer fsys.Close()
	disk := map[string][]byte{}
	var problems []string
	for _, e := range edits {
		if e.Change == ChangeDeleted {
			continue
		}
		if fi, err := fsys.lstat(e.Path); err == nil && fi.Mode().IsRegular() && fi.Size() > maxFileBytes {
			problems = append(problems, fmt.Sprintf("%s: %s, over the limit of one file of the store (%s, docs/limits.md \"Files of the store\"): "+
				"shrink it, or split it into several entries", e.Path, sizeOf(fi.Size()), sizeOf(maxFileBytes)))
			continue
		}
		data, err := fsys.readFile(e.Path)
		var nr *notRegularError
		if errors.As(err, &nr) {
			problems = append(problems, fmt.Sprintf("%s: %v", e.Path, nr))
			continue
		}
		if errors.Is(err, errLink) {
			problems = append(problems, fmt.Sprintf("%s: %v", e.Path, err))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", e.Path, err)
		}
		if err := ValidateFile(e.Path, data); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if msg := scopeEdited(e.Path, e.Scope, data); msg != "" {
			problems = append(problems, msg)
			continue
		}
		disk[e.Path] = data
	}
	if len(disk) > 0 {
		v, err := s.RefView(ctx)
		if err != nil {
			return nil, nil, err
		}
		more, err := handEditRules(ctx, v, edits, disk)
		if err != nil {
			return nil, nil, err
		}
		problems = append(problems, more...)
	}
	return disk, problems, nil
}

// HandEditProblems is what `ctx commit` would refuse of edits (HandEdits' result), by path (the path of
// .context/ the problem names, as in HandEdit.Path): the reason, as CommitHandEdits words it. Reading
// only: `ctx status` and `ctx restore` use it so that they never advise `ctx commit` for a file it
// refuses.
func (s *Store) HandEditProblems(ctx context.Context, edits []HandEdit) (map[string]string, error) {
	_, problems, err := s.handEditProblems(ctx, edits)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	// What git deleted or wrote there from the user's branches, which ctx commit refuses first
	// (commitHandEdits).
	for p, ref := range s.removedByGit(ctx, edits) {
		out[p] = removedByGitWhy(p, ref)
	}
	if set := s.gitWritten(); len(set) > 0 {
		for _, e := range edits {
			if _, ok := out[e.Path]; !ok && set[e.Path] {
				out[e.Path] = e.Path + ": " + (&GitWrittenError{Paths: []string{e.Path}}).Error()
			}
		}
	}
	for _, p := range problems {
		path, _, _ := strings.Cut(p, ": ")
		if _, ok := out[path]; !ok {
			out[path] = p
		}
	}
	return out, nil
}

// decisionFileCycles is supersedeCycles over the decisions of files (decisions/*.md of the public
// branch, as a merge holds them), edited being the paths whose cycles count.
func decisionFileCycles(files map[string][]byte, edited map[string]bool) []string {
	var held, ed []Decision
	for p, b := range files {
		name, ok := strings.CutPrefix(p, "decisions/")
		if !ok || strings.Contains(name, "/") || !strings.HasSuffix(name, ".md") {
			continue
		}
		d := ParseDecision(name, Public, b)
		if edited[p] {
			ed = append(ed, d)
		} else {
			held = append(held, d)
		}
	}
	sort.Slice(ed, func(i, j int) bool { return ed[i].Path < ed[j].Path })
	return supersedeCycles(held, ed)
}

// supersedeCycleGroups returns the decisions of all that replace each other in a cycle of superseded_by
// (status superseded), one group per cycle in the order of the links from its smallest number, the groups
// by that number. Decisions sharing a number are left out (a decision-number clash of their own).
func supersedeCycleGroups(all []Decision) [][]Decision {
	byID, count := map[int]Decision{}, map[int]int{}
	for _, d := range all {
		if d.ID > 0 {
			byID[d.ID] = d
			count[d.ID]++
		}
	}
	next := map[int]int{}
	for id, d := range byID {
		if count[id] == 1 && d.Status == "superseded" && d.SupersededBy > 0 && count[d.SupersededBy] == 1 {
			next[id] = d.SupersededBy
		}
	}
	var out [][]Decision
	for _, c := range merge.Cycles(next) {
		var group []Decision
		for _, id := range cycleFrom(next, c[0]) {
			group = append(group, byID[id])
		}
		out = append(out, group)
	}
	return out
}

// cycleFrom is the cycle of next (a cycle merge.Cycles found) that start is on, in the order of its links
// from start: start, the number it links to, and so on to the last before start.
func cycleFrom(next map[int]int, start int) []int {
	out := []int{start}
	for n := next[start]; n != start; n = next[n] {
		out = append(out, n)
	}
	return out
}
