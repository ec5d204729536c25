package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// fakeGitHubToken is a token of GitHub's ghp_ shape, built at run time so that no source file holds one.
func fakeGitHubToken() string { return "ghp_" + strings.Repeat("Zq7Xv9Kp2M", 4)[:36] }

// TestPublicWriteWithSecretRefused: every public write path (an entry, a decision, state, a session, a
// skill, a scope move to public) refuses text that looks like a secret and writes nothing; private and
// ephemeral writes and AllowSecrets pass; a secret already in a file does not block its other edits.
func TestPublicWriteWithSecretRefused(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	tok := fakeGitHubToken()
	before := storetest.Count(t, dir, "ctx")
	refused := func(what string, err error) {
		t.Helper()
		var se *store.SecretError
		if !errors.Is(err, store.ErrSecret) || !errors.Is(err, store.ErrInvalid) || !errors.As(err, &se) {
			t.Fatalf("%s: err = %v, want a SecretError", what, err)
		}
		if strings.Contains(err.Error(), tok) || !strings.Contains(err.Error(), "github-pat") {
			t.Errorf("%s: message %q must name the rule and not show the token", what, err)
		}
		if n := storetest.Count(t, dir, "ctx"); n != before {
			t.Fatalf("%s: the public branch moved (%d -> %d commits)", what, before, n)
		}
	}
	_, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "ci", Content: "token " + tok + "\n"})
	refused("knowledge", err)
	_, _, err = s.AddDecision(ctx, store.NewDecision{Title: "Use CI", Context: "the bot uses " + tok})
	refused("decision", err)
	task := "rotate " + tok
	_, _, err = s.UpdateState(ctx, store.StatePatch{CurrentTask: &task})
	refused("state", err)
	_, _, err = s.StartSession(ctx, store.SessionUpdate{ID: "s-1", Summary: "pasted " + tok})
	refused("session", err)
	_, _, err = s.AddSkill(ctx, "deploy", "deploys", "export GH_TOKEN="+tok+"\n", store.Public)
	refused("skill", err)

	// private and ephemeral: allowed, never pushed
	if _, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "ci", Content: "token " + tok + "\n", Scope: store.Private}); err != nil {
		t.Fatalf("private write refused: %v", err)
	}
	if _, err := s.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "ci", Content: "token " + tok + "\n", Scope: store.Ephemeral}); err != nil {
		t.Fatalf("ephemeral write refused: %v", err)
	}
	// moving it to public is a public write
	_, err = s.SetScope(ctx, "knowledge", "ci", store.Public)
	refused("scope move", err)

	// allowed explicitly
	if _, err := s.SetEntry(store.AllowSecrets(ctx), store.KnowledgeKind, store.SetEntry{Key: "bot", Content: "token " + tok + "\n"}); err != nil {
		t.Fatalf("AllowSecrets: %v", err)
	}
	before = storetest.Count(t, dir, "ctx")
	// the token already there does not block another edit of the file, a new one does
	if _, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "bot", Content: "token " + tok + "\nand a note\n"}); err != nil {
		t.Fatalf("edit of a file with an allowed secret: %v", err)
	}
	before = storetest.Count(t, dir, "ctx")
	_, err = s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "bot", Content: "token " + tok + "\nand " + strings.Replace(tok, "Zq", "Yw", 1) + "\n"})
	refused("second token", err)
}
