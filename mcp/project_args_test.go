package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// get_project_context's project argument: the agent cannot know the slug, so the tool's description names
// it, and the project's slug, its name, the repository's folder all name the one store served; another
// value or none is an argument error naming the slug. The input schema stays as it was.
func TestProjectArgument(t *testing.T) {
	repoIdentity(t)
	dir := filepath.Join(t.TempDir(), "work-copy")
	git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	git(t, dir, "config", "user.name", "Ada Lovelace")
	git(t, dir, "config", "user.email", "ada@example.com")
	bare := filepath.Join(t.TempDir(), "Analytical.Engine.git")
	git(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
	git(t, dir, "config", "url."+bare+".insteadOf", "https://github.com/analytical/Analytical.Engine.git")
	git(t, dir, "remote", "add", "origin", "https://github.com/analytical/Analytical.Engine.git")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# engine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README.md")
	git(t, dir, "commit", "-q", "-m", "initial")
	ctx := context.Background()
	st, err := store.Open(ctx, dir, store.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Init(ctx, store.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	s := serve(t, st, Options{}, mcpgo.LATEST_LEGACY_PROTOCOL_VERSION)

	tools, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != "get_project_context" {
			continue
		}
		if !strings.Contains(tl.Description, `pass project: "analytical-engine" (also accepted: "work-copy")`) {
			t.Errorf("description does not name the slug: %q", tl.Description)
		}
		// The input schema served stays byte for byte as it was: TestToolsListGolden.
		if tl.InputSchema.Required[0] != "project" {
			t.Errorf("input schema: %+v", tl.InputSchema)
		}
	}
	for _, p := range []string{"analytical-engine", "work-copy", "Analytical.Engine", "Analytical Engine"} {
		res := s.call(t, "get_project_context", map[string]any{"project": p})
		pc := structured(t, "get_project_context "+p, res)
		if slug := pc["project"].(map[string]any)["slug"]; slug != "analytical-engine" {
			t.Errorf("project %q: slug %v", p, slug)
		}
	}
	for _, args := range []map[string]any{{"project": "other"}, {}, {"project": "Not This One"}} {
		res := s.call(t, "get_project_context", args)
		if !res.IsError || !strings.Contains(resultText(res), "this store's project is 'analytical-engine'") {
			t.Errorf("get_project_context %v: %s; want an argument error naming the slug", args, resultText(res))
		}
	}
}
