package adapters

import (
	"context"
	"errors"
	"testing"
)

// TestBadArgument: the errors of arguments the caller got wrong match ErrBadArgument and keep their
// messages; other errors do not match it.
func TestBadArgument(t *testing.T) {
	_, err := Lookup("claude-code", "nope")
	if !errors.Is(err, ErrBadArgument) || err.Error() != `unknown client "nope": use one of `+joinNames() {
		t.Errorf("Lookup: %v", err)
	}
	opts := Options{Root: t.TempDir(), MaxBlock: 100}
	if _, err := PlanRemove(context.Background(), opts); !errors.Is(err, ErrBadArgument) {
		t.Errorf("bound 100: %v", err)
	}
	for _, c := range []struct {
		client string
		scope  HookScope
	}{{"cursor", ""}, {"gemini", HookLocal}} {
		if _, _, err := HookStatus(Options{Root: t.TempDir()}, c.client, c.scope); !errors.Is(err, ErrBadArgument) {
			t.Errorf("HookStatus(%s, %q): %v", c.client, c.scope, err)
		}
	}
	if errors.Is(ErrHandEdited, ErrBadArgument) || errors.Is(errors.New("unknown client"), ErrBadArgument) {
		t.Error("ErrBadArgument matches other errors")
	}
}

func joinNames() string {
	s := ""
	for i, n := range ClientNames() {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}
