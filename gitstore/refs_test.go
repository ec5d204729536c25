package gitstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// twoCommits returns a repository with main at commit a and a second commit b (a child of a) that no ref
// points to.
func twoCommits(t *testing.T) (dir string, r *gitstore.Repo, a, b gitstore.Hash) {
	t.Helper()
	dir = testenv.NewRepo(t)
	r = open(t, dir)
	a = hash(t, testenv.Git(t, dir, "rev-parse", "HEAD"))
	tree := hash(t, testenv.Git(t, dir, "rev-parse", "HEAD^{tree}"))
	b = hash(t, testenv.Git(t, dir, "commit-tree", "-p", a.String(), "-m", "second", tree.String()))
	return dir, r, a, b
}

func revParse(t *testing.T, dir, ref string) string {
	t.Helper()
	out, err := testenv.GitErr(dir, "rev-parse", "-q", "--verify", ref)
	if err != nil {
		return ""
	}
	return out
}

func TestUpdateRefCreateMove(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	if err := r.UpdateRef(bg, ref, gitstore.ZeroHash, a, "ctx: create"); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, dir, ref); got != a.String() {
		t.Fatalf("after create: rev-parse = %q, want %s", got, a)
	}
	// Creating again (old = zero) when it exists is stale.
	if err := r.UpdateRef(bg, ref, gitstore.ZeroHash, b, "again"); !errors.Is(err, gitstore.ErrStaleRef) {
		t.Fatalf("create over an existing ref: %v, want ErrStaleRef", err)
	}
	if err := r.UpdateRef(bg, ref, a, b, "ctx: move"); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, dir, ref); got != b.String() {
		t.Fatalf("after move: rev-parse = %q, want %s", got, b)
	}
	if h, err := r.Resolve(bg, ref); err != nil || h != b {
		t.Fatalf("Resolve = %s, %v", h, err)
	}
	// The reflog has both updates, newest first, with our messages.
	log := testenv.Git(t, dir, "reflog", "show", "--format=%H %gs", ref)
	want := b.String() + " ctx: move\n" + a.String() + " ctx: create"
	if log != want {
		t.Fatalf("git reflog:\n%s\nwant:\n%s", log, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock left behind: %v", err)
	}
	fsck(t, dir)
	// Delete.
	if err := r.UpdateRef(bg, ref, b, gitstore.ZeroHash, "delete"); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, dir, ref); got != "" {
		t.Fatalf("after delete: rev-parse = %q", got)
	}
}

func TestUpdateRefStale(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	err := r.UpdateRef(bg, ref, b, a, "stale")
	if !errors.Is(err, gitstore.ErrStaleRef) {
		t.Fatalf("UpdateRef with a stale old value: %v, want ErrStaleRef", err)
	}
	// wrong old value while the ref does not exist
	if err := r.UpdateRef(bg, "refs/heads/nope", a, b, "stale"); !errors.Is(err, gitstore.ErrStaleRef) {
		t.Fatalf("UpdateRef of a missing ref with old set: %v, want ErrStaleRef", err)
	}
	if got := revParse(t, dir, ref); got != a.String() {
		t.Fatalf("ref changed by a failed update: %s", got)
	}
	if got := revParse(t, dir, "refs/heads/nope"); got != "" {
		t.Fatalf("missing ref created by a failed update: %s", got)
	}
	for _, bad := range []string{"ctx", "HEAD", "refs/heads/../../x"} {
		if err := r.UpdateRef(bg, bad, gitstore.ZeroHash, a, "bad"); err == nil {
			t.Errorf("UpdateRef(%q) accepted", bad)
		}
	}
}

func TestUpdateRefLocked(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	lock := filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")
	writeFile(t, lock, "someone else's lock\n")
	start := time.Now()
	err := r.UpdateRef(bg, ref, a, b, "locked")
	if !errors.Is(err, gitstore.ErrRefLocked) {
		t.Fatalf("UpdateRef with <ref>.lock present: %v, want ErrRefLocked", err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("gave up after %s; expected to wait for the lock timeout", d)
	}
	if c, err := os.ReadFile(lock); err != nil || string(c) != "someone else's lock\n" {
		t.Fatalf("the foreign lock was touched: %q, %v", c, err)
	}
	if got := revParse(t, dir, ref); got != a.String() {
		t.Fatalf("ref moved despite the lock: %s", got)
	}
	// C git agrees the ref is locked, and once the lock goes, we can write.
	if _, err := testenv.GitErr(dir, "update-ref", ref, b.String(), a.String()); err == nil {
		t.Fatal("git update-ref ignored the lock (test setup is wrong)")
	}
	os.Remove(lock)
	if err := r.UpdateRef(bg, ref, a, b, "unlocked"); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateRefWaitsForLock(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	lock := filepath.Join(dir, ".git", "refs", "heads", "ctx.lock")
	writeFile(t, lock, "")
	go func() { time.Sleep(200 * time.Millisecond); os.Remove(lock) }()
	if err := r.UpdateRef(bg, ref, a, b, "after wait"); err != nil {
		t.Fatalf("UpdateRef should wait for a short-lived lock: %v", err)
	}
	if got := revParse(t, dir, ref); got != b.String() {
		t.Fatalf("rev-parse = %s", got)
	}
}

func TestUpdateRefPacked(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	testenv.Git(t, dir, "update-ref", ref, a.String())
	testenv.Git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "ctx")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("setup: loose ref still there after pack-refs: %v", err)
	}
	if h, err := r.Resolve(bg, ref); err != nil || h != a {
		t.Fatalf("Resolve of a packed ref = %s, %v; want %s", h, err, a)
	}
	if err := r.UpdateRef(bg, ref, gitstore.ZeroHash, b, "create over packed"); !errors.Is(err, gitstore.ErrStaleRef) {
		t.Fatalf("old=zero over a packed ref: %v, want ErrStaleRef", err)
	}
	if err := r.UpdateRef(bg, ref, b, b, "stale"); !errors.Is(err, gitstore.ErrStaleRef) {
		t.Fatalf("wrong old over a packed ref: %v, want ErrStaleRef", err)
	}
	if got := revParse(t, dir, ref); got != a.String() {
		t.Fatalf("packed ref changed by a failed update: %s", got)
	}
	if err := r.UpdateRef(bg, ref, a, b, "move packed"); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, dir, ref); got != b.String() {
		t.Fatalf("rev-parse after moving a packed ref = %s, want %s", got, b)
	}
	// Packed again (now the packed value is b) then moved back by C git.
	testenv.Git(t, dir, "pack-refs", "--all")
	if h, _ := r.Resolve(bg, ref); h != b {
		t.Fatalf("Resolve = %s, want %s", h, b)
	}
	fsck(t, dir)
	// A symbolic ref is followed by Resolve.
	testenv.Git(t, dir, "symbolic-ref", "refs/heads/alias", ref)
	if h, _ := r.Resolve(bg, "refs/heads/alias"); h != b {
		t.Fatalf("Resolve(symref) = %s, want %s", h, b)
	}
	// Deleting a packed ref (a remote-tracking ref git clone packed, say) removes its packed line too, and
	// only it: the ref does not come back at its packed value, and the other packed refs (an annotated
	// tag with its peeled line) stay.
	const gone = "refs/remotes/origin/ctx"
	testenv.Git(t, dir, "update-ref", gone, a.String())
	testenv.Git(t, dir, "tag", "-a", "-m", "t", "v1", b.String())
	testenv.Git(t, dir, "pack-refs", "--all")
	if err := r.UpdateRef(bg, gone, a, gitstore.ZeroHash, "pruned"); err != nil {
		t.Fatal(err)
	}
	if out := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", gone); out != "" {
		t.Errorf("deleted packed ref still listed: %q", out)
	}
	if h, err := r.Resolve(bg, gone); err == nil && !h.IsZero() {
		t.Errorf("Resolve of the deleted ref = %s", h)
	}
	if got := revParse(t, dir, "v1^{commit}"); got != b.String() {
		t.Errorf("the packed tag: %s", got)
	}
	if got := revParse(t, dir, ref); got != b.String() {
		t.Errorf("%s after the delete: %s", ref, got)
	}
	fsck(t, dir)
}

// TestUpdateRefNeverEmpty moves a ref back and forth while readers (our own file reads and git rev-parse)
// check that it always holds a full object name.
func TestUpdateRefNeverEmpty(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	const ref = "refs/heads/ctx"
	if err := r.UpdateRef(bg, ref, gitstore.ZeroHash, a, "create"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".git", "refs", "heads", "ctx")
	var stop atomic.Bool
	var bad atomic.Value
	var wg sync.WaitGroup
	var reads atomic.Int64
	wg.Add(2)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			c, err := os.ReadFile(path)
			reads.Add(1)
			s := strings.TrimSpace(string(c))
			if err != nil || (s != a.String() && s != b.String()) {
				bad.Store("file read: " + s + " " + errString(err))
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			s, err := testenv.GitErr(dir, "rev-parse", "--verify", ref)
			if err != nil || (s != a.String() && s != b.String()) {
				bad.Store("git rev-parse: " + s + " " + errString(err))
				return
			}
		}
	}()
	cur, next := a, b
	for i := 0; i < 300; i++ {
		if err := r.UpdateRef(bg, ref, cur, next, "flip"); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatal(err)
		}
		cur, next = next, cur
	}
	stop.Store(true)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Fatalf("a reader saw a bad ref: %v", v)
	}
	t.Logf("%d file reads", reads.Load())
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
