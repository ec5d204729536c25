package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// otherRefs lists every ref except ctx's own (the context branch, its remote-tracking ref and
// refs/ctx/*), with their values.
func otherRefs(t *testing.T, dir string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(testenv.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		name, _, _ := strings.Cut(l, " ")
		if name == "refs/heads/ctx" || name == "refs/remotes/origin/ctx" || strings.HasPrefix(name, "refs/ctx/") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// TestEveryWriteLeavesTheUserSideAlone runs every command that writes and checks, around each one, that HEAD,
// the index file, `git status --porcelain` and every ref but ctx's own are unchanged (docs/architecture.md
// "Promises"), in a repository with staged, modified and untracked files of the user's.
func TestEveryWriteLeavesTheUserSideAlone(t *testing.T) {
	remote := testenv.BareRemote(t)
	dir := testenv.Clone(t, remote, "work")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "a.txt")
	testenv.Git(t, dir, "commit", "-qm", "a")
	testenv.Git(t, dir, "push", "-q", "origin", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("modified, unstaged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "staged.txt"), []byte("staged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "staged.txt")
	if err := os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("untracked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(skill, []byte("---\nname: deploy\ndescription: Deploy better\n---\n\n1. build\n2. test\n3. push\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cmds := [][]string{
		{"init", "--no-hooks"},
		{"knowledge", "set", "arch", "text"},
		{"convention", "set", "git", "feature branches"},
		{"decision", "add", "Use PostgreSQL", "--status", "accepted"},
		{"decision", "add", "Use SQLite"},
		{"decision", "set-status", "2", "accepted"},
		{"decision", "supersede", "1", "2"},
		{"import", filepath.Join(corpus(t), "adr", "madr")},
		{"state", "set", "current_task", "auth"},
		{"state", "set", "blockers", "spec"},
		{"session", "start", "s-1"},
		{"session", "end", "s-1", "-m", "done"},
		{"skill", "add", "deploy", "-d", "Deploy", "1. build"},
		{"skill", "rate", "deploy", "4", "fine"},
		{"skill", "usage", "deploy"},
		{"skill", "propose", "deploy", "-f", skill},
		{"activity", "check-in", "fixing", "--issue", "#1"},
		{"activity", "check-out"},
		{"team", "add", "ada"},
		{"knowledge", "scope", "arch", "private"},
		{"knowledge", "set", "scratch", "tmp", "--scope", "ephemeral"},
		{"state", "clear"},
		{"convention", "rm", "git"},
		{"push"},
		{"pull"},
		{"sync"},
	}
	for _, args := range cmds {
		before := testenv.Take(t, dir)
		refs := otherRefs(t, dir)
		run(t, dir, 0, args...)
		before.Same(t, dir)
		if got := otherRefs(t, dir); got != refs {
			t.Errorf("ctx %s moved refs of the user's:\nbefore:\n%s\nafter:\n%s", strings.Join(args, " "), refs, got)
		}
	}
	// Hand edits recorded with ctx commit leave the user's side alone too.
	if err := os.WriteFile(filepath.Join(dir, ".context", "knowledge", "hand.md"), []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := testenv.Take(t, dir)
	run(t, dir, 0, "commit", "-m", "hand")
	before.Same(t, dir)
	testenv.Git(t, dir, "fsck", "--strict", "--no-dangling")
}
