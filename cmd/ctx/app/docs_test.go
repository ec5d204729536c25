package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/integrations"
)

// TestDocsShowMCPIntegrations: the page lists every client of the integrations table with its config
// paths, key, format and docs, and each manual snippet is byte for byte the file `ctx integrations install
// mcp` writes where none exists; an unknown page is a usage error.
func TestDocsShowMCPIntegrations(t *testing.T) {
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx"}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		return out.String(), code
	}
	text, code := run("docs", "show", "mcp-integrations")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	out, code := run("docs", "show", "mcp-integrations", "--json")
	var rows []integrationRow
	if code != ExitOK || json.Unmarshal([]byte(out), &rows) != nil {
		t.Fatalf("--json: %d %q", code, out)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Client)
	}
	if !slices.Equal(names, integrations.Clients()) || len(names) != 7 {
		t.Fatalf("clients %v, want %v", names, integrations.Clients())
	}
	for _, r := range rows {
		if !strings.Contains(text, "| "+r.Client+" | ") || !strings.Contains(text, r.Docs) || !strings.Contains(text, "\n## "+r.Client+"\n") {
			t.Errorf("%s: not on the page", r.Client)
		}
		for _, line := range strings.Split(strings.TrimRight(r.Snippet, "\n"), "\n") {
			if !strings.Contains(text, line) {
				t.Errorf("%s: snippet line %q not on the page", r.Client, line)
			}
		}
		// The snippet is what install writes into a missing file of the client's first scope.
		project, home := t.TempDir(), t.TempDir()
		scope := integrations.ScopeProject
		if r.Paths["project"] == "" {
			scope = integrations.ScopeUser
		}
		want, err := integrations.ConfigPath(r.Client, "P", "~", scope)
		if err != nil || want != r.Paths[string(scope)] {
			t.Errorf("%s: path %q, ConfigPath %q %v", r.Client, r.Paths[string(scope)], want, err)
		}
		res, err := integrations.Install(context.Background(), project, home, []string{r.Client}, scope, integrations.Server{}, false)
		if err != nil || len(res) != 1 {
			t.Fatalf("%s: install: %v %v", r.Client, res, err)
		}
		got, err := os.ReadFile(res[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != r.Snippet {
			t.Errorf("%s: install wrote\n%s\nthe page's snippet is\n%s", r.Client, got, r.Snippet)
		}
	}
	for _, bad := range [][]string{{"docs", "show", "nope"}, {"docs", "show"}, {"docs", "show", "mcp-integrations", "extra"}} {
		if _, code := run(bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}
