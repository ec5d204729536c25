package tokens

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestAddVerifyRevoke(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := Open(dir)
	tok, rec, err := s.Add(ctx, Spec{Member: "Ada Lovelace", Email: "ada@example.com", Agent: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "ctx_"+rec.ID+"_") {
		t.Fatalf("token %q does not carry id %s", tok, rec.ID)
	}
	// only the hash is stored
	b, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), tok) || strings.Contains(string(b), tok[len("ctx_"+rec.ID+"_"):]) {
		t.Fatalf("the token file holds the token itself:\n%s", b)
	}
	if fi, _ := os.Stat(s.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	// a second process sees it
	got, err := Open(dir).Verify(ctx, tok)
	if err != nil || got.Member != "Ada Lovelace" || got.Agent != "claude-code" {
		t.Fatalf("Verify = %+v, %v", got, err)
	}
	// a token with the right id but another secret; a malformed one
	last := "A"
	if strings.HasSuffix(tok, "A") {
		last = "B"
	}
	forged := tok[:len(tok)-1] + last
	if _, err := s.Verify(ctx, forged); !errors.Is(err, ErrUnknown) {
		t.Errorf("forged token: %v, want ErrUnknown", err)
	}
	if _, err := s.Verify(ctx, "Bearer "+tok); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed token: %v, want ErrMalformed", err)
	}
	// revoked in another process: refused at once
	if _, err := Open(dir).Revoke(ctx, rec.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(ctx, tok); !errors.Is(err, ErrUnknown) {
		t.Errorf("revoked token: %v, want ErrUnknown", err)
	}
	if _, err := s.Revoke(ctx, rec.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second revoke: %v, want ErrNotFound", err)
	}
}

func TestExpiredAndRevokeByMember(t *testing.T) {
	ctx := context.Background()
	s := Open(t.TempDir())
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	tok, _, err := s.Add(ctx, Spec{Member: "bob", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(ctx, tok); err != nil {
		t.Fatalf("fresh token: %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := s.Verify(ctx, tok); !errors.Is(err, ErrExpired) {
		t.Errorf("expired token: %v, want ErrExpired", err)
	}
	if _, _, err := s.Add(ctx, Spec{Member: "bob"}); err != nil {
		t.Fatal(err)
	}
	other, _, err := s.Add(ctx, Spec{Member: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := s.Revoke(ctx, "bob")
	if err != nil || len(gone) != 2 {
		t.Fatalf("Revoke(bob) = %d tokens, %v; want 2", len(gone), err)
	}
	if _, err := s.Verify(ctx, other); err != nil {
		t.Errorf("carol's token after bob's revoke: %v", err)
	}
	if _, _, err := s.Add(ctx, Spec{Member: "eve <evil@x>"}); err == nil {
		t.Error("a member with '<' was accepted")
	}
}
