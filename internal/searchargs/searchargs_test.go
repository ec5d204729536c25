package searchargs

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseShapes: the command lines the search program reads, with their requests, and the ones it
// leaves to ctx-full (each differs from an accepted one by one argument).
func TestParseShapes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want Request
	}{
		{[]string{"search", "README"}, Request{Words: []string{"README"}, Limit: 20, Scope: "all"}},
		{[]string{"history", "search", "--json", "git", "commit"}, Request{Words: []string{"git", "commit"}, JSON: true, Limit: 20, Scope: "all"}},
		{[]string{"-C", "../repo", "search", "--limit", "100", "--scope", "calls", "x"}, Request{Dir: "../repo", Words: []string{"x"}, Limit: 100, Scope: "calls"}},
		{[]string{"search", "--provider", "codex", "--provider", "cursor", "--primary-only", "x"},
			Request{Words: []string{"x"}, Limit: 20, Scope: "all", Providers: []string{"codex", "cursor"}, PrimaryOnly: true}},
	} {
		got, ok := Parse(c.args)
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.args, got, ok, c.want)
		}
	}
	for _, args := range [][]string{
		{}, {"search"}, {"history"}, {"history", "search"}, {"knowledge", "search", "x"}, {"search", "--json"},
		{"-C", "", "search", "x"}, {"-C", "a", "-C", "b", "search", "x"}, {"--agent", "a", "search", "x"},
		{"search", "--limit", "0", "x"}, {"search", "--limit", "101", "x"}, {"search", "--limit", "010", "x"},
		{"search", "--limit", "0x10", "x"}, {"search", "--limit=5", "x"}, {"search", "--limit"},
		{"search", "--scope", "everything", "x"}, {"search", "--type", "message", "x"}, {"search", "--provider", "ctx", "x"},
		{"search", "--provider", "codex", "--provider", "codex", "x"}, {"search", "--json", "--json", "x"},
		{"search", "--events", "x"}, {"search", "--since", "2025-01-01", "x"}, {"search", "--file", "a.go", "x"},
		{"search", "--index", "/tmp/i", "x"}, {"search", "-json", "x"}, {"search", "--", "x"}, {"search", "x", "--json"},
		{"search", "help"}, {"search", "h"}, {"search", "x", "help"}, {"search", "--help"}, {"search", "-h", "x"},
		{"search", ""}, {"search", " ", "\t"}, {"search", "\xff"}, {"search", strings.Repeat("é", 257)},
	} {
		if r, ok := Parse(args); ok {
			t.Errorf("Parse(%q) = %+v, accepted; want ctx-full's", args, r)
		}
	}
	if _, ok := Parse([]string{"search", strings.Repeat("é", 256)}); !ok {
		t.Error("a query of 256 characters (512 bytes) is the tool's bound, not past it")
	}
}

// TestArgs: the tool's arguments as ctx-full's unifiedArgs makes them for one page.
func TestArgs(t *testing.T) {
	r, _ := Parse([]string{"search", "--provider", "codex", "--primary-only", "--limit", "5", "a", "b"})
	want := map[string]any{"query": "a b", "limit": 5, "content_scope": "all", "providers": []any{"codex"}, "primary_only": true}
	if got := r.Args(); !reflect.DeepEqual(got, want) {
		t.Errorf("Args = %v, want %v", got, want)
	}
}
