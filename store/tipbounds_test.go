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

// TestTipBounds: a fetched tip whose tree holds more files and folders than a tip may (store.MaxTipFiles: a
// skill folder of 100,000 copies of one small blob wrote 414 MB into .context/; a few trees naming one
// empty subtree twice at each level, 0 files, was let through after seconds to minutes of walking), or
// whose new files hold more bytes together than one pull checks out (store.MaxTipAddedBytes: one blob
// under many names counts each time), is refused before any merge, no ref moved, with the repair
// (docs/limits.md "Files of a fetched tip"). Each older commit the pull brings is bounded alike: its diff
// against its first parent visits at most MaxTipFiles entries of either tree. The bounds are lowered for
// the test (SetTipBounds); a tip within them merges.
func TestTipBounds(t *testing.T) {
	s, dir := storetest.New(t)
	defer store.SetTipBounds(40, 4000)()
	base := testenv.Git(t, dir, "rev-parse", "ctx")
	baseTree := testenv.Git(t, dir, "rev-parse", "ctx^{tree}")
	many := func(n int, content string) string {
		blob := testenv.Blob(t, dir, content)
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "100644 blob %s\tf%06d.md\n", blob, i)
		}
		sub := testenv.GitIn(t, dir, b.String(), "mktree")
		skill := testenv.Blob(t, dir, "---\nname: many\ndescription: many\n---\nx\n")
		folder := testenv.GitIn(t, dir, fmt.Sprintf("100644 blob %s\tSKILL.md\n040000 tree %s\tsub\n", skill, sub), "mktree")
		tree := testenv.WithEntry(t, dir, baseTree, []string{"skills", "many"}, "040000", folder)
		return testenv.CommitTree(t, dir, tree, base, "many")
	}
	// 21 trees, each naming the one below it twice (a, b) down to the empty tree: 0 files but 2^21 paths.
	// Before folders counted, the count walked every path (2^20 empty folders) and the history's check
	// listed every one of them before the bound was asked: seconds per level here, doubling with each.
	deep := testenv.GitIn(t, dir, "", "mktree")
	for i := 0; i < 20; i++ {
		deep = testenv.GitIn(t, dir, fmt.Sprintf("040000 tree %s\ta\n040000 tree %s\tb\n", deep, deep), "mktree")
	}
	folders := testenv.CommitTree(t, dir, testenv.WithEntry(t, dir, baseTree, []string{"deep"}, "040000", deep), base, "deep")
	// The same tree in an older commit under a clean tip: the history's check diffed it against its parent
	// (and the tip against it) path by path, minutes here; its diffs are bounded as the tip is.
	under := testenv.CommitTree(t, dir, baseTree, folders, "clean again")
	for _, tc := range []struct {
		name, tip, want string
	}{
		{"files", many(50, "pwned\n"), "more than 40 files and folders, the most a tip of the context branch may hold"},
		{"folders", folders, "more than 40 files and folders, the most a tip of the context branch may hold"},
		{"history", under, "its tree, or its first parent's, differs from the other by more than 40 files and folders, the most a tip"},
		{"bytes", many(20, strings.Repeat("x", 300)+"\n"), "over the most one pull checks out (4000 bytes"},
	} {
		_, err := s.MergeCommit(bg, gitstore.NewHash(tc.tip), store.PullOptions{})
		var rej *store.RejectedError
		if !errors.As(err, &rej) || !rej.Bounds || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "docs/limits.md \"Files of a fetched tip\"") {
			t.Errorf("%s: %v; want a refusal naming the bound", tc.name, err)
		}
		// An older commit over the bound stays in the history a fix on top leaves: the repair is a reset.
		if reset := strings.Contains(err.Error(), "resets the branch to the commit before"); reset != (tc.name == "history") {
			t.Errorf("%s: the repair advice: %v", tc.name, err)
		}
		if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != base {
			t.Fatalf("%s: a refused tip moved ctx", tc.name)
		}
	}
	if _, err := s.MergeCommit(bg, gitstore.NewHash(many(20, "fine\n")), store.PullOptions{}); err != nil {
		t.Fatalf("a tip within the bounds: %v", err)
	}
}

// TestPushTipBounds: ctx push refuses to publish a tip that every teammate's pull would refuse for its
// size as a whole (docs/sync.md "What a push publishes"), nothing pushed.
func TestPushTipBounds(t *testing.T) {
	sa, _, _, _ := pair(t)
	defer store.SetTipBounds(12, 1<<20)()
	for i := 0; i < 12; i++ {
		mustSet(t, sa, fmt.Sprintf("k%d", i), "x")
	}
	_, err := sa.Push(bg, store.PushOptions{})
	var pub *store.PublishRefusedError
	if !errors.As(err, &pub) || !strings.Contains(err.Error(), "the most a tip of the context branch may hold") {
		t.Fatalf("push of a tip over the bound: %v", err)
	}
}

// TestNotesHistoryBounded: the notes a pull fetches (refs/notes/ctx) are checked commit by commit like the
// context branch's history, each diff bounded as a tip is (docs/limits.md "Files of a fetched tip"): a
// notes commit of a few trees naming one another twice (2^21 paths, 0 files) is refused, not walked for
// minutes, and the local notes ref is not made.
func TestNotesHistoryBounded(t *testing.T) {
	s, dir := storetest.New(t)
	defer store.SetTipBounds(40, 4000)()
	remote := t.TempDir() + "/remote.git"
	testenv.Git(t, "", "clone", "-q", "--bare", dir, remote)
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	deep := testenv.GitIn(t, remote, "", "mktree")
	for i := 0; i < 20; i++ {
		deep = testenv.GitIn(t, remote, fmt.Sprintf("040000 tree %s\ta\n040000 tree %s\tb\n", deep, deep), "mktree")
	}
	notes := testenv.Git(t, remote, "commit-tree", "-m", "notes", deep)
	testenv.Git(t, remote, "update-ref", "refs/notes/ctx", notes)
	_, err := s.PullNotes(bg, "origin", store.RemoteFromUser)
	if !errors.Is(err, gitstore.ErrTooManyEntries) {
		t.Fatalf("notes of a doubling tree: %v; want a refusal wrapping gitstore.ErrTooManyEntries", err)
	}
	if out := testenv.Git(t, dir, "for-each-ref", "refs/notes/ctx"); out != "" {
		t.Fatalf("a refused notes fetch made the notes ref: %s", out)
	}
}
