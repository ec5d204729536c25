package store_test

import (
	"fmt"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// BenchmarkRefresh measures the refresh of .context/ on a store of 2,000 knowledge entries: "full" checks
// out the whole tree again (no .context/), "one-file" follows a write of one entry made elsewhere (the
// checks of docs/security.md run on what changed only).
func BenchmarkRefresh(b *testing.B) {
	const n = 2000
	s, dir := storetest.New(b)
	_, err := s.Write(bg, store.Op{Name: "bench", Summary: "bench"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		for i := 0; i < n; i++ {
			ed.Put(store.Public, fmt.Sprintf("knowledge/k%05d.md", i), []byte(fmt.Sprintf("---\nauthor: a\n---\nentry %d\n", i)))
		}
		return ed, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("full", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := s.ForgetCheckout(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := s.Refresh(bg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-file", func(b *testing.B) {
		other := storetest.Open(b, dir, store.Actor{})
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			// A write of another store instance refreshes too; the refresh measured is s's own, after
			// the ref was moved back to force one change.
			if _, err := other.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k00000", Content: fmt.Sprint(i)}); err != nil {
				b.Fatal(err)
			}
			testenv.Git(b, dir, "update-ref", "refs/heads/ctx", "ctx^")
			b.StartTimer()
			if _, err := s.Refresh(bg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
