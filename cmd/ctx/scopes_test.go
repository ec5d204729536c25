package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestPrivateAndEphemeralNeverPushed writes private and ephemeral entries of every kind that has a scope
// (knowledge, convention, decision, skill; also one moved between them), pushes, and proves that no
// object of theirs reaches the remote: `git cat-file --batch-all-objects --batch` on the remote holds none
// of their contents, and the remote has no ref of theirs (docs/format.md, docs/security.md).
func TestPrivateAndEphemeralNeverPushed(t *testing.T) {
	remote := testenv.BareRemote(t)
	a := testenv.Clone(t, remote, "a")
	run(t, a, 0, "init", "--no-hooks")
	run(t, a, 0, "knowledge", "set", "shared", "PUBLIC-MARKER-knowledge")
	secrets := []string{}
	for _, sc := range []string{"private", "ephemeral"} {
		m := func(kind string) string {
			s := "SECRET-" + sc + "-" + kind + "-7f3a"
			secrets = append(secrets, s)
			return s
		}
		run(t, a, 0, "knowledge", "set", sc+"-note", m("knowledge"), "--scope", sc)
		run(t, a, 0, "convention", "set", sc+"-conv", m("convention"), "--scope", sc)
		run(t, a, 0, "decision", "add", m("decision-title"), "--context", m("decision-context"), "--scope", sc)
		run(t, a, 0, "skill", "add", sc+"-skill", "-d", m("skill-description"), m("skill-body"), "--scope", sc)
		// Moved between the two local scopes. (An entry moved out of public keeps its earlier versions in
		// the branch's history, as in git; ctx scope warns about it.)
		other := map[string]string{"private": "ephemeral", "ephemeral": "private"}[sc]
		run(t, a, 0, "knowledge", "set", sc+"-moved", m("moved"), "--scope", other)
		run(t, a, 0, "knowledge", "scope", sc+"-moved", sc)
	}
	// Lists show every scope, with the scope field.
	list := run(t, a, 0, "knowledge", "list", "--json")
	for _, want := range []string{`"scope": "private"`, `"scope": "ephemeral"`, `"scope": "public"`} {
		if !strings.Contains(list, want) {
			t.Errorf("knowledge list lacks %s", want)
		}
	}
	// The export (the onboarding text) shows public entries only.
	export := run(t, a, 0, "export")
	if !strings.Contains(export, "shared") || strings.Contains(export, "SECRET-") {
		t.Errorf("ctx export must show the public entry and no private or ephemeral one:\n%s", export)
	}
	out := filepath.Join(t.TempDir(), "AGENTS.md")
	run(t, a, 0, "export", "-o", out)
	if b, err := os.ReadFile(out); err != nil || string(b) != export {
		t.Errorf("ctx export -o: %v", err)
	}
	run(t, a, 0, "push")
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = remote
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(all), "PUBLIC-MARKER-knowledge") {
		t.Fatalf("the public entry did not reach the remote: the check would prove nothing")
	}
	for _, s := range secrets {
		if strings.Contains(string(all), s) {
			t.Errorf("the remote holds %q", s)
		}
	}
	// The remote has the branch and this machine's ref (docs/sync.md), none of ctx's local refs.
	for _, ref := range strings.Fields(testenv.Git(t, remote, "for-each-ref", "--format=%(refname)", "refs/ctx/")) {
		if !strings.HasPrefix(ref, "refs/ctx/machines/") {
			t.Errorf("the remote has ctx's local ref %s", ref)
		}
	}
	// A teammate sees only the public entries.
	b := testenv.Clone(t, remote, "b")
	run(t, b, 0, "pull")
	if got := run(t, b, 0, "knowledge", "list", "--json"); strings.Contains(got, "SECRET-") {
		t.Errorf("a teammate sees private entries:\n%s", got)
	}
	// ctx state clear empties the ephemeral scope.
	run(t, a, 0, "state", "clear")
	if out := testenv.Git(t, a, append(storetest.RefArgs(t, a, store.RefEphemeral), "ls-tree", "-r", "--name-only", store.RefEphemeral)...); strings.TrimSpace(out) != "" {
		t.Errorf("ephemeral ref still holds:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(a, ".context", "knowledge", "ephemeral-note.md")); err == nil {
		t.Errorf(".context/ still shows the ephemeral entry")
	}
}
