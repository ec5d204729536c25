package gitstore_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// BenchmarkWrite measures one Transact that sets one file knowledge/k<i>.md in a store that already holds
// N files under knowledge/ (the store is built once per sub-benchmark with one EditTree of N changes).
// Each iteration rewrites one existing entry with new content, so every iteration makes a commit and the
// store keeps N entries. The periodic `git gc --auto` of Transact is included, as a user would pay it.
func BenchmarkWrite(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run("entries="+strconv.Itoa(n), func(b *testing.B) {
			dir := testenv.NewRepo(b)
			r := open(b, dir)
			changes := make([]gitstore.Change, n)
			for i := range changes {
				changes[i] = gitstore.Change{Path: fmt.Sprintf("knowledge/k%d.md", i), Data: []byte(fmt.Sprintf("---\nauthor: ada\n---\ntext %d\n", i))}
			}
			changes = append(changes, gitstore.Change{Path: "manifest.json", Data: []byte("{}\n")})
			if _, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
				return map[string]*gitstore.Write{pub: {Changes: changes, Message: "fill"}}, nil
			}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ch := []gitstore.Change{{Path: fmt.Sprintf("knowledge/k%d.md", i%n), Data: []byte(fmt.Sprintf("text %d\n", i))}}
				res, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
					return map[string]*gitstore.Write{pub: {Changes: ch, Message: "ctx: set knowledge k"}}, nil
				})
				if err != nil || !res[0].Committed {
					b.Fatalf("write %d: %v", i, err)
				}
			}
		})
	}
}
