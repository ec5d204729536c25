package adapters

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestTwoClonesRefresh: a teammate adds a convention and a skill and pushes; `git pull && ctx pull` in
// the other clone, then the refresh, brings CLAUDE.md's managed block and .claude/skills/ in step; the
// user's own text and skill folder are untouched, and git status shows only the files of the client the
// user enabled. A CLAUDE.md git tracks is left alone (status says stale) until the user says --tracked
// ok.
func TestTwoClonesRefresh(t *testing.T) {
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, "", "init", "-q", "--bare", remote)
	a := storetest.Repo(t)
	testenv.Git(t, a, "remote", "add", "origin", remote)
	testenv.Git(t, a, "push", "-q", "origin", "main")
	sa := storetest.Open(t, a, store.Actor{Agent: "a", Machine: "machine-a"})
	if _, err := sa.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "git", Content: "Always use feature branches.\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}

	b := filepath.Join(t.TempDir(), "b")
	testenv.Git(t, "", "clone", "-q", remote, b)
	testenv.Git(t, b, "config", "user.name", "Bo")
	testenv.Git(t, b, "config", "user.email", "bo@example.com")
	sb, err := store.Open(ctx, b, store.Actor{Agent: "b", Machine: "machine-b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(ctx, store.PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	userText := "# Bo's notes\r\n\r\nRun make test before pushing.\r\n"
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(b, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) string {
		t.Helper()
		bs, err := os.ReadFile(filepath.Join(b, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		return string(bs)
	}
	write("CLAUDE.md", userText)
	ownSkill := "---\nname: bos-own\ndescription: Bo's own skill\n---\nmine\n"
	write(".claude/skills/bos-own/SKILL.md", ownSkill)

	opts, err := OptionsFor(ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetEnabled(opts, true, "claude-code"); err != nil {
		t.Fatal(err)
	}
	if _, err := Refresh(ctx, sb, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read("CLAUDE.md"), "Always use feature branches.") {
		t.Fatal("first refresh did not export")
	}

	// The teammate adds a convention and a skill, and pushes.
	if _, err := sa.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "tests", Content: "Every fix gets a regression test.\n"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sa.AddSkill(ctx, "release", "Cut a release", "1. Tag.\n", store.Public); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}

	testenv.Git(t, b, "pull", "-q", "origin", "main")
	if _, err := sb.Pull(ctx, store.PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Refresh(ctx, sb, opts); err != nil {
		t.Fatal(err)
	}
	claude := read("CLAUDE.md")
	if !strings.HasPrefix(claude, userText) || !strings.Contains(claude, "Every fix gets a regression test.") {
		t.Fatalf("CLAUDE.md after the refresh:\n%s", claude)
	}
	va, _ := sa.RefView(ctx)
	sk, _ := va.GetSkill(ctx, "release")
	if read(".claude/skills/release/SKILL.md") != sk.Content {
		t.Fatal(".claude/skills/release/SKILL.md is not the branch's")
	}
	if read(".claude/skills/bos-own/SKILL.md") != ownSkill {
		t.Fatal("the user's own skill folder changed")
	}
	status := strings.Split(testenv.Git(t, b, "status", "--porcelain", "--untracked-files=all"), "\n")
	sort.Strings(status)
	want := []string{"?? .claude/skills/bos-own/SKILL.md", "?? .claude/skills/release/SKILL.md", "?? CLAUDE.md"}
	if strings.Join(status, "\n") != strings.Join(want, "\n") {
		t.Fatalf("git status:\n%s\nwant:\n%s", strings.Join(status, "\n"), strings.Join(want, "\n"))
	}

	// Once CLAUDE.md is tracked, a refresh leaves it and status reports it, until --tracked ok.
	testenv.Git(t, b, "add", "CLAUDE.md")
	testenv.Git(t, b, "commit", "-q", "-m", "notes")
	if _, err := sa.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "docs", Content: "Docs in docs/.\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(ctx, store.PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if opts, err = OptionsFor(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if _, err := Refresh(ctx, sb, opts); err != nil {
		t.Fatal(err)
	}
	if out := testenv.Git(t, b, "status", "--porcelain", "--", "CLAUDE.md"); out != "" {
		t.Fatalf("refresh dirtied a tracked file: %s", out)
	}
	c, err := Load(ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Status(ctx, opts, c, "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	var claudeState FileState
	for _, f := range st[0].Files {
		if f.Path == "CLAUDE.md" {
			claudeState = f
		}
	}
	if st[0].State != Stale || claudeState.State != Stale || !claudeState.Tracked {
		t.Fatalf("status of a skipped tracked file: %+v", st[0])
	}
	if err := SetTrackedOK(opts, true); err != nil {
		t.Fatal(err)
	}
	if _, err := Refresh(ctx, sb, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read("CLAUDE.md"), "Docs in docs/.") {
		t.Fatal("--tracked ok did not let the refresh write CLAUDE.md")
	}
}
