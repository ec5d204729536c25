package store_test

import (
	"context"
	"errors"
	"github.com/ctx-dev/ctx/merge"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// remoteObjects is every object of a repository as `git cat-file --batch-all-objects --batch` prints it.
func remoteObjects(t *testing.T, dir string) string {
	t.Helper()
	return testenv.Git(t, dir, "cat-file", "--batch-all-objects", "--batch")
}

// bare makes an empty bare repository and returns its path.
func bare(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, t.TempDir(), "init", "-q", "--bare", dir)
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

	if refs := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "refs/ctx/private") || strings.Contains(refs, "refs/ctx/ephemeral") {
		t.Fatalf("the repository's refs/ hold a private ref:\n%s", refs)
	}

	// The repository's own object database never holds private objects: a local `git clone --mirror`
	// (which copies the object database whole) or a copy of .git/objects carries none.
	if objs := remoteObjects(t, dir); strings.Contains(objs, "PRIVATE-MARKER-1") || strings.Contains(objs, "EPHEMERAL-MARKER-1") || strings.Contains(objs, "MOVED-MARKER-2") {
		t.Errorf("the repository's object database holds private objects")
	}
	clone := filepath.Join(t.TempDir(), "clone.git")
	testenv.Git(t, dir, "clone", "-q", "--mirror", dir, clone)
	if objs := remoteObjects(t, clone); strings.Contains(objs, "PRIVATE-MARKER-1") || strings.Contains(objs, "vault-recovery-codes") {
		t.Errorf("git clone --mirror of the repository holds private data")
	}

	mirror, all, star := bare(t), bare(t), bare(t)
	testenv.Git(t, dir, "push", "-q", "--mirror", mirror)
	testenv.Git(t, dir, "push", "-q", "--all", all)
	testenv.Git(t, dir, "push", "-q", star, "refs/*:refs/*")
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
	testenv.Git(t, dir, "reflog", "expire", "--expire=now", "--all")
	testenv.Git(t, dir, "gc", "-q", "--prune=now")
	testenv.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "gc", "-q", "--prune=now")
	testenv.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "fsck", "--strict", "--no-dangling")
	testenv.Git(t, dir, "fsck", "--strict", "--no-dangling")
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
		e, err := v.GetEntry(ctx, store.KnowledgeKind, key)
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
	testenv.Git(t, dir, "update-ref", ref, commit)
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
	testenv.Git(t, dir, "pack-refs", "--all") // both refs now in packed-refs only
	if refs := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); !strings.Contains(refs, store.RefPrivate) {
		t.Fatalf("fixture: %q", refs)
	}

	s, err := store.Open(ctx, dir, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if refs := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); refs != "" {
		t.Errorf("after the move the repository still has %q", refs)
	}
	if got := storetest.GitRef(t, dir, store.RefPrivate, "rev-parse", store.RefPrivate); got != p2 {
		t.Errorf("local private ref = %s, want %s", got, p2)
	}
	if n := storetest.Count(t, dir, store.RefPrivate); n != 2 {
		t.Errorf("private history has %d commits, want 2", n)
	}
	testenv.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "fsck", "--strict", "--no-dangling")
	v, err := s.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := v.GetEntry(ctx, store.KnowledgeKind, "old-secret"); err != nil || e.Content != "OLD-PRIVATE-2" || e.Scope != store.Private {
		t.Errorf("old-secret = %+v, %v", e, err)
	}
	if e, err := v.GetEntry(ctx, store.KnowledgeKind, "old-scratch"); err != nil || e.Scope != store.Ephemeral {
		t.Errorf("old-scratch = %+v, %v", e, err)
	}
	remote := bare(t)
	testenv.Git(t, dir, "push", "-q", "--mirror", remote)
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
	testenv.Git(t, dir, "update-ref", store.RefPrivate, p1)
	if _, err := store.Open(ctx, dir, store.Actor{}); err != nil {
		t.Fatal(err)
	}
	if refs := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); refs != "" {
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
	rescued := testenv.Git(t, dir, "--git-dir="+storetest.LocalGitDir(t, dir), "for-each-ref", "--format=%(objectname) %(refname)", "refs/ctx/rescued/")
	if !strings.Contains(rescued, other+" refs/ctx/rescued/private-"+other[:12]) {
		t.Errorf("rescued refs = %q, want %s", rescued, other)
	}
	if refs := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/"); refs != "" {
		t.Errorf("diverged old ref left in refs/: %q", refs)
	}
}

// TestPrivateNamesStayOffThePublicBranch: writes that touch the public branch and mention private or
// ephemeral entries (a session record listing them, ctx commit of hand edits in both scopes, a public
// decision superseding a private one) must leave no trace of those entries, their names included, in any
// object a push publishes. The local user still sees the session's full lists.
func TestPrivateNamesStayOffThePublicBranch(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	// Names that appear nowhere else: any occurrence in a public object is a leak.
	const (
		privKnow  = "zq-vault-unseal"
		ephKnow   = "zq-scratch-ideas"
		privSkill = "zq-rotate-keys"
		privDec   = "Zq rotate root credentials"
	)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: privKnow, Content: "x\n", Scope: store.Private})
	must(err)
	_, err = s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: ephKnow, Content: "y\n", Scope: store.Ephemeral})
	must(err)
	_, err = s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "shared-notes", Content: "z\n"})
	must(err)
	_, _, err = s.AddSkill(ctx, privSkill, "rotate the keys", "steps\n", store.Private)
	must(err)
	d, _, err := s.AddDecision(ctx, store.NewDecision{Title: privDec, Scope: store.Private, Context: "c", Decision: "d", Consequences: "q"})
	must(err)

	// A public session record that lists them.
	_, _, err = s.StartSession(ctx, store.SessionUpdate{ID: "sess-1", Summary: "worked"})
	must(err)
	ss, _, err := s.AppendSession(ctx, store.SessionUpdate{ID: "sess-1",
		KnowledgeAdded: []string{privKnow, "shared-notes", ephKnow}, DecisionsAdded: []string{strconv.Itoa(d.ID), privDec},
		SkillsUsed: []string{privSkill}})
	must(err)
	_, _, err = s.EndSession(ctx, "sess-1", "done")
	must(err)
	v, err := s.RefView(ctx)
	must(err)
	got, err := v.GetSession(ctx, "sess-1")
	must(err)
	if got.Scope != store.Public || strings.Join(got.KnowledgeAdded, ",") != "shared-notes,"+privKnow+","+ephKnow ||
		len(got.DecisionsAdded) != 2 || strings.Join(got.SkillsUsed, ",") != privSkill || strings.Join(ss.SkillsUsed, ",") != privSkill {
		t.Errorf("the local user's session lost names: %+v", got)
	}
	list, err := v.ListSessions(ctx)
	must(err)
	if len(list) != 1 || len(list[0].KnowledgeAdded) != 3 {
		t.Errorf("ListSessions = %+v", list)
	}
	pub := storetest.Show(t, dir, "ctx", merge.SessionPath("sess-1", got.Started, true))
	if !strings.Contains(pub, "shared-notes") || strings.Contains(pub, privKnow) {
		t.Errorf("public session record:\n%s", pub)
	}

	// ctx commit of hand edits in both scopes: one commit per scope, each naming its own paths only.
	root := filepath.Join(dir, store.CheckoutDir)
	must(os.WriteFile(filepath.Join(root, "knowledge", privKnow+".md"), []byte("---\nscope: private\n---\nedited by hand\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "knowledge", "shared-notes.md"), []byte("---\nscope: public\n---\nedited too\n"), 0o644))
	c, _, err := s.CommitHandEdits(ctx, "")
	must(err)
	if len(c.Commits) != 2 {
		t.Fatalf("hand edits committed on %v, want the public and the private ref", c.Commits)
	}
	if msg := storetest.LastMessage(t, dir, store.RefPrivate); !strings.Contains(msg, "Ctx-Key: knowledge/"+privKnow+".md") {
		t.Errorf("the private commit lost its key:\n%s", msg)
	}

	// A public decision cannot name a private one.
	if _, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Public follow-up", Supersedes: []int{d.ID}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("public decision superseding a private one: %v", err)
	}
	pd, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Public one"})
	must(err)
	if _, _, err := s.SetDecisionStatus(ctx, strconv.Itoa(pd.ID), "superseded", d.ID); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("public decision superseded by a private one: %v", err)
	}

	remote := bare(t)
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	if _, err := s.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	objs := remoteObjects(t, remote)
	if !strings.Contains(objs, "shared-notes") || !strings.Contains(objs, "edited too") {
		t.Fatal("the public writes did not reach the remote: the check would prove nothing")
	}
	for _, name := range []string{privKnow, ephKnow, privSkill, privDec, "edited by hand"} {
		if strings.Contains(objs, name) {
			t.Errorf("the remote holds %q", name)
		}
	}
}
