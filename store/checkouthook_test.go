package store_test

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// The hooks read the refs' values and HEAD in process (docs/hooks.md): what they read must be what the
// shim's git prints, byte for byte, or the stamp would never match (or match a state it does not hold).
func TestHookLocalMatchesGit(t *testing.T) {
	s, dir := storetest.New(t)
	// A private entry: refs/ctx/private lives in the local-only store, which git's for-each-ref does not see.
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "p", Content: "private\n", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
	head := testenv.Git(t, dir, "rev-parse", "HEAD")
	// Names that sort differently as "REF=OID" strings than as ref names, a packed ref and a missing one.
	testenv.Git(t, dir, "update-ref", "refs/ctx/x2", head)
	testenv.Git(t, dir, "update-ref", "refs/ctx/x", head)
	testenv.Git(t, dir, "pack-refs", "--all")
	testenv.Git(t, dir, "update-ref", "refs/ctx/x", "HEAD~0")
	refs := append(s.Refs(), "refs/ctx/x2", "refs/ctx/missing", "refs/ctx/x")
	got, err := s.RefValues(bg, refs)
	if err != nil {
		t.Fatal(err)
	}
	want := testenv.Git(t, dir, append([]string{"for-each-ref", "--format=%(refname)=%(objectname)"}, refs...)...)
	if strings.Join(got, "\n") != strings.TrimSpace(want) {
		t.Errorf("RefValues = %q, git for-each-ref printed %q", got, want)
	}
	for _, detach := range []bool{false, true} {
		if detach {
			testenv.Git(t, dir, "checkout", "-q", "--detach")
		}
		h, err := s.Head(bg)
		if want := testenv.Git(t, dir, "rev-parse", "--symbolic-full-name", "HEAD"); err != nil || h != strings.TrimSpace(want) {
			t.Errorf("detached %v: Head = %q, %v; git printed %q", detach, h, err, want)
		}
	}
	if p, want := s.GitPath("ctx-hook-stamp"), testenv.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "ctx-hook-stamp"); p != strings.TrimSpace(want) {
		t.Errorf("GitPath = %q, git printed %q", p, want)
	}
}
