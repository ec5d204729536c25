package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestHistoryRelativeRepo: --repo . (and .., ./) is taken from the directory ctx runs in,
// as --file is; it matched nothing before.
func TestHistoryRelativeRepo(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_DATA_HOME", "CURSOR_DATA_DIR", "COPILOT_HOME"} {
		t.Setenv(v, "")
	}
	dir := testenv.NewRepo(t)
	d := filepath.Join(home, ".claude", "projects", "-x")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf(`{"type":"user","timestamp":"2026-11-01T00:00:00Z","sessionId":"s1","cwd":%q,"uuid":"r1","message":{"role":"user","content":"repofiltertest"}}`+"\n", dir)
	if err := os.WriteFile(filepath.Join(d, "s1.jsonl"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := runIn(dir)
	if _, e, code := run("history", "import"); code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	sub := func(args ...string) (string, string, int) { return runIn(filepath.Join(dir, "sub"))(args...) }
	for _, c := range []struct {
		run  func(...string) (string, string, int)
		repo string
	}{{run, "."}, {run, "./"}, {sub, ".."}, {run, dir}} {
		out, e, code := c.run("history", "list", "events", "--repo", c.repo)
		if code != ExitOK || strings.Count(out, "repofiltertest") != 1 {
			t.Errorf("list events --repo %s: exit %d, %q %s", c.repo, code, out, e)
		}
		out, e, code = c.run("history", "search", "repofiltertest", "--repo", c.repo, "--json")
		if code != ExitOK || !strings.Contains(out, `"ctx_event_id"`) {
			t.Errorf("search --repo %s: exit %d, %q %s", c.repo, code, out, e)
		}
	}
	if out, _, _ := sub("history", "list", "events", "--repo", "."); strings.Contains(out, "repofiltertest") {
		t.Errorf("--repo . from sub/ matched the session of the repository's top: %q", out)
	}
}
