package mcp

import (
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// TestRelativeRepoFilter: a relative repo argument of search and query_events is taken
// from the repository's top level (it matched nothing); an absolute one is kept; without a store (no work
// tree) a relative one is an invalid_request.
func TestRelativeRepoFilter(t *testing.T) {
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	wt := st.WorkTree()
	s := &srv{st: st}
	for in, want := range map[string]string{".": wt, "sub": filepath.Join(wt, "sub"), "..": filepath.Dir(wt), "/abs/x": "/abs/x", "": ""} {
		if got, err := s.indexRepo(in); err != nil || got != want {
			t.Errorf("indexRepo(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := (&srv{}).indexRepo("."); err == nil {
		t.Error("a relative repo without a work tree was taken")
	}
}
