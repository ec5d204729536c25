package store_test

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestNamedFew: a long list in a message names its first few and how many more, one way for ctx status
// and the store's errors.
func TestNamedFew(t *testing.T) {
	paths := []string{"knowledge/a.md", "knowledge/b.md", "knowledge/c.md", "knowledge/d.md", "knowledge/e.md"}
	for _, c := range []struct {
		n    int
		want string
	}{{5, strings.Join(paths, ", ")}, {9, strings.Join(paths, ", ")}, {3, "knowledge/a.md, knowledge/b.md, knowledge/c.md and 2 more"}} {
		if got := store.NamedFew(paths, c.n); got != c.want {
			t.Errorf("NamedFew(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	msg := (&store.CheckoutBlockedError{Dir: ".context/knowledge", Paths: paths}).Error()
	if !strings.Contains(msg, "(knowledge/a.md, knowledge/b.md, knowledge/c.md and 2 more)") {
		t.Errorf("CheckoutBlockedError: %s", msg)
	}
}
