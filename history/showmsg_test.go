package history

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestShowIDMessages: an event id that is no ctx id's form says what is wrong (not "not found"); a
// session's id given as an event's points to the session; a native id two providers share says how many
// sessions of which providers have it (docs/history.md "Identity").
func TestShowIDMessages(t *testing.T) {
	root := t.TempDir()
	ix := openTestIndex(t)
	a := writeClaude(t, root, "-a", "shared-native", rec("m1", "user", "/r", `"hello"`))
	b := writeClaude(t, t.TempDir(), "-b", "shared-native", rec("m1", "user", "/r", `"hello"`))
	b.Provider = Cursor
	ctx := context.Background()
	if _, err := ix.Import(ctx, []Source{a}); err != nil {
		t.Fatal(err)
	}
	s, err := ix.Session(ctx, "shared-native")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ix.Event(ctx, s.ID, 0)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "show session "+s.ID) {
		t.Errorf("a session id as an event's: %v", err)
	}
	_, _, err = ix.Event(ctx, "--------", 0)
	if !errors.Is(err, ErrInvalidID) || strings.HasSuffix(err.Error(), "not found") || !strings.Contains(err.Error(), "not a ctx id") {
		t.Errorf("a malformed id: %v", err)
	}
	if _, err := ix.Import(ctx, []Source{b}); err != nil {
		t.Fatal(err)
	}
	_, err = ix.Session(ctx, "shared-native")
	if !errors.Is(err, ErrAmbiguous) || strings.Contains(err.Error(), "prefix") || !strings.Contains(err.Error(), "2 sessions of providers") ||
		!strings.Contains(err.Error(), "claude-code") || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("a native id of two providers: %v", err)
	}
}
