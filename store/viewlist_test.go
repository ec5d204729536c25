package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// View.List gives the names of a folder sorted by name, once each with the scope that wins, both when one
// scope holds the folder (git's tree order, where a folder "a" sorts as "a/", after "a.md") and when
// several do.
func TestViewListOrderAndScopes(t *testing.T) {
	ctx := context.Background()
	s, _ := storetest.New(t)
	put := func(edits map[string]store.Scope) {
		t.Helper()
		if _, err := s.Write(ctx, store.Op{Name: "t", Summary: "t"}, func(v *store.View) (store.Edits, error) {
			ed := store.Edits{}
			for p, sc := range edits {
				ed.Put(sc, p, []byte("x\n"))
			}
			return ed, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(view func(context.Context) (*store.View, error)) []store.Listed {
		t.Helper()
		v, err := view(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.List(ctx, "knowledge")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	put(map[string]store.Scope{"knowledge/a.md": store.Public, "knowledge/a-b.md": store.Public, "knowledge/a/x.md": store.Public, "knowledge/b.md": store.Public})
	want := []store.Listed{{Name: "a", Dir: true, Scope: store.Public}, {Name: "a-b.md", Scope: store.Public},
		{Name: "a.md", Scope: store.Public}, {Name: "b.md", Scope: store.Public}}
	if got := list(s.RefView); !reflect.DeepEqual(got, want) {
		t.Errorf("refs, one scope: %+v\nwant %+v", got, want)
	}
	// The checked-out tree holds the entries' files (a folder below knowledge/ is not an entry).
	if got := list(s.CheckoutView); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("checkout, one scope: %+v\nwant %+v", got, want[1:])
	}
	put(map[string]store.Scope{"knowledge/b.md": store.Private, "knowledge/c.md": store.Private})
	want = []store.Listed{{Name: "a", Dir: true, Scope: store.Public}, {Name: "a-b.md", Scope: store.Public},
		{Name: "a.md", Scope: store.Public}, {Name: "b.md", Scope: store.Private}, {Name: "c.md", Scope: store.Private}}
	got := list(s.RefView)
	// b.md is in both scopes (public from the first write, private from the second): the private one wins.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("refs, two scopes: %+v\nwant %+v", got, want)
	}
}
