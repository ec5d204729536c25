package store_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestCheckoutViewNeverFollowsLink: with .context replaced by a symbolic link to a folder that holds a
// record and an entry of its own (what a hostile commit of the user's branch checks out), the MCP
// server's view reads the refs, with a warning, and never the link's target; a refresh writes nothing
// there.
func TestCheckoutViewNeverFollowsLink(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "real", Content: "from the branch\n"}); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	if err := os.MkdirAll(filepath.Join(target, "knowledge"), 0o777); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string]string{"knowledge/planted.md": "planted\n", store.RecordFile: `{"commits":{},"files":{"knowledge/planted.md":{"scope":"public","blob":"x"}}}`} {
		if err := os.WriteFile(filepath.Join(target, filepath.FromSlash(p)), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := fileState(t, target)
	if err := os.RemoveAll(filepath.Join(dir, store.CheckoutDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, store.CheckoutDir)); err != nil {
		t.Fatal(err)
	}
	fresh := storetest.Open(t, dir, store.Actor{}) // no cached record
	ctx, warnings := store.WithWarnings(bg)
	v, err := fresh.CheckoutView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names, err := v.List(ctx, "knowledge")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name != "real.md" {
		t.Fatalf("the view lists %v, want only real.md from the branch", names)
	}
	if w := warnings.List(); len(w) == 0 || !strings.Contains(w[0], "symbolic link") {
		t.Fatalf("warnings: %v", w)
	}
	if _, err := fresh.Refresh(bg); !errors.Is(err, store.ErrCheckoutDir) {
		t.Fatalf("refresh through the link: %v, want ErrCheckoutDir", err)
	}
	if _, err := fresh.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "more", Content: "x\n"}); err != nil {
		t.Fatalf("a write commits even so (its refresh warns): %v", err)
	}
	if after := fileState(t, target); !maps.Equal(after, before) {
		t.Fatalf("the link's target changed:\n%s\n->\n%s", before, after)
	}
}

// TestTrackedCheckCache: the tracked-files check is cached by the index's stat data and HEAD; a file
// added to the index afterwards, and one that only HEAD still has (git rm --cached, not committed), are
// both seen; with objects read in process (as the hooks read them), where the check reads the index and
// HEAD's root tree itself before it asks git, as without.
func TestTrackedCheckCache(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in process %v", inProcess), func(t *testing.T) { trackedCheckCache(t, inProcess) })
	}
}

func trackedCheckCache(t *testing.T, inProcess bool) {
	s, dir := storetest.New(t)
	if inProcess {
		s.ReadInProcess()
	}
	if err := s.CheckCheckoutDir(bg); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckCheckoutDir(bg); err != nil { // cached
		t.Fatal(err)
	}
	p := filepath.Join(dir, store.CheckoutDir, "knowledge", "x.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("tracked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "-f", ".context/knowledge/x.md")
	var de *store.CheckoutDirError
	if err := s.CheckCheckoutDir(bg); !errors.As(err, &de) || len(de.Tracked) != 1 || de.Tracked[0] != ".context/knowledge/x.md" {
		t.Fatalf("after git add: %v", err)
	}
	if _, err := s.HandEdits(bg); !errors.Is(err, store.ErrCheckoutDir) {
		t.Fatalf("hand edits with a tracked file: %v", err)
	}
	testenv.Git(t, dir, "commit", "-q", "-m", "track")
	testenv.Git(t, dir, "rm", "-q", "--cached", ".context/knowledge/x.md")
	if err := s.CheckCheckoutDir(bg); !errors.As(err, &de) || de.Commit == "" {
		t.Fatalf("tracked in HEAD only: %v (want the commit named)", err)
	}
	testenv.Git(t, dir, "commit", "-q", "-m", "untrack")
	if err := s.CheckCheckoutDir(bg); err != nil {
		t.Fatalf("after the fix: %v", err)
	}
}

// TestRestoreChecksOutMissing: ctx restore checks out a missing .context/, whether it was checked out
// here before (CheckoutMissingError, which a refresh does not undo) or never was.
func TestRestoreChecksOutMissing(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "v\n"}); err != nil {
		t.Fatal(err)
	}
	for _, forget := range []bool{false, true} {
		if err := os.RemoveAll(filepath.Join(dir, store.CheckoutDir)); err != nil {
			t.Fatal(err)
		}
		if forget {
			if err := s.ForgetCheckout(); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.Refresh(bg); !errors.Is(err, store.ErrCheckoutMissing) {
			t.Fatalf("refresh of a removed .context/: %v, want ErrCheckoutMissing", err)
		}
		r, err := s.Restore(bg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Recreated || r.CheckedOut == 0 {
			t.Fatalf("forget %v: restore %+v", forget, r)
		}
		if _, err := os.Stat(filepath.Join(dir, store.CheckoutDir, "knowledge", "k.md")); err != nil {
			t.Fatalf("forget %v: %v", forget, err)
		}
	}
}

// TestWriteWarnsRestoreWhenCheckoutMissing: a write after .context/ was removed (git clean -fdx) commits
// and warns what is true: the next command does not refresh the checkout (status refuses), `ctx restore`
// does.
func TestWriteWarnsRestoreWhenCheckoutMissing(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "v\n"}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, store.CheckoutDir)); err != nil {
		t.Fatal(err)
	}
	c, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k2", Content: "w\n"})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings, "\n")
	if !strings.Contains(w, "ctx restore") || strings.Contains(w, "next ctx command refreshes") {
		t.Fatalf("warning %q: want one pointing to ctx restore, not to the next command", w)
	}
	// The next command indeed does not refresh it.
	if _, err := s.Refresh(bg); !errors.Is(err, store.ErrCheckoutMissing) {
		t.Fatalf("refresh after the write: %v, want ErrCheckoutMissing", err)
	}
}

// TestRefreshBlockedFolder: a folder of .context/ replaced by a symbolic link, then by a file, keeps the
// entries under it from being written. The refresh writes nothing through it, says why (a warning on the
// write, ErrCheckoutBlocked), never records as checked out what it did not write: ctx status says
// behind, the MCP view reads the refs, and once the folder is removed ctx restore checks out every entry
// of the tip.
func TestRefreshBlockedFolder(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "a", Content: "A\n"}); err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(dir, store.CheckoutDir, "knowledge")
	target := t.TempDir()
	if err := os.RemoveAll(kdir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, kdir); err != nil {
		t.Fatal(err)
	}
	ctx, warnings := store.WithWarnings(bg)
	if _, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "ghost", Content: "GHOST\n"}); err != nil {
		t.Fatalf("the write commits even so: %v", err)
	}
	if w := warnings.List(); len(w) == 0 || !strings.Contains(strings.Join(w, "\n"), "knowledge/ghost.md") {
		t.Fatalf("no warning naming the entry not checked out: %v", w)
	}
	if names := fileState(t, target); len(names) != 0 {
		t.Fatalf("written through the link: %v", names)
	}
	st, err := s.Status(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !st.CheckoutBehind {
		t.Fatal("ctx status does not say .context/ is behind the context branch")
	}
	v, err := storetest.Open(t, dir, store.Actor{}).CheckoutView(bg)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := v.GetEntry(bg, store.KnowledgeKind, "ghost"); err != nil || !strings.Contains(e.Content, "GHOST") {
		t.Fatalf("the view's ghost: %+v, %v", e, err)
	}
	// A file where the folder should be blocks as well.
	if err := os.Remove(kdir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kdir, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var be *store.CheckoutBlockedError
	if _, err := s.Refresh(bg); !errors.As(err, &be) || be.Link || len(be.Paths) != 2 {
		t.Fatalf("refresh over a file: %v, want a CheckoutBlockedError naming both entries", err)
	}
	if err := os.Remove(kdir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(bg, nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "ghost"} {
		if _, err := os.Stat(filepath.Join(kdir, k+".md")); err != nil {
			t.Fatalf("ctx restore did not check out %s: %v", k, err)
		}
	}
	if st, err := s.Status(bg); err != nil || st.CheckoutBehind || len(st.HandEdits) != 0 {
		t.Fatalf("after ctx restore: %+v, %v", st, err)
	}
}

// TestPullHandDeletionsBehindLink: .context/knowledge replaced by a symbolic link hides the entries under
// it, which read as deleted by hand. The pull's refusal says so and points to removing the link and ctx
// restore (ctx commit refuses the link, so "record them with ctx commit" would lead nowhere); the pull
// after that goes through.
func TestPullHandDeletionsBehindLink(t *testing.T) {
	sa, _, a, _ := pair(t)
	for _, k := range []string{"a", "b"} {
		mustSet(t, sa, k, k+"\n")
	}
	kdir := filepath.Join(a, store.CheckoutDir, "knowledge")
	if err := os.RemoveAll(kdir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), kdir); err != nil {
		t.Fatal(err)
	}
	_, err := sa.Pull(bg, store.PullOptions{})
	var he *store.HandDeletionsError
	if !errors.As(err, &he) || he.Blocked != "knowledge" || !he.Link || !strings.Contains(err.Error(), "rm .context/knowledge") ||
		!strings.Contains(err.Error(), "ctx restore") || strings.Contains(err.Error(), "ctx commit`") {
		t.Fatalf("pull: %v", err)
	}
	if err := os.Remove(kdir); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Restore(bg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatalf("pull after rm and restore: %v", err)
	}
}
