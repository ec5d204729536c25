package merge

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// oneSidedMerge merges as a pull does with OneSided (store's mergeCommit): Tree's input is the paths
// either side changed (and decisions/, conflicts/ whole) without the one-sided ones OneSided accepts, whose
// changed side is taken as it is, unless NeedsOneSided asks for them (full is then false). unchanged paths
// are ours' (the store keeps them in the tree without reading them).
func oneSidedMerge(base, ours, theirs Files) (r Result, full bool) {
	return oneSidedMergeIf(base, ours, theirs, true)
}

// oneSidedMergeIf is oneSidedMerge; with check false, NeedsOneSided is not asked.
func oneSidedMergeIf(base, ours, theirs Files, check bool) (r Result, full bool) {
	paths := map[string]bool{}
	for _, f := range []Files{base, ours, theirs} {
		for p := range f {
			paths[p] = true
		}
	}
	rb, ro, rt := Files{}, Files{}, Files{}
	take := Files{}      // one-sided paths taken from their side (present there)
	keep := Files{}      // paths neither side changed
	var skipped []string // one-sided paths left out
	for p := range paths {
		b, bok := base[p]
		o, ook := ours[p]
		t, tok := theirs[p]
		oc, tc := !same(b, bok, o, ook), !same(b, bok, t, tok)
		together := strings.HasPrefix(p, "decisions/") || strings.HasPrefix(p, "conflicts/")
		switch {
		case !oc && !tc && !together:
			if ook {
				keep[p] = o
			}
			continue
		case oc != tc && OneSided(p):
			skipped = append(skipped, p)
			switch {
			case oc && ook:
				take[p] = o
			case tc && tok:
				take[p] = t
			}
			continue
		}
		if bok {
			rb[p] = b
		}
		if ook {
			ro[p] = o
		}
		if tok {
			rt[p] = t
		}
	}
	if check && NeedsOneSided(rb, ro, rt) {
		for _, p := range skipped {
			if b, ok := base[p]; ok {
				rb[p] = b
			}
			if o, ok := ours[p]; ok {
				ro[p] = o
			}
			if t, ok := theirs[p]; ok {
				rt[p] = t
			}
		}
		take, full = Files{}, true
	}
	r = Tree(rb, ro, rt)
	for p, c := range keep {
		r.Files[p] = c
	}
	for p, c := range take {
		if _, dup := r.Files[p]; dup {
			panic("one-sided path " + p + " also in the merge of the rest")
		}
		r.Files[p] = c
	}
	return r, full
}

// TestOneSidedAsTree: merging without the one-sided paths OneSided accepts, taking their changed side as
// it is, gives Tree's result over every path (files, conflicts, notes), over generated stores (edits,
// deletes, added entries that may be renames, both layouts of sessions and logs, decisions added on both
// sides; oneSidedSeeds of them, 200 in make test and 400 under make stress) and crafted ones; and the
// merges NeedsOneSided sends back to the full input do differ without them.
func TestOneSidedAsTree(t *testing.T) {
	partial, fulls := 0, 0
	for seed := range int64(oneSidedSeeds) {
		g := gen{rand.New(rand.NewSource(seed))}
		base := g.store()
		ours := g.mutate(base, "ours")
		theirs := g.mutate(base, "theirs")
		want := Tree(base, ours, theirs)
		got, full := oneSidedMerge(base, ours, theirs)
		if full {
			fulls++
		} else {
			partial++
		}
		if !reflect.DeepEqual(got.Files, want.Files) || !reflect.DeepEqual(got.Conflicts, want.Conflicts) || !reflect.DeepEqual(got.Notes, want.Notes) {
			t.Fatalf("seed %d (full %v): one-sided merge differs from Tree:\n%s\n---- Tree:\n%s", seed, full, dump(got), dump(want))
		}
	}
	if partial < oneSidedSeeds/4 || fulls == 0 {
		t.Fatalf("%d merges left one-sided paths out, %d needed them: the generator no longer covers both", partial, fulls)
	}

	body := "Line one of a long entry.\nLine two.\nLine three.\nLine four.\nLine five.\n"
	cases := []struct {
		name               string
		base, ours, theirs Files
		full               bool
	}{
		{"edits, adds and deletes on one side each",
			Files{"knowledge/a.md": []byte(kn("2026-01-01T00:00:00Z", body)), "knowledge/b.md": []byte(kn("2026-01-01T00:00:00Z", body)),
				"notes.txt": []byte("x\n"), "knowledge/c.md": []byte(kn("2026-01-01T00:00:00Z", body))},
			Files{"knowledge/a.md": []byte(kn("2026-01-02T00:00:00Z", body+"ours\n")), "knowledge/b.md": []byte(kn("2026-01-01T00:00:00Z", body)),
				"notes.txt": []byte("x\n"), "knowledge/c.md": []byte(kn("2026-01-03T00:00:00Z", "Ours first.\n"+body))},
			Files{"knowledge/a.md": []byte(kn("2026-01-01T00:00:00Z", body)), "knowledge/new.md": []byte(kn("2026-01-02T00:00:00Z", "new\n")),
				"notes.txt": []byte("y\n"), "knowledge/c.md": []byte(kn("2026-01-04T00:00:00Z", body+"Theirs last.\n"))},
			false},
		{"a rename on one side, an edit at the old path on the other",
			Files{"knowledge/old.md": []byte(kn("2026-01-01T00:00:00Z", body))},
			Files{"knowledge/renamed.md": []byte(kn("2026-01-02T00:00:00Z", body))},
			Files{"knowledge/old.md": []byte(kn("2026-01-03T00:00:00Z", body+"Theirs added a line.\n"))},
			true},
		{"a conflict settled on both sides",
			Files{"knowledge/k.md": []byte(kn("2026-01-01T00:00:00Z", "kept\n")),
				"conflicts/" + settledID + ".json": settledRecord()},
			Files{"knowledge/k.md": []byte(kn("2026-01-02T00:00:00Z", "lost\n"))},
			Files{"knowledge/k.md": []byte(kn("2026-01-01T00:00:00Z", "kept\n"))},
			true},
		{"a skill removed on one side, a proposal added to it on the other",
			Files{"skills/sky/SKILL.md": []byte("---\nname: sky\n---\ndo y\n"), "skills/sky/scripts/run.sh": []byte("echo y\n")},
			Files{},
			Files{"skills/sky/SKILL.md": []byte("---\nname: sky\n---\ndo y\n"), "skills/sky/scripts/run.sh": []byte("echo y\n"),
				"skills/sky/.proposals/p1.json": []byte(`{"id":"p1"}` + "\n")},
			true},
	}
	for _, c := range cases {
		want := Tree(c.base, c.ours, c.theirs)
		got, full := oneSidedMerge(c.base, c.ours, c.theirs)
		if full != c.full {
			t.Fatalf("%s: NeedsOneSided %v, want %v", c.name, full, c.full)
		}
		if !reflect.DeepEqual(got.Files, want.Files) || !reflect.DeepEqual(got.Conflicts, want.Conflicts) || !reflect.DeepEqual(got.Notes, want.Notes) {
			t.Fatalf("%s: one-sided merge differs from Tree:\n%s\n---- Tree:\n%s", c.name, dump(got), dump(want))
		}
		if c.full {
			// Without the full input the merge would differ: NeedsOneSided is what keeps it right.
			if r, _ := oneSidedMergeIf(c.base, c.ours, c.theirs, false); reflect.DeepEqual(r.Conflicts, want.Conflicts) && reflect.DeepEqual(r.Notes, want.Notes) {
				t.Fatalf("%s: the merge without the one-sided paths is the same; the case tests nothing", c.name)
			}
		}
	}
}

// settledID and settledRecord are a conflict record of knowledge/k.md (kept "kept", lost "lost").
var settledID = func() string { c, _ := ParseRecord(settledRecord()); return c.ID }()

func settledRecord() []byte {
	base := []byte(kn("2026-01-01T00:00:00Z", "base\n"))
	kept, lost := []byte(kn("2026-01-01T00:00:00Z", "kept\n")), []byte(kn("2026-01-01T00:00:00Z", "lost\n"))
	c := newConflict("knowledge/k.md", []string{"body"}, base, true, kept, lost, "test")
	return c.Record()
}
