package store_test

import (
	"cmp"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

var bg = context.Background()

func TestInitIdempotentAndExcluded(t *testing.T) {
	dir := storetest.Repo(t)
	snap := testenv.Take(t, dir)
	s, err := store.Open(bg, dir, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := s.Init(bg, store.InitOptions{})
	if err != nil || !r1.Created {
		t.Fatalf("init: %+v %v", r1, err)
	}
	refsBefore := testenv.Git(t, dir, "for-each-ref")
	exclude, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	r2, err := s.Init(bg, store.InitOptions{})
	if err != nil || !r2.Existing || r2.Tip != r1.Tip {
		t.Fatalf("second init: %+v %v", r2, err)
	}
	if got := testenv.Git(t, dir, "for-each-ref"); got != refsBefore {
		t.Errorf("second init changed refs:\n%s\n%s", refsBefore, got)
	}
	exclude2, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if string(exclude) != string(exclude2) || strings.Count(string(exclude2), "/.context/") != 1 {
		t.Errorf("info/exclude: %q", exclude2)
	}
	snap.Same(t, dir)
	var m store.Manifest
	v, _ := s.RefView(bg)
	if m, err = v.ReadManifest(bg); err != nil || m.SchemaVersion != store.SchemaVersion || m.Project.ID == "" || m.CreatedAt == "" {
		t.Errorf("manifest: %+v %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".context", "manifest.json")); err != nil {
		t.Errorf("checked-out tree: %v", err)
	}
}

func TestInitEmptyRepoBranchAndWorktree(t *testing.T) {
	dir := t.TempDir()
	testenv.Git(t, dir, "init", "-q", "-b", "main")
	testenv.Git(t, dir, "config", "user.name", "A")
	testenv.Git(t, dir, "config", "user.email", "a@example.com")
	s, err := store.Open(bg, dir, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Init(bg, store.InitOptions{Branch: "team-context"}); err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.GitErr(dir, "rev-parse", "--verify", "HEAD"); err == nil {
		t.Errorf("init gave the empty repository a HEAD commit")
	}
	testenv.Git(t, dir, "rev-parse", "--verify", "refs/heads/team-context")
	// A new handle reads the configured branch name.
	s2, _ := store.Open(bg, dir, store.Actor{})
	if s2.BranchRef() != "refs/heads/team-context" {
		t.Errorf("branch: %s", s2.BranchRef())
	}
	if _, err := s.Init(bg, store.InitOptions{Branch: "bad name"}); err == nil {
		t.Errorf("a branch name with a space was accepted")
	}

	// Linked worktree: its own .context/, the branch shared through the common dir.
	main := storetest.Repo(t)
	sm := storetest.Open(t, main, store.Actor{})
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	sw, err := store.Open(bg, wt, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := sw.Init(bg, store.InitOptions{}); err != nil || !r.Existing {
		t.Fatalf("worktree init: %+v %v", r, err)
	}
	if _, err := sw.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "from-worktree", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(wt, ".context", "knowledge", "from-worktree.md")); err != nil {
		t.Errorf("worktree checkout: %v", err)
	}
	v, _ := sm.RefView(bg)
	if _, err := v.GetEntry(bg, store.KnowledgeKind, "from-worktree"); err != nil {
		t.Errorf("main worktree does not see the write: %v", err)
	}
}

func TestEntriesOneCommitPerWrite(t *testing.T) {
	s, dir := storetest.New(t)
	snap := testenv.Take(t, dir)
	n := storetest.Count(t, dir, "ctx")
	body := "---\nnot: ours\n---\n# Title\r\n\nno final newline"
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "architecture", Content: body}); err != nil {
		t.Fatal(err)
	}
	if storetest.Count(t, dir, "ctx") != n+1 {
		t.Fatalf("want one commit")
	}
	msg := storetest.LastMessage(t, dir, "ctx")
	for _, want := range []string{"ctx: set knowledge architecture", "Ctx-Op: knowledge.set", "Ctx-Key: architecture", "Ctx-Agent: test-agent", "Ctx-Session: s1", "Ctx-Machine: laptop"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if a := testenv.Git(t, dir, "log", "-1", "--format=%an <%ae>", "ctx"); a != testenv.Name+" <"+testenv.Email+">" {
		t.Errorf("author %q", a)
	}
	// Same content again: no commit.
	if c, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "architecture", Content: body}); err != nil || c.Changed() {
		t.Fatalf("unchanged write: %+v %v", c, err)
	}
	v, _ := s.RefView(bg)
	e, err := v.GetEntry(bg, store.KnowledgeKind, "architecture")
	if err != nil || e.Content != body || e.Scope != store.Public || e.Provenance == "" {
		t.Fatalf("read back: %+v %v", e, err)
	}
	// Invalid keys: a clear error and no commit.
	n = storetest.Count(t, dir, "ctx")
	for _, key := range []string{"../x", "a/b", "", "a\x00b", strings.Repeat("k", 129), "Upper", ".hidden"} {
		if _, err := s.SetEntry(bg, store.ConventionKind, store.SetEntry{Key: key, Content: "x"}); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("key %q: %v", key, err)
		}
	}
	if storetest.Count(t, dir, "ctx") != n {
		t.Errorf("an invalid key made a commit")
	}
	// Missing: the not-found text of docs/format.md.
	_, err = v.GetEntry(bg, store.ConventionKind, "nope")
	var nf *store.NotFoundError
	if !errors.As(err, &nf) || nf.Msg != "Convention 'nope' not found" {
		t.Errorf("missing: %v", err)
	}
	// A set never moves an entry to another scope: it is refused, and nothing is written.
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "architecture", Content: body, Scope: store.Private}); !errors.Is(err, store.ErrScopeClash) || !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("set in another scope: %v", err)
	}
	if testenv.Git(t, dir, "rev-parse", "ctx") != tip || storetest.Count(t, dir, store.RefPrivate) != 0 {
		t.Fatal("a refused set wrote something")
	}
	// Private scope: on refs/ctx/private, not on the branch; a move is one step.
	if _, err := s.SetScope(bg, "knowledge", "architecture", store.Private); err != nil {
		t.Fatal(err)
	}
	if storetest.Files(t, dir, "ctx")["knowledge/architecture.md"] || !storetest.Files(t, dir, "refs/ctx/private")["knowledge/architecture.md"] {
		t.Errorf("scope move: ctx %v private %v", storetest.Files(t, dir, "ctx"), storetest.Files(t, dir, "refs/ctx/private"))
	}
	v, _ = s.RefView(bg)
	list, _ := v.ListEntries(bg, store.KnowledgeKind)
	if len(list) != 1 || list[0].Scope != store.Private {
		t.Errorf("list: %+v", list)
	}
	if _, err := s.RemoveEntry(bg, store.KnowledgeKind, "architecture"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemoveEntry(bg, store.KnowledgeKind, "architecture"); !errors.As(err, &nf) {
		t.Errorf("second remove: %v", err)
	}
	snap.Same(t, dir)
}

func TestDecisions(t *testing.T) {
	s, dir := storetest.New(t)
	d1, _, err := s.AddDecision(bg, store.NewDecision{Title: "Use PostgreSQL", Context: "ACID", Decision: "PG 16", Consequences: "ops", Status: "accepted"})
	if err != nil || d1.ID != 1 || d1.Path != "decisions/0001-use-postgresql.md" {
		t.Fatalf("add: %+v %v", d1, err)
	}
	body := "# Raw ADR\n\n## Context\n\nimported\n"
	d7, _, err := s.AddDecision(bg, store.NewDecision{Title: "Imported", Body: &body, Number: 7})
	if err != nil || d7.ID != 7 {
		t.Fatalf("numbered: %+v %v", d7, err)
	}
	d8, _, _ := s.AddDecision(bg, store.NewDecision{Title: "Use PostgreSQL"})
	if d8.ID != 8 {
		t.Errorf("next id after 7: %d", d8.ID)
	}
	v, _ := s.RefView(bg)
	got, err := v.FindDecision(bg, "1")
	if err != nil || got.Context != "ACID" || got.Decision != "PG 16" || got.Consequences != "ops" || got.Status != "accepted" {
		t.Errorf("find 1: %+v %v", got, err)
	}
	if got, err := v.FindDecision(bg, "Imported"); err != nil || got.Body != body || got.Context != "imported" {
		t.Errorf("by title: %+v %v", got, err)
	}
	var amb *store.AmbiguousError
	if _, err := v.FindDecision(bg, "Use PostgreSQL"); !errors.As(err, &amb) || len(amb.Matches) != 2 {
		t.Errorf("ambiguous title: %v", err)
	}
	var nf *store.NotFoundError
	if _, err := v.FindDecision(bg, "99"); !errors.As(err, &nf) || nf.Msg != "Decision '99' not found" {
		t.Errorf("missing: %v", err)
	}
	n := storetest.Count(t, dir, "ctx")
	if _, _, err := s.AddDecision(bg, store.NewDecision{Title: "x", Status: "maybe"}); err == nil {
		t.Errorf("bad status accepted")
	}
	if _, _, err := s.SetDecisionStatus(bg, "1", "superseded", 8); err != nil {
		t.Fatal(err)
	}
	if storetest.Count(t, dir, "ctx") != n+1 {
		t.Errorf("set-status: want one commit")
	}
	v, _ = s.RefView(bg)
	if got, _ := v.FindDecision(bg, "1"); got.Status != "superseded" || got.SupersededBy != 8 || got.Context != "ACID" {
		t.Errorf("after status: %+v", got)
	}
}

func TestHandEditsCommitAndRefresh(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "a", Content: "one\n"}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".context", "knowledge", "a.md")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, []byte("two\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".context", "knowledge", "new.md"), []byte("hand made\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edits, err := s.HandEdits(bg)
	if err != nil || len(edits) != 2 || edits[0].Change != "modified" || edits[1].Change != "added" {
		t.Fatalf("hand edits: %+v %v", edits, err)
	}
	// A write from elsewhere that touches the edited file does not overwrite the hand edit.
	other, _ := store.Open(bg, dir, store.Actor{Agent: "other"})
	if _, err := other.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "a", Content: "changed elsewhere\n"}); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(p); !strings.Contains(string(b2), "two") {
		t.Errorf("refresh overwrote a hand edit")
	}
	n := storetest.Count(t, dir, "ctx")
	c, edits, err := s.CommitHandEdits(bg, "record my notes")
	if err != nil || !c.Changed() || len(edits) != 2 {
		t.Fatalf("commit: %+v %+v %v", c, edits, err)
	}
	if storetest.Count(t, dir, "ctx") != n+1 {
		t.Errorf("want one commit")
	}
	if got := storetest.Show(t, dir, "ctx", "knowledge/new.md"); got != "hand made" {
		t.Errorf("new file: %q", got)
	}
	if edits, _ := s.HandEdits(bg); len(edits) != 0 {
		t.Errorf("still dirty: %+v", edits)
	}
	// Deleting by hand, then commit, deletes on the branch.
	os.Remove(filepath.Join(dir, ".context", "knowledge", "new.md"))
	if _, _, err := s.CommitHandEdits(bg, ""); err != nil {
		t.Fatal(err)
	}
	if storetest.Files(t, dir, "ctx")["knowledge/new.md"] {
		t.Errorf("hand delete not recorded")
	}
	// The record names the commit it mirrors.
	rec, _ := s.ReadRecord()
	if rec.Commits[store.Public] != testenv.Git(t, dir, "rev-parse", "ctx") {
		t.Errorf("record mirrors %s", rec.Commits[store.Public])
	}
}

func TestPullPushMergeAndStatus(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, "", "init", "-q", "--bare", remote)
	a := storetest.Repo(t)
	testenv.Git(t, a, "remote", "add", "origin", "file://"+remote)
	sa := storetest.Open(t, a, store.Actor{Agent: "a"})
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	// B adopts the remote's branch at init instead of starting a second history.
	b := storetest.Repo(t)
	testenv.Git(t, b, "remote", "add", "origin", remote)
	sb := storetest.Open(t, b, store.Actor{Agent: "b"})
	if testenv.Git(t, b, "rev-parse", "ctx") != testenv.Git(t, a, "rev-parse", "ctx") {
		t.Fatalf("init did not adopt the remote's context branch")
	}
	if _, err := sa.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "from-a", Content: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "from-b", Content: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := sa.Status(bg)
	if err != nil || st.Ahead != 1 || st.Behind != 0 {
		t.Errorf("status before pull: %+v %v", st, err)
	}
	// A's push lands on A's machine ref without merging; the shared branch, which B moved first, stays
	// (docs/sync.md): not a failure.
	pr, err := sa.Push(bg, store.PushOptions{})
	if err != nil || pr.Retries != 0 || len(pr.Pulls) != 0 || pr.Shared != store.SharedBehind || !strings.HasPrefix(pr.Machine, "refs/ctx/machines/laptop-") {
		t.Fatalf("push: %+v %v", pr, err)
	}
	if got := testenv.Git(t, remote, "rev-parse", pr.Machine); got != testenv.Git(t, a, "rev-parse", "ctx") {
		t.Errorf("A's machine ref on the remote is %s", got)
	}
	// B's pull merges A's machine ref; A's next pull fast-forwards to B's merge.
	r, err := sb.Pull(bg, store.PullOptions{})
	if err != nil || r.Action != "merge" {
		t.Fatalf("pull of B: %+v %v", r, err)
	}
	if parents := strings.Fields(testenv.Git(t, b, "log", "-1", "--format=%P", "ctx")); len(parents) != 2 {
		t.Errorf("merge parents: %v", parents)
	}
	if pr, err := sb.Push(bg, store.PushOptions{}); err != nil || pr.Shared != store.SharedUpdated {
		t.Fatalf("push of B: %+v %v", pr, err)
	}
	r, err = sa.Pull(bg, store.PullOptions{})
	if err != nil || r.Action != "fast-forward" {
		t.Fatalf("pull of A: %+v %v", r, err)
	}
	if testenv.Git(t, a, "rev-parse", "ctx") != testenv.Git(t, b, "rev-parse", "ctx") {
		t.Errorf("tips differ")
	}
	st, _ = sb.Status(bg)
	if st.Ahead != 0 || st.Behind != 0 || st.Counts["knowledge"] != 2 {
		t.Errorf("status: %+v", st)
	}
	// A remote that refuses: the remote's words, a failure, the local store unchanged.
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'protected branch: ctx is frozen' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "refused", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	tip := testenv.Git(t, b, "rev-parse", "ctx")
	_, err = sb.Push(bg, store.PushOptions{})
	if err == nil || !strings.Contains(err.Error(), "protected branch") {
		t.Errorf("refused push: %v", err)
	}
	// The error names the refused ref (git's "! [remote rejected] ctx -> ctx" line).
	if err == nil || !strings.Contains(err.Error(), "refs/heads/ctx -> refs/heads/ctx: [remote rejected]") {
		t.Errorf("refused push does not name the refused ref: %v", err)
	}
	if testenv.Git(t, b, "rev-parse", "ctx") != tip {
		t.Errorf("a refused push changed the local branch")
	}
	// Log with a path filter.
	entries, err := sb.Log(bg, 0, "knowledge/from-a.md")
	if err != nil || len(entries) != 1 || entries[0].Key != "from-a" || entries[0].Agent != "a" {
		t.Errorf("log path: %+v %v", entries, err)
	}
}

// TestPullPushByURL syncs with --remote given as a URL (no configured remote of that name): the fetched tip
// goes to a local ref under refs/ctx/fetch/, never to an invalid refs/remotes/<url>/ name.
func TestPullPushByURL(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, "", "init", "-q", "--bare", remote)
	a := storetest.Repo(t)
	sa := storetest.Open(t, a, store.Actor{})
	if _, err := sa.Push(bg, store.PushOptions{Remote: "file://" + remote}); err != nil {
		t.Fatal(err)
	}
	b := storetest.Repo(t)
	sb, _ := store.Open(bg, b, store.Actor{})
	r, err := sb.Pull(bg, store.PullOptions{Remote: remote})
	if err != nil || r.Action != "adopted" {
		t.Fatalf("pull by path: %+v %v", r, err)
	}
	if !strings.HasPrefix(sb.TrackingRef(remote), "refs/ctx/fetch/") {
		t.Errorf("tracking ref for a URL: %s", sb.TrackingRef(remote))
	}
	if testenv.Git(t, b, "rev-parse", "ctx") != testenv.Git(t, a, "rev-parse", "ctx") {
		t.Errorf("tips differ")
	}
}

// TestHandEditOfStaleFile: a hand edit of a file whose entry was rewritten since it was checked out never
// silently reverts the newer write: it is merged three-way, and an overlap becomes a conflict record.
func TestHandEditOfStaleFile(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "lu", Content: "line one\nline two\nline three\n"}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".context", "knowledge", "lu.md")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "line one", "line ONE (by hand)", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A newer write of the same entry (another agent): the hand edit is kept on disk, the ref moves on.
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "lu", Content: "line one\nline two\nline three (newer)\n"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CommitHandEdits(bg, ""); err != nil {
		t.Fatal(err)
	}
	got := storetest.Show(t, dir, "ctx", "knowledge/lu.md")
	if !strings.Contains(got, "line ONE (by hand)") || !strings.Contains(got, "line three (newer)") {
		t.Fatalf("the hand edit and the newer write did not both survive:\n%s", got)
	}
	if edits, _ := s.HandEdits(bg); len(edits) != 0 {
		t.Errorf(".context/ does not mirror the commit: %+v", edits)
	}
	// The same line changed both ways: the newer write is kept, the hand edit goes to a conflict record.
	b, _ = os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "line two", "line 2 by hand", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "lu", Content: strings.Replace(got[strings.Index(got, "line ONE"):], "line two", "line 2 newer", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CommitHandEdits(bg, ""); err != nil {
		t.Fatal(err)
	}
	files := storetest.Files(t, dir, "ctx")
	records := 0
	for f := range files {
		if strings.HasPrefix(f, "conflicts/") {
			records++
			if rec := storetest.Show(t, dir, "ctx", f); !strings.Contains(rec, "line 2 by hand") && !strings.Contains(rec, "line 2 newer") {
				t.Errorf("conflict record lacks the losing version: %s", rec)
			}
		}
	}
	if records != 1 {
		t.Errorf("want one conflict record, got %d", records)
	}
}

// TestCommitRefusesBrokenFiles: files that would break readers on every clone are refused, all listed,
// and nothing is committed.
func TestCommitRefusesBrokenFiles(t *testing.T) {
	s, dir := storetest.New(t)
	n := storetest.Count(t, dir, "ctx")
	ctxDir := filepath.Join(dir, ".context")
	if err := os.WriteFile(filepath.Join(ctxDir, "state.json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ctxDir, "knowledge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "knowledge", "UPPER.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "knowledge", "b1.md"), []byte("---\nauthor: [unclosed\n---\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "notes.txt"), []byte("stray\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.CommitHandEdits(bg, "")
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("want ErrInvalid, got %v", err)
	}
	for _, want := range []string{"state.json", "UPPER", "b1.md", "notes.txt"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	if storetest.Count(t, dir, "ctx") != n {
		t.Errorf("a commit was made")
	}
}

// TestInitRefusesUnsafeBranches: the context branch is never the user's checked-out branch, an existing
// branch that is not a store, or a second store beside an existing one; a tracked .context/ is refused.
func TestInitRefusesUnsafeBranches(t *testing.T) {
	dir := storetest.Repo(t)
	s, _ := store.Open(bg, dir, store.Actor{})
	for _, b := range []string{"main"} {
		if _, err := s.Init(bg, store.InitOptions{Branch: b}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("init --branch %s: %v", b, err)
		}
	}
	testenv.Git(t, dir, "branch", "feature")
	s, _ = store.Open(bg, dir, store.Actor{})
	if _, err := s.Init(bg, store.InitOptions{Branch: "feature"}); err == nil || !strings.Contains(err.Error(), "not a context store") {
		t.Errorf("init on a code branch: %v", err)
	}
	if got := testenv.Git(t, dir, "rev-parse", "feature"); got != testenv.Git(t, dir, "rev-parse", "main") {
		t.Errorf("feature moved")
	}
	s, _ = store.Open(bg, dir, store.Actor{})
	if _, err := s.Init(bg, store.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	s, _ = store.Open(bg, dir, store.Actor{})
	if _, err := s.Init(bg, store.InitOptions{Branch: "other"}); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("a second store: %v", err)
	}
	if _, err := testenv.GitErr(dir, "rev-parse", "--verify", "refs/heads/other"); err == nil {
		t.Errorf("refs/heads/other was created")
	}

	tracked := storetest.Repo(t)
	if err := os.MkdirAll(filepath.Join(tracked, ".context"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tracked, ".context", "mine.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, tracked, "add", ".context/mine.txt")
	testenv.Git(t, tracked, "commit", "-qm", "tracked .context")
	st, _ := store.Open(bg, tracked, store.Actor{})
	if _, err := st.Init(bg, store.InitOptions{}); err == nil || !strings.Contains(err.Error(), "tracks files in .context") {
		t.Errorf("tracked .context/: %v", err)
	}
}

// Init looks at the repository's own index for files tracked in .context/, even when it runs with the
// environment of a git hook that points git at another index (GIT_INDEX_FILE): git runs for ctx with its
// repository given explicitly and that environment dropped.
func TestInitRefusesTrackedCheckoutDirUnderHookEnv(t *testing.T) {
	tracked := storetest.Repo(t)
	if err := os.MkdirAll(filepath.Join(tracked, ".context"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tracked, ".context", "mine.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, tracked, "add", ".context/mine.txt")
	testenv.Git(t, tracked, "commit", "-qm", "tracked .context")
	t.Setenv("GIT_INDEX_FILE", filepath.Join(t.TempDir(), "other-index"))
	st, err := store.Open(bg, tracked, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Init(bg, store.InitOptions{}); err == nil || !strings.Contains(err.Error(), "tracks files in .context") {
		t.Errorf("tracked .context/ with GIT_INDEX_FILE set: %v", err)
	}
}

// SetConfig saves the settings for the next Open; a branch change or a remote git must never see is
// refused and nothing is written; SetTransferTimeout changes no saved setting.
func TestSetConfig(t *testing.T) {
	s, dir := storetest.New(t)
	cfg := s.Config()
	cfg.Remote, cfg.PushWithGit, cfg.TimeoutSecs = "origin", true, 7
	cfg.HistorySources = []store.HistorySource{{Root: "laptop", Provider: "codex", Path: "/backup/.codex", Group: "old"}}
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	s.SetTransferTimeout(90 * time.Second)
	again := storetest.Open(t, dir, store.Actor{})
	if got := again.Config(); !reflect.DeepEqual(got, cfg) {
		t.Errorf("after Open: %+v, want %+v", got, cfg)
	}
	var badConfigs []store.Config
	for _, bad := range []store.Config{
		{Branch: "other", Remote: "origin"},
		{Branch: cfg.Branch, Remote: "--upload-pack=touch pwned"},
		{Branch: cfg.Branch, Remote: "ext::sh -c touch% pwned"},
	} {
		bad.Remote = cmp.Or(bad.Remote, cfg.Remote)
		bad.HistorySources = cfg.HistorySources
		badConfigs = append(badConfigs, bad)
	}
	// Hostile configured history roots: bad names, relative, unclean or control-character paths, repeats.
	for _, h := range [][]store.HistorySource{
		{{Root: "../etc", Provider: "codex", Path: "/x"}},
		{{Root: "", Provider: "codex", Path: "/x"}},
		{{Root: strings.Repeat("a", 65), Provider: "codex", Path: "/x"}},
		{{Root: "ok", Provider: "codex", Path: "/x", Group: "a b"}},
		{{Root: "ok", Provider: "", Path: "/x"}},
		{{Root: "ok", Provider: "nosuch", Path: "/x"}},
		{{Root: "ok", Provider: "codex", Path: "relative/dir"}},
		{{Root: "ok", Provider: "codex", Path: "/a/../etc"}},
		{{Root: "ok", Provider: "codex", Path: "/"}},
		{{Root: "ok", Provider: "codex", Path: "/a\nb"}},
		{{Root: "ok", Provider: "codex", Path: "/a\x00b"}},
		{{Root: "ok", Provider: "codex", Path: "/a"}, {Root: "ok", Provider: "claude-code", Path: "/b"}},
		{{Root: "a", Provider: "codex", Path: "/a"}, {Root: "b", Provider: "codex", Path: "/a"}},
	} {
		badConfigs = append(badConfigs, store.Config{Branch: cfg.Branch, Remote: cfg.Remote, PushWithGit: true, TimeoutSecs: 7, HistorySources: h})
	}
	for _, bad := range badConfigs {
		if err := again.SetConfig(bad); err == nil {
			t.Errorf("SetConfig(%+v) accepted", bad)
		}
		if got := storetest.Open(t, dir, store.Actor{}).Config(); !reflect.DeepEqual(got, cfg) || !reflect.DeepEqual(again.Config(), cfg) {
			t.Errorf("after a refused SetConfig(%+v): saved %+v, in memory %+v", bad, got, again.Config())
		}
	}
}

// TestTransferTimeoutBounded: a sync.timeout past the week (a config.json edited by hand: `ctx config`
// refuses it) and an override past it count as MaxTimeout, never as a Duration that overflowed to a
// negative one (a tester's 9300000000 seconds made every pull give up at once).
func TestTransferTimeoutBounded(t *testing.T) {
	s, dir := storetest.New(t)
	for _, secs := range []int{9_300_000_000, int(store.MaxTimeout/time.Second) + 1, math.MaxInt} {
		cfg := s.Config()
		cfg.TimeoutSecs = secs
		if err := s.SetConfig(cfg); err != nil {
			t.Fatal(err)
		}
		if got := storetest.Open(t, dir, store.Actor{}).TransferTimeout(); got != store.MaxTimeout {
			t.Errorf("sync.timeout %d s: transfer timeout %v, want %v", secs, got, store.MaxTimeout)
		}
	}
	again := storetest.Open(t, dir, store.Actor{})
	again.SetTransferTimeout(time.Duration(math.MaxInt64))
	if got := again.TransferTimeout(); got != store.MaxTimeout {
		t.Errorf("override past the bound: %v", got)
	}
	cfg := again.Config()
	cfg.TimeoutSecs = 45
	if err := again.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Open(t, dir, store.Actor{}).TransferTimeout(); got != 45*time.Second {
		t.Errorf("sync.timeout 45: %v", got)
	}
}

// TestHandEditNamesItsCommitter: an entry written last by a teammate and then edited by hand is, once
// `ctx commit` records it, the committer's: author, agent and updated_at in its front matter are theirs
// (a later conflict names the right writer), and the body is the hand edit.
func TestHandEditNamesItsCommitter(t *testing.T) {
	s, dir := storetest.New(t)
	mate := store.WithIdentity(bg, "Grace Teammate", "grace@example.com")
	other, err := store.Open(mate, dir, store.Actor{Agent: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.SetEntry(mate, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "from grace\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".context", "knowledge", "k.md")
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), "author: Grace Teammate") {
		t.Fatalf("checked-out file before the hand edit: %q %v", b, err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "from grace", "edited by hand", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CommitHandEdits(bg, ""); err != nil {
		t.Fatal(err)
	}
	id, err := s.Identity(bg)
	if err != nil {
		t.Fatal(err)
	}
	got := storetest.Show(t, dir, "ctx", "knowledge/k.md")
	if !strings.Contains(got, "author: "+id.Name+" <"+id.Email+">\n") || !strings.Contains(got, "agent: "+s.Actor.Agent+"\n") ||
		strings.Contains(got, "Grace") || strings.Contains(got, "codex") || !strings.Contains(got, "edited by hand") {
		t.Fatalf("the committed hand edit does not name its committer:\n%s", got)
	}
	if edits, _ := s.HandEdits(bg); len(edits) != 0 {
		t.Fatalf("the checked-out tree does not mirror the commit: %+v", edits)
	}
}

// TestHandEditConflictReported: a hand edit of the lines a newer write changed is committed as a conflict,
// and CommitHandEdits names it (ctx commit prints it), so the user learns their edit is in the record.
func TestHandEditConflictReported(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "one\n"}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".context", "knowledge", "k.md")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "one\n", "by hand\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	other, _ := store.Open(bg, dir, store.Actor{Agent: "other"})
	if _, err := other.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k", Content: "newer write\n"}); err != nil {
		t.Fatal(err)
	}
	c, _, err := s.CommitHandEdits(bg, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Conflicts) != 1 || c.Conflicts[0].Path != "knowledge/k.md" {
		t.Fatalf("conflicts reported: %+v", c.Conflicts)
	}
	if !storetest.Files(t, dir, "ctx")["conflicts/"+c.Conflicts[0].ID+".json"] {
		t.Fatalf("the reported conflict %s has no record on the branch", c.Conflicts[0].ID)
	}
}

// TestHandEditLookalikes: keys added by hand are checked against the refs' keys and against each other,
// in path order, with one message per file naming the first key it looks like; keys that only differ
// from each other are fine.
func TestHandEditLookalikes(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "auth", Content: "x\n"}); err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(dir, ".context", "knowledge")
	for _, key := range []string{"pay-paypa1", "pay-paypal", "pay-rnoney", "pay-money", "zz-auth", "zz-ok", "zz-other"} {
		if err := os.WriteFile(filepath.Join(kdir, key+".md"), []byte(key+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(kdir, "\u0430uth.md"), []byte("cyrillic\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := storetest.Count(t, dir, "ctx")
	_, _, err := s.CommitHandEdits(bg, "hand")
	if err == nil {
		t.Fatal("look-alike keys committed")
	}
	msg := err.Error()
	for _, want := range []string{`"pay-paypal" looks like the existing knowledge "pay-paypa1"`, `"pay-rnoney" looks like the existing knowledge "pay-money"`, "\"\u0430uth\" looks like the existing knowledge \"auth\""} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not say %s:\n%s", want, msg)
		}
	}
	for _, not := range []string{`"pay-paypa1" looks`, `"pay-money" looks`, "zz-ok", "zz-other", `"zz-auth" looks`} {
		if strings.Contains(msg, not) {
			t.Errorf("error names %s:\n%s", not, msg)
		}
	}
	if storetest.Count(t, dir, "ctx") != n {
		t.Error("a commit was made")
	}
}
