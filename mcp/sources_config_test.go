package mcp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
)

// TestAgentHistoryConfiguredSources: roots configured for the repository (ctx history sources add) are
// listed by sources as configured with their root and group, and search's source_roots and
// source_groups select their sessions (one OR set, the context store left out), each root its
// provider's only; an unknown name is an invalid_request that does not echo it.
func TestAgentHistoryConfiguredSources(t *testing.T) {
	e := corpusServer(t)
	corpus := corpusDir(t)
	cfg := e.st.Config()
	cfg.HistorySources = []store.HistorySource{
		{Root: "codex-main", Provider: "codex", Path: filepath.Join(corpus, "codex"), Group: "team"},
		{Root: "cur", Provider: "cursor", Path: filepath.Join(corpus, "cursor"), Group: "team"},
		{Root: "claude", Provider: "claude-code", Path: filepath.Join(corpus, "claude-code")},
		{Root: "gone", Provider: "gemini-cli", Path: filepath.Join(t.TempDir(), "missing")},
		// A root is {provider, path}: the Claude Code sessions in its folder are not this codex root's
		// (it counted and selected them).
		{Root: "codex-on-claude", Provider: "codex", Path: filepath.Join(corpus, "claude-code")},
	}
	// ctx history sources add runs in another process: another Store of the repository writes the config
	// (the server's own Store is in use by its goroutines), and the server reads it from disk.
	other, err := store.Open(context.Background(), e.dir, store.Actor{Machine: "testbox"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	s := e.s
	setEntry(t, e.st, store.KnowledgeKind, "tests", "# Tests\nThe test suite runs the parser tests.\n")

	res := structured(t, "sources", s.call(t, "sources", nil))
	got := map[string]string{}
	for _, r := range list(res, "sources") {
		sel := obj(obj(r)["selection"])
		if sel["kind"] != "configured" {
			if sel["root"] != nil || sel["group"] != nil {
				t.Errorf("automatic row %v", r)
			}
			continue
		}
		got[fmt.Sprint(sel["root"])] = fmt.Sprintf("%v %v %v %v", obj(r)["provider"], sel["group"], obj(r)["indexed_sessions"], obj(r)["exists"])
	}
	want := map[string]string{"codex-main": "codex team 6 true", "cur": "cursor team 3 true", "claude": "claude-code <nil> 9 true", "gone": "gemini-cli <nil> 0 false",
		"codex-on-claude": "codex <nil> 0 true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("configured rows %v, want %v", got, want)
	}
	if !strings.Contains(fmt.Sprint(res["issues"]), "configured root gone") {
		t.Errorf("issues = %v", res["issues"])
	}

	providers := func(args map[string]any) map[string]int {
		t.Helper()
		args["query"], args["limit"] = "the", 100
		res := structured(t, "search", s.call(t, "search", args))
		n := map[string]int{}
		for _, h := range list(res, "results") {
			n[fmt.Sprint(obj(h)["provider"])]++
		}
		return n
	}
	all := providers(map[string]any{})
	if all["ctx"] == 0 || all["gemini-cli"] == 0 {
		t.Fatalf("unselected search: %v", all)
	}
	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"source_roots": []any{"cur"}}, []string{"cursor"}},
		{map[string]any{"source_groups": []any{"team"}}, []string{"codex", "cursor"}},
		{map[string]any{"source_roots": []any{"claude"}, "source_groups": []any{"team"}}, []string{"claude-code", "codex", "cursor"}},
		{map[string]any{"source_roots": []any{"claude"}, "providers": []any{"codex"}}, nil},
		{map[string]any{"source_roots": []any{"codex-on-claude"}}, nil},
		{map[string]any{"source_roots": []any{"codex-on-claude", "cur"}}, []string{"cursor"}},
	} {
		n := providers(c.args)
		var names []string
		for p := range n {
			names = append(names, p)
		}
		if len(names) != len(c.want) {
			t.Errorf("%v: providers %v, want %v", c.args, n, c.want)
			continue
		}
		for _, p := range c.want {
			if n[p] == 0 {
				t.Errorf("%v: providers %v, want %v", c.args, n, c.want)
			}
		}
	}
	res = structured(t, "filters", s.call(t, "search", map[string]any{"query": "the", "source_groups": []any{"team"}}))
	if fmt.Sprint(obj(res["filters"])["source_groups"]) != "[team]" {
		t.Errorf("filters = %v", res["filters"])
	}
	for _, bad := range []map[string]any{
		{"source_roots": []any{"nowhere-root"}},
		{"source_groups": []any{"cur"}}, // a root's name is not a group
		{"source_roots": []any{"../etc"}},
		{"source_roots": []any{strings.Repeat("r", 65)}},
	} {
		bad["query"] = "the"
		r := s.call(t, "search", bad)
		if code := errorCode(t, "bad selector", r); code != "invalid_request" {
			t.Errorf("%v: %s", bad, code)
		}
		if txt := fmt.Sprint(r); strings.Contains(txt, "nowhere-root") || strings.Contains(txt, "../etc") {
			t.Errorf("%v: the error echoes the name: %s", bad, txt)
		}
	}
}

// TestActivityOfNames: activity.invocation names the tool without the provider's prefix: Claude's
// mcp__<server>__<tool>, Codex's <server>__<tool>; a call without protocol mcp has no activity.
func TestActivityOfNames(t *testing.T) {
	for _, c := range []struct {
		tool     history.Tool
		want     string
		activity bool
	}{
		{history.Tool{Name: "mcp__github__create_issue", Protocol: "mcp", Server: "github"}, "create_issue", true},
		{history.Tool{Name: "github__create_issue", Protocol: "mcp", Server: "github"}, "create_issue", true},
		{history.Tool{Name: "create_issue", Protocol: "mcp", Server: "github"}, "create_issue", true},
		{history.Tool{Name: "github__create_issue"}, "", false},
	} {
		tl := c.tool
		a := activityOf(&history.Event{Tool: &tl})
		if (a != nil) != c.activity || a != nil && (a.Invocation.Tool != c.want || a.Invocation.Server != "github" || a.Invocation.Protocol != "mcp") {
			t.Errorf("%+v: %+v", c.tool, a)
		}
	}
}
