package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// The look-alike index (skelCache), moved from tree to tree by diffs and rebuilt after large ones, answers
// as the listing does (listedLookalike) for random folders of two scopes: look-alike names (Cyrillic,
// fullwidth, "1"/"l", "rn"/"m"), names that are files in one scope and folders in the other, folders named
// like entries ("x.md/"), names without the suffix, and the public-only view.
func TestIndexedLookalikeSameAsListed(t *testing.T) {
	ctx := context.Background()
	repo, err := gitstore.Open(ctx, testenv.NewRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	rnd := rand.New(rand.NewPCG(5, 6))
	pool := []string{"auth", "\u0430uth", "\uff41uth", "deploy-v1", "deploy-vl", "rn", "m", "arn", "am", "k1", "kl", "zeta", "z\u0435ta", "a", "b"}
	trees := map[Scope]gitstore.Hash{}
	var cache skelCache
	scopes := []Scope{Public, Private}
	for round := range 120 {
		for _, sc := range scopes {
			var ch []gitstore.Change
			n := rnd.IntN(4)
			if round%50 == 49 {
				n = skelDiffMax + 10 // a diff too large to move the index: rebuilt
			}
			for i := range n {
				name := pool[rnd.IntN(len(pool))]
				if i >= 4 {
					name = fmt.Sprintf("bulk%03d-%d", i, round)
				}
				switch rnd.IntN(6) {
				case 0:
					ch = append(ch, gitstore.Change{Path: "knowledge/" + name + ".md", Delete: true})
				case 1:
					ch = append(ch, gitstore.Change{Path: "knowledge/" + name, Delete: true})
				case 2:
					ch = append(ch, gitstore.Change{Path: "knowledge/" + name + ".md/x", Data: []byte("dir")})
				case 3:
					ch = append(ch, gitstore.Change{Path: "knowledge/" + name + "/SKILL.md", Data: []byte(fmt.Sprint(round))})
				case 4:
					ch = append(ch, gitstore.Change{Path: "knowledge/" + name, Data: []byte("no suffix")})
				default:
					ch = append(ch, gitstore.Change{Path: "knowledge/" + name + ".md", Data: []byte(fmt.Sprint(round))})
				}
			}
			// A path cannot be a file and a folder at once: the later change of a name wins.
			seen := map[string]bool{}
			var keep []gitstore.Change
			for i := len(ch) - 1; i >= 0; i-- {
				top := ch[i].Path[len("knowledge/"):]
				if j := indexByte(top, '/'); j >= 0 {
					top = top[:j]
				}
				if !seen[top] {
					seen[top] = true
					keep = append(keep, ch[i])
				}
			}
			for _, c := range keep {
				if c.Delete {
					continue
				}
				// delete whatever holds the name first, so that a file can become a folder and back
				top := c.Path[len("knowledge/"):]
				if j := indexByte(top, '/'); j >= 0 {
					top = top[:j]
				}
				h, err := repo.EditTree(ctx, trees[sc], []gitstore.Change{{Path: "knowledge/" + top, Delete: true}})
				if err != nil {
					t.Fatal(err)
				}
				trees[sc] = h
			}
			h, err := repo.EditTree(ctx, trees[sc], keep)
			if err != nil {
				t.Fatal(err)
			}
			trees[sc] = h
		}
		indexed := &RefReader{repo: repo, Trees: trees, skels: &cache}
		listed := NewView(&RefReader{repo: repo, Trees: trees})
		for _, key := range pool {
			for _, suffix := range []string{".md", ""} {
				sk := Skeleton(key)
				check := func(name string) bool { return name != key && Skeleton(name) == sk }
				for _, v := range []*View{listed, listed.PublicOnly()} {
					want, err := listedLookalike(ctx, v, "knowledge", suffix, check)
					if err != nil {
						t.Fatal(err)
					}
					var got string
					if v == listed {
						got, err = indexed.lookalike(ctx, Scopes, "knowledge", suffix, key, sk)
					} else {
						got, err = lookalike(ctx, NewView(indexed).PublicOnly(), nil, "knowledge", suffix, key)
					}
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("round %d, key %q, suffix %q, public only %v: indexed %q, listed %q", round, key, suffix, v != listed, got, want)
					}
				}
			}
		}
	}
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
