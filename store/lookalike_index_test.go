package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// A long-lived Store (ctx mcp serve's) keeps the look-alike index of the folders it writes. Another
// process may move the ref under it: a second Store of the repository adds and removes keys, and C git
// commits a file into the folder. The long-lived Store's next writes see exactly that: it refuses a key
// that looks like one only the other writers added, and accepts one that looked like a key they removed.
func TestLookalikeIndexAfterOtherWriters(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	set := func(s *store.Store, key string) error {
		_, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: key, Content: "x\n"})
		return err
	}
	refused := func(key, existing string) {
		t.Helper()
		err := set(s, key)
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "looks like the existing knowledge") ||
			!strings.Contains(err.Error(), `"`+existing+`"`) {
			t.Fatalf("%q: err = %v, want a refusal naming %q", key, err, existing)
		}
	}
	for _, k := range []string{"auth", "deploy", "cache"} {
		if err := set(s, k); err != nil {
			t.Fatal(err)
		}
	}
	refused("\u0430uth", "auth") // the index of the folder is built now

	other := storetest.Open(t, dir, store.Actor{Agent: "other", Session: "s2"})
	defer other.Close()
	if err := set(other, "billing"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.RemoveEntry(ctx, store.KnowledgeKind, "deploy"); err != nil {
		t.Fatal(err)
	}
	refused("b\u0456lling", "billing")
	if err := set(s, "d\u0435ploy"); err != nil {
		t.Fatalf("a key like one the other Store removed: %v", err)
	}

	// C git commits knowledge/zeta.md onto the branch.
	tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	tree := testenv.WithEntry(t, dir, tip+"^{tree}", []string{"knowledge", "zeta.md"}, "100644", testenv.Blob(t, dir, "zeta\n"))
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", testenv.CommitTree(t, dir, tree, tip, "by git"), tip)
	refused("z\u0435ta", "zeta")
	refused("c\u0430che", "cache")
	if err := set(s, "zeta-two"); err != nil {
		t.Fatal(err)
	}
	files := storetest.Files(t, dir, "ctx")
	for _, f := range []string{"knowledge/zeta.md", "knowledge/billing.md", "knowledge/zeta-two.md"} {
		if !files[f] {
			t.Errorf("%s missing from the branch: %v", f, files)
		}
	}
	if files["knowledge/deploy.md"] || len(files) != 7 { // + manifest.json, auth, cache, the Cyrillic deploy
		t.Errorf("files of the branch: %v", files)
	}
}
