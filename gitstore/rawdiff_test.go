package gitstore_test

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// DiffItems merges sorted trees (every tree git writes) as lists; its result is the one of the general
// path (maps of names) on random pairs of trees with files that become folders and back, names that
// sort differently as files and as folders ("a", "a.b", "a/"), additions and removals.
func TestDiffItemsSortedMatchesMaps(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	defer r.Close()
	rng := rand.New(rand.NewSource(1))
	names := []string{"a", "a.b", "a-c", "b", "k0.md", "k1.md", "k10.md"}
	randomTree := func() gitstore.Hash {
		files := map[string]string{}
		for i := 0; i < 12; i++ {
			p := names[rng.Intn(len(names))]
			if rng.Intn(2) == 0 {
				p += "/" + names[rng.Intn(len(names))]
			}
			files[p] = fmt.Sprint(rng.Intn(3))
		}
		// A path cannot be a file and a folder at once: drop the files that are folders too.
		for p := range files {
			for q := range files {
				if len(q) > len(p) && q[:len(p)+1] == p+"/" {
					delete(files, p)
				}
			}
		}
		var ch []gitstore.Change
		for p, c := range files {
			ch = append(ch, gitstore.Change{Path: p, Data: []byte(c)})
		}
		tree, err := r.EditTree(bg, gitstore.ZeroHash, ch)
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	flat := func(its []gitstore.Item) []string {
		var out []string
		for _, it := range its {
			out = append(out, fmt.Sprintf("%s %o %s", it.Path(), uint32(it.Mode), it.Hash))
		}
		sort.Strings(out)
		return out
	}
	for i := 0; i < 200; i++ {
		a, b := randomTree(), randomTree()
		if i%10 == 0 {
			a = gitstore.ZeroHash
		}
		added, removed, err := r.DiffItems(bg, a, b)
		if err != nil {
			t.Fatal(err)
		}
		restore := gitstore.SetMapDiffOnly(true)
		wantAdded, wantRemoved, err := r.DiffItems(bg, a, b)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(flat(added)) != fmt.Sprint(flat(wantAdded)) || fmt.Sprint(flat(removed)) != fmt.Sprint(flat(wantRemoved)) {
			t.Fatalf("%s -> %s:\nsorted: +%v -%v\nmaps:   +%v -%v", a, b, flat(added), flat(removed), flat(wantAdded), flat(wantRemoved))
		}
	}
}
