package store_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// remoteObjects is every object of a repository as `git cat-file --batch-all-objects --batch` prints it.
func remoteObjects(t *testing.T, dir string) string {
	t.Helper()
	return storetest.Git(t, dir, "cat-file", "--batch-all-objects", "--batch")
}

// bare makes an empty bare repository and returns its path.
func bare(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	storetest.Git(t, t.TempDir(), "init", "-q", "--bare", dir)
	return dir
}

// TestPrivateRefsNotPushedByMirror: git push --mirror, git push --all and a push of refs/*:refs/* publish
// every ref under refs/; private and ephemeral entries must reach none of those remotes, and git gc with
// an immediate prune in the repository must not lose them.
func TestPrivateRefsNotPushedByMirror(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	set := func(key, content string, sc store.Scope) {
		t.Helper()
		if _, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: key, Content: content, Scope: sc}); err != nil {
			t.Fatal(err)
		}
	}
	set("shared-notes", "PUBLIC-MARKER-1\n", store.Public)
	set("vault-recovery-codes", "PRIVATE-MARKER-1\n", store.Private)
	set("scratch-pad", "EPHEMERAL-MARKER-1\n", store.Ephemeral)
	// An entry that was public and became private: its blob is in both stores.
	set("moved-out", "MOVED-MARKER-1\n", store.Public)
	if _, err := s.SetScope(ctx, "knowledge", "moved-out", store.Private); err != nil {
		t.Fatal(err)
	}
	set("moved-out", "MOVED-MARKER-2 private now\n", store.Private)

	if refs := storetest.Git(t, dir, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "refs/ctx/private") || strings.Contains(refs, "refs/ctx/ephemeral") {
		t.Fatalf("the repository's refs/ hold a private ref:\n%s", refs)
	}

	mirror, all, star := bare(t), bare(t), bare(t)
	storetest.Git(t, dir, "push", "-q", "--mirror", mirror)
	storetest.Git(t, dir, "push", "-q", "--all", all)
	storetest.Git(t, dir, "push", "-q", star, "refs/*:refs/*")
	for _, remote := range []string{mirror, all, star} {
		objs := remoteObjects(t, remote)
		if remote != all && !strings.Contains(objs, "PUBLIC-MARKER-1") {
			t.Fatalf("%s: the public entry did not arrive: the check would prove nothing", remote)
		}
		for _, secret := range []string{"PRIVATE-MARKER-1", "EPHEMERAL-MARKER-1", "MOVED-MARKER-2", "vault-recovery-codes", "scratch-pad"} {
			if strings.Contains(objs, secret) {
				t.Errorf("%s holds %q", remote, secret)
			}
		}
	}

	// gc with everything unreachable pruned at once, in the repository and in the local store.
	storetest.Git(t, dir, "reflog", "expire", "--expire=now", "--all")
	storetest.Git(t, dir, "gc", "-q", "--prune=now")
	storetest.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "gc", "-q", "--prune=now")
	storetest.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "fsck", "--strict", "--no-dangling")
	storetest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	s2, err := store.Open(ctx, dir, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s2.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"vault-recovery-codes": "PRIVATE-MARKER-1\n", "scratch-pad": "EPHEMERAL-MARKER-1\n",
		"moved-out": "MOVED-MARKER-2 private now\n", "shared-notes": "PUBLIC-MARKER-1\n"} {
		e, err := s2.GetEntry(ctx, v, store.KnowledgeKind, key)
		if err != nil || e.Content != want {
			t.Errorf("after gc, %s = %q, %v", key, e.Content, err)
		}
	}
	// and the store still writes both scopes
	if _, err := s2.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "after-gc", Content: "x\n", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
}

// gitIn runs git in dir with stdin and returns its trimmed output.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// oldLayoutRef makes a commit (on parent, when not "") with one knowledge file in the repository's own
// object database and points ref of the repository's refs/ at it, as ctx did before the private and
// ephemeral refs moved to their own repository.
func oldLayoutRef(t *testing.T, dir, ref, parent, key, content string) string {
	t.Helper()
	blob := gitIn(t, dir, "---\nscope: private\n---\n"+content, "hash-object", "-w", "--stdin")
	sub := gitIn(t, dir, "100644 blob "+blob+"\t"+key+".md\n", "mktree")
	root := gitIn(t, dir, "040000 tree "+sub+"\tknowledge\n", "mktree")
	args := []string{"commit-tree", "-m", "ctx: set knowledge " + key, root}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	commit := gitIn(t, dir, "", args...)
	storetest.Git(t, dir, "update-ref", ref, commit)
	return commit
}

// TestMoveOldPrivateRefs: a store made by an older ctx keeps refs/ctx/private and refs/ctx/ephemeral in
// the repository's refs/ (loose or packed); opening it moves them into the local-only repository with
// their history, removes them from refs/ (so push --mirror no longer publishes them), and is idempotent.
// An interrupted move (both places set) is completed; a diverged old ref is kept as a rescued ref.
func TestMoveOldPrivateRefs(t *testing.T) {
	ctx := context.Background()
	dir := storetest.Repo(t)
	storetest.Open(t, dir, store.Actor{}) // the public branch
	p1 := oldLayoutRef(t, dir, store.RefPrivate, "", "old-secret", "OLD-PRIVATE-1\n")
	p2 := oldLayoutRef(t, dir, store.RefPrivate, p1, "old-secret", "OLD-PRIVATE-2\n")
	oldLayoutRef(t, dir, store.RefEphemeral, "", "old-scratch", "OLD-EPHEMERAL\n")
	storetest.Git(t, dir, "pack-refs", "--all") // both refs now in packed-refs only
	if refs := storetest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); !strings.Contains(refs, store.RefPrivate) {
		t.Fatalf("fixture: %q", refs)
	}

	s, err := store.Open(ctx, dir, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if refs := storetest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); refs != "" {
		t.Errorf("after the move the repository still has %q", refs)
	}
	if got := storetest.GitRef(t, dir, store.RefPrivate, "rev-parse", store.RefPrivate); got != p2 {
		t.Errorf("local private ref = %s, want %s", got, p2)
	}
	if n := storetest.Count(t, dir, store.RefPrivate); n != 2 {
		t.Errorf("private history has %d commits, want 2", n)
	}
	storetest.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "fsck", "--strict", "--no-dangling")
	v, err := s.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := s.GetEntry(ctx, v, store.KnowledgeKind, "old-secret"); err != nil || e.Content != "OLD-PRIVATE-2\n" || e.Scope != store.Private {
		t.Errorf("old-secret = %+v, %v", e, err)
	}
	if e, err := s.GetEntry(ctx, v, store.KnowledgeKind, "old-scratch"); err != nil || e.Scope != store.Ephemeral {
		t.Errorf("old-scratch = %+v, %v", e, err)
	}
	remote := bare(t)
	storetest.Git(t, dir, "push", "-q", "--mirror", remote)
	if objs := remoteObjects(t, remote); strings.Contains(objs, "OLD-PRIVATE") || strings.Contains(objs, "OLD-EPHEMERAL") {
		t.Errorf("push --mirror after the move published private data")
	}
	// Opening again changes nothing.
	if _, err := store.Open(ctx, dir, store.Actor{}); err != nil {
		t.Fatal(err)
	}
	if got := storetest.GitRef(t, dir, store.RefPrivate, "rev-parse", store.RefPrivate); got != p2 {
		t.Errorf("second open: local private ref = %s", got)
	}

	// An interrupted move: the old ref is back at a commit the local ref already has.
	storetest.Git(t, dir, "update-ref", store.RefPrivate, p1)
	if _, err := store.Open(ctx, dir, store.Actor{}); err != nil {
		t.Fatal(err)
	}
	if refs := storetest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); refs != "" {
		t.Errorf("interrupted move not completed: %q", refs)
	}
	if got := storetest.GitRef(t, dir, store.RefPrivate, "rev-parse", store.RefPrivate); got != p2 {
		t.Errorf("interrupted move moved the local ref to %s", got)
	}

	// An older ctx wrote to the old place after the move: its commit is kept, not lost.
	other := oldLayoutRef(t, dir, store.RefPrivate, "", "written-by-old-ctx", "OLD-CTX-WRITE\n")
	if _, err := store.Open(ctx, dir, store.Actor{}); err != nil {
		t.Fatal(err)
	}
	rescued := storetest.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "for-each-ref", "--format=%(objectname) %(refname)", "refs/ctx/rescued/")
	if !strings.Contains(rescued, other+" refs/ctx/rescued/private-"+other[:12]) {
		t.Errorf("rescued refs = %q, want %s", rescued, other)
	}
	if refs := storetest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); refs != "" {
		t.Errorf("diverged old ref left in refs/: %q", refs)
	}
}
