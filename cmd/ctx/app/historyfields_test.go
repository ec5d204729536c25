package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestHistoryFieldsOneLine (faults12 B3): a Codex session whose session_meta.id and cwd hold newlines
// (and an id of 2,000 bytes) prints each on its own line in ctx search and ctx history show session: a
// newline is written as \n, so no line of the output is the transcript's; the id is kept as its head and
// the SHA-256 of the whole (history.MaxNativeID).
func TestHistoryFieldsOneLine(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	root := t.TempDir()
	id := "forged\nFORGED-ID-LINE " + strings.Repeat("i", 2000)
	rollout := `{"timestamp":"2026-07-02T00:00:00Z","type":"session_meta","payload":{"id":"` + strings.ReplaceAll(id, "\n", `\n`) +
		`","cwd":"/w\nFORGED-CWD-LINE"}}` + "\n" +
		`{"timestamp":"2026-07-02T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"the quokka parser"}]}}` + "\n"
	if err := os.WriteFile(filepath.Join(root, "rollout-2026-07-02T00-00-00-019e1625-789d-76c0-80ab-cccccccccccc.jsonl"), []byte(rollout), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, e, code := run("history", "import", "--provider", "codex", "--path", root); code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	out, e, code := run("search", "quokka")
	if code != ExitOK || !strings.Contains(out, `forged\nFORGED-ID-LINE`) {
		t.Fatalf("search: %d %s %s", code, out, e)
	}
	show, e, code := run("history", "show", "session", "forged\nFORGED-ID-LINE iiii")
	if code != ExitOK || !strings.Contains(show, `cwd /w\nFORGED-CWD-LINE`) {
		t.Fatalf("show session: %d %s %s", code, show, e)
	}
	for _, l := range strings.Split(out+show, "\n") {
		if strings.HasPrefix(l, "FORGED") || len(l) > 1000 {
			t.Errorf("a line of the output is the transcript's, or unbounded: %.200q", l)
		}
	}
}
