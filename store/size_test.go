package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// entryOf is an entry of n lines of 80 bytes, each line's text made of fill.
func entryOf(n int, fill string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%08d %s\n", i, strings.Repeat(fill, 70))
	}
	return b.String()
}

// The store's file limit (docs/limits.md "Files of the store"): a write of a larger file is refused with
// nothing committed; a merge that would write one (the conflict record of two rewrites of an entry holds
// the base and both versions: three times the entry) is refused as a pull is (ErrRejected), with no ref
// moved, and merges with --strategy, which writes no record. The merge runs under a limit lowered to
// 256 KiB (SetMaxFileBytes), with a 94 KiB entry.
func TestFileLimit(t *testing.T) {
	s, dir := storetest.New(t)
	before := testenv.Git(t, dir, "rev-parse", "ctx")
	_, err := s.Write(bg, store.Op{Name: "test"}, func(*store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "knowledge/big.md", make([]byte, store.MaxFileBytes+1))
		return ed, nil
	})
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "knowledge/big.md would be 33816577 bytes (32.3 MiB), over the limit of one file of the store") {
		t.Fatalf("write over the limit: %v", err)
	}
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != before {
		t.Fatalf("a refused write moved ctx")
	}

	defer store.SetMaxFileBytes(256 << 10)()
	const lines = 1200
	put := func(content string) {
		t.Helper()
		if _, err := s.Write(bg, store.Op{Name: "test"}, func(*store.View) (store.Edits, error) {
			ed := store.Edits{}
			ed.Put(store.Public, "knowledge/big.md", []byte(content))
			return ed, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	put(entryOf(lines, "b"))
	base := testenv.Git(t, dir, "rev-parse", "ctx")
	// Theirs: every line rewritten, with git plumbing on top of the base.
	blob := testenv.Blob(t, dir, entryOf(lines, "t"))
	tree := testenv.WithEntry(t, dir, testenv.Git(t, dir, "rev-parse", "ctx^{tree}"), []string{"knowledge", "big.md"}, "100644", blob)
	theirs := testenv.CommitTree(t, dir, tree, base, "theirs rewrote big")
	// Ours: every line rewritten otherwise.
	put(entryOf(lines, "o"))
	ours := testenv.Git(t, dir, "rev-parse", "ctx")

	_, err = s.MergeCommit(bg, gitstore.NewHash(theirs), store.PullOptions{})
	if !errors.Is(err, store.ErrRejected) || !strings.Contains(err.Error(), "over the limit of one file of the store") ||
		!strings.Contains(err.Error(), "--strategy ours or --strategy theirs") || !strings.Contains(err.Error(), "conflicts/") {
		t.Fatalf("merge of two rewrites of a 12 MiB entry: %v", err)
	}
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != ours {
		t.Fatalf("a refused merge moved ctx")
	}
	r, err := s.MergeCommit(bg, gitstore.NewHash(theirs), store.PullOptions{Strategy: store.StrategyTheirs})
	if err != nil || len(r.Decided) != 1 {
		t.Fatalf("merge with --strategy theirs: %+v, %v", r, err)
	}
	if got := testenv.Git(t, dir, "rev-parse", "ctx:knowledge/big.md"); got != blob {
		t.Errorf("after --strategy theirs, big.md is %s, want theirs %s", got, blob)
	}
}
