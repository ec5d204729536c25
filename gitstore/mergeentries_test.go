package gitstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// mergeEntries (one pass over a sorted tree) gives the same entries as rebuilding the tree from a map
// and sorting it, for random trees and edits: names that sort differently as a file and as a directory
// ("a" / "a-b" / "a.b"), replacements that change a file into a directory, deletions of absent names.
func TestMergeEntriesMatchesRebuild(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "a-b", "a.b", "a0", "a/", "b", "ab", "k00", "k01", "k1", "z", "Z", "é"}
	entry := func(name string) object.TreeEntry {
		mode := filemode.Regular
		if rnd.IntN(3) == 0 {
			mode = filemode.Dir
		}
		return object.TreeEntry{Name: name, Mode: mode, Hash: plumbing.NewHash(fmt.Sprintf("%040x", rnd.IntN(1<<30)))}
	}
	for round := range 2000 {
		var old []object.TreeEntry
		for _, n := range names {
			if n != "a/" && rnd.IntN(2) == 0 {
				old = append(old, entry(n))
			}
		}
		sortEntries(old)
		mods := map[string]*object.TreeEntry{}
		for range rnd.IntN(5) {
			n := names[rnd.IntN(len(names))]
			if n == "a/" {
				continue
			}
			if rnd.IntN(3) == 0 {
				mods[n] = nil
			} else {
				e := entry(n)
				mods[n] = &e
			}
		}
		got, want := mergeEntries(old, mods), rebuildEntries(old, mods)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: old %v mods %v:\n got %v\nwant %v", round, old, mods, got, want)
		}
	}
}

// A tree that is not in git's order (a local object written by another tool) is rebuilt rather than
// merged: the result is sorted with one entry per name.
func TestMergeEntriesUnsortedTree(t *testing.T) {
	h := plumbing.NewHash("0123456789012345678901234567890123456789")
	old := []object.TreeEntry{{Name: "b", Mode: filemode.Regular, Hash: h}, {Name: "a", Mode: filemode.Regular, Hash: h},
		{Name: "a", Mode: filemode.Regular, Hash: h}}
	got := mergeEntries(old, map[string]*object.TreeEntry{"c": {Name: "c", Mode: filemode.Regular, Hash: h}})
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if !reflect.DeepEqual(names, []string{"a", "b", "c"}) {
		t.Fatalf("entries %v, want a b c", names)
	}
}

// mergeRaw, the edit of a tree in its parsed form, gives the bytes that mergeEntries and encodeTree give
// for the same tree and edits, and parsed entries equal to parsing those bytes: random trees of every
// mode, edits that add, replace (a file by a directory too), delete and delete what is not there.
func TestMergeRawSameAsDecoded(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	names := []string{"a", "a-b", "a.b", "a0", "b", "ab", "k00", "k01", "k1", "z", "Z", "é", "x y"}
	modes := []filemode.FileMode{filemode.Regular, filemode.Executable, filemode.Dir, filemode.Symlink, filemode.Submodule}
	entry := func(name string) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: modes[rnd.IntN(len(modes))], Hash: plumbing.NewHash(fmt.Sprintf("%040x", rnd.Uint64()))}
	}
	for round := range 3000 {
		var old []object.TreeEntry
		for _, n := range names {
			if rnd.IntN(2) == 0 {
				old = append(old, entry(n))
			}
		}
		sortEntries(old)
		oldRaw, err := encodeTree(old)
		if err != nil {
			t.Fatal(err)
		}
		olds, ok := parseRawEntries(oldRaw)
		if !ok {
			t.Fatalf("round %d: a sorted tree not parsed", round)
		}
		mods := map[string]*object.TreeEntry{}
		for range rnd.IntN(20) { // up to all 13 names: both ways of telling an edited entry
			n := names[rnd.IntN(len(names))]
			if rnd.IntN(3) == 0 {
				mods[n] = nil
			} else {
				e := entry(n)
				mods[n] = &e
			}
		}
		want, err := encodeTree(mergeEntries(old, mods))
		if err != nil {
			t.Fatal(err)
		}
		got, es, err := mergeRaw(olds, mods)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round %d: mergeRaw %q, %v; want %q", round, got, err, want)
		}
		parsed, _ := parseRawEntries(want)
		if len(es) != len(parsed) {
			t.Fatalf("round %d: %d entries, want %d", round, len(es), len(parsed))
		}
		for i := range es {
			if !bytes.Equal(es[i].name, parsed[i].name) || es[i].mode != parsed[i].mode || es[i].hash != parsed[i].hash {
				t.Fatalf("round %d entry %d: %+v, want %+v", round, i, es[i], parsed[i])
			}
		}
	}
	if _, _, err := mergeRaw(nil, map[string]*object.TreeEntry{"a\x00b": {Name: "a\x00b", Mode: filemode.Regular}}); err == nil {
		t.Fatal("a NUL in a name was encoded")
	}
}
