package gitstore_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// EditTree and DiffTrees agree with C git over random edits whose names collide in git's order ("a" as a
// file and as a directory, "a-b", "a.b", "a0"): every tree EditTree writes is the one `git mktree`
// would (fsck, ls-tree), and DiffTrees names the paths `git diff-tree -r --name-only` names.
func TestEditAndDiffTreesAgainstGit(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	rnd := rand.New(rand.NewPCG(7, 8))
	names := []string{"a", "a-b", "a.b", "a0", "b", "k1", "k10", "k2"}
	path := func() string {
		var parts []string
		for range 1 + rnd.IntN(3) {
			parts = append(parts, names[rnd.IntN(len(names))])
		}
		return strings.Join(parts, "/")
	}
	prev := edit(t, r, gitstore.ZeroHash, put("seed", "seed\n"))
	checked := 0
	for round := range 60 {
		var ch []gitstore.Change
		for range 1 + rnd.IntN(4) {
			if rnd.IntN(3) == 0 {
				ch = append(ch, del(path()))
			} else {
				ch = append(ch, put(path(), fmt.Sprintf("%d\n", rnd.IntN(5))))
			}
		}
		next, err := r.EditTree(bg, prev, ch)
		if err != nil {
			continue // a put below a path that is a file: refused, as EditTree documents
		}
		if next.IsZero() {
			continue
		}
		commitTree(t, r, next)
		got, err := r.DiffTrees(bg, prev, next)
		if err != nil {
			t.Fatal(err)
		}
		out := testenv.Git(t, dir, "diff-tree", "-r", "--name-only", "--no-renames", prev.String(), next.String())
		var want []string
		if out != "" {
			want = strings.Split(out, "\n")
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d %v: DiffTrees\n%q\ngit diff-tree\n%q", round, ch, got, want)
		}
		prev = next
		checked++
	}
	if checked < 30 {
		t.Fatalf("only %d of 60 rounds compared", checked)
	}
	fsck(t, dir)
}
