package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestHistoryImportFailedSourceExits1: an import in which a source fails imports the others,
// prints its report, warns once per failed source naming its file once (it was "PATH: PATH: ..."), and
// exits 1, as git fetch of several remotes does when one fails (it exited 0); --json too.
func TestHistoryImportFailedSourceExits1(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	root := t.TempDir()
	good := `{"timestamp":"2026-07-02T00:00:00Z","type":"session_meta","payload":{"id":"codex-good","cwd":"/w"}}` + "\n" +
		`{"timestamp":"2026-07-02T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}` + "\n"
	bad := filepath.Join(root, "rollout-2026-07-02T00-00-01-bad.jsonl.zst")
	for p, body := range map[string]string{filepath.Join(root, "rollout-2026-07-02T00-00-00-good.jsonl"): good, bad: "not zstd at all"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, e, code := run("history", "import", "--provider", "codex", "--path", root)
	if code != ExitFailure || !strings.Contains(out, "1 imported") || !strings.Contains(out, "1 failed") ||
		strings.Count(e, bad) != 1 || !strings.Contains(e, "1 of 2 sources failed (warned above); the others were imported") {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, e)
	}
	if _, e, code := run("history", "import", "--provider", "codex", "--path", root, "--json"); code != ExitFailure || !strings.Contains(e, "1 of 2 sources failed") {
		t.Fatalf("import --json: exit %d\n%s", code, e)
	}
}
