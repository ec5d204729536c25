package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// A hand edit of an entry's "scope:" does not move it: ctx commit refuses it and says how to move the
// entry, so that a file labelled private is never published on the public branch. An invalid scope is
// refused the same way; an edit that keeps the scope commits.
func TestHandEditOfScopeRefused(t *testing.T) {
	s, dir := storetest.New(t)
	mustSet(t, s, "pubk", "public text\n")
	file := filepath.Join(dir, store.CheckoutDir, "knowledge", "pubk.md")
	orig, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(orig), "scope: public") {
		t.Fatalf("entry file: %q, %v", orig, err)
	}
	tip, _ := s.Tips(bg)
	for value, advice := range map[string]string{
		"private": "ctx knowledge scope pubk private",
		"galaxy":  "put back scope: public",
	} {
		edited := strings.Replace(string(orig), "scope: public", "scope: "+value, 1) + "more\n"
		if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.CommitHandEdits(bg, "")
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "scope: "+value) || !strings.Contains(err.Error(), advice) {
			t.Errorf("scope: %s edited by hand: %v", value, err)
		}
		if now, _ := s.Tips(bg); now[store.Public] != tip[store.Public] {
			t.Fatalf("scope: %s: the refused edit was committed", value)
		}
	}
	if err := os.WriteFile(file, append(orig, "more\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _, err := s.CommitHandEdits(bg, ""); err != nil || c == nil {
		t.Fatalf("an edit that keeps the scope: %v", err)
	}
}
