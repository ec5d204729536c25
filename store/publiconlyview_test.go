package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestPublicCheckoutViewHiddenOnce: the public-only reads of one checkout record (every MCP read over
// HTTP) share the paths they read from the public ref instead of making them again from the record's
// scopes each time; a new record makes them anew.
func TestPublicCheckoutViewHiddenOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := storetest.New(t)
	if _, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Mine", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
	pub := store.WithPublicOnly(ctx)
	hidden := func() map[string]bool {
		t.Helper()
		v, err := s.CheckoutView(pub)
		if err != nil {
			t.Fatal(err)
		}
		h := v.HiddenPaths()
		if len(h) == 0 {
			t.Fatalf("public-only view hides nothing of the private decision")
		}
		return h
	}
	first, second := hidden(), hidden()
	if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(second).UnsafePointer() {
		t.Errorf("two public-only reads of one record made the hidden paths twice")
	}
	if _, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Mine too", Scope: store.Ephemeral}); err != nil {
		t.Fatal(err)
	}
	third := hidden()
	if reflect.ValueOf(third).UnsafePointer() == reflect.ValueOf(first).UnsafePointer() || len(third) != len(first)+1 {
		t.Errorf("after a write the hidden paths are %v, want the new record's (%d paths)", third, len(first)+1)
	}
}
