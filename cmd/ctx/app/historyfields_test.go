package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestHistoryFieldsOneLine: a Codex session whose session_meta.id and cwd hold newlines
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

// TestPathsOneLine: a provider root of the environment whose path holds a newline (and a
// carriage return, a tab) is one row of ctx sources, and an import warning naming a file whose name holds
// one is one line: each is written \n, \r, \t, as the transcripts' one-line fields are.
func TestPathsOneLine(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	claude := filepath.Join(t.TempDir(), "claude\nFORGED-ROOT-LINE\r\tx")
	if err := os.MkdirAll(filepath.Join(claude, "projects", "-w"), 0o700); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","sessionId":"s1","timestamp":"2026-07-02T00:00:00Z","cwd":"/w","message":{"role":"user","content":"the quokka parser"}}` + "\n"
	if err := os.WriteFile(filepath.Join(claude, "projects", "-w", "s1.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	out, e, code := run("sources")
	if code != ExitOK || !strings.Contains(out, `claude\nFORGED-ROOT-LINE\r\tx`) {
		t.Fatalf("sources: %d %q %s", code, out, e)
	}

	// A Codex rollout that fails to import (a .zst that is no zstd stream) under a name with a newline.
	root := t.TempDir()
	bad := filepath.Join(root, "rollout-2026-07-02T00-00-00-x\nFORGED-WARNING-LINE.jsonl.zst")
	if err := os.WriteFile(bad, []byte("not a zstd stream at all, a hand edit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, e, code = run("history", "import", "--provider", "codex", "--path", root)
	if !strings.Contains(e, `x\nFORGED-WARNING-LINE`) {
		t.Fatalf("import: exit %d, no escaped warning: %q", code, e)
	}
	for _, l := range strings.Split(out+e, "\n") {
		if strings.HasPrefix(l, "FORGED") || strings.Contains(l, "\r") {
			t.Errorf("a line of the output is a path's: %q", l)
		}
	}
}
