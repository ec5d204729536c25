package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// indexStats opens the index in dir and returns its counts.
func indexStats(t *testing.T, dir string) history.Stats {
	t.Helper()
	ix, err := history.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestImportWrongProvider: `ctx history import --provider P --path DIR` where DIR holds another
// provider's transcripts imports nothing (no empty session) and says DIR holds no P sessions, a usage
// error (exit 2); a file of another format among P's files is left out with a warning, the rest import;
// the right provider imports as before (docs/history.md "Commands").
func TestImportWrongProvider(t *testing.T) {
	corpus := historyCorpus(t)
	run := runIn(testenv.NewRepo(t))
	for _, c := range []struct{ provider, dir string }{
		{"gemini-cli", "codex"}, {"claude-code", "codex"}, {"cursor", "codex"}, {"copilot-cli", "codex"},
		{"codex", "claude-code"}, {"copilot-cli", "claude-code"}, {"claude-code", "gemini-cli"},
		{"codex", "cursor"}, {"gemini-cli", "copilot-cli"}, {"gemini-cli", "opencode"}, {"opencode", "codex"},
	} {
		idx := t.TempDir()
		out, e, code := run("history", "import", "--index", idx, "--provider", c.provider, "--path", filepath.Join(corpus, c.dir), "--json")
		if code != ExitUsage || out != "" || !strings.Contains(e, "holds no "+c.provider+" sessions") {
			t.Errorf("%s on %s: exit %d, stdout %.200q, stderr %q", c.provider, c.dir, code, out, e)
		}
		if st := indexStats(t, idx); st.Sessions != 0 || st.Sources != 0 || st.Events != 0 {
			t.Errorf("%s on %s: the index holds %+v", c.provider, c.dir, st)
		}
	}

	// Codex's files with a Claude Code transcript among them: the Claude file is left out, with a warning.
	mixed := t.TempDir()
	codexDir := filepath.Join(corpus, "codex")
	var want int
	err := filepath.WalkDir(codexDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(codexDir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		want++
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mixed, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(mixed, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	claude, err := os.ReadFile(filepath.Join(corpus, "claude-code", "claude-code-transcripts", "sample_session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mixed, "rollout-2026-01-01T00-00-00-0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"), claude, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := t.TempDir()
	out, e, code := run("history", "import", "--index", idx, "--provider", "codex", "--path", mixed, "--json")
	var st history.ImportStats
	if code != ExitOK || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("mixed: exit %d %s", code, e)
	}
	if st.Imported != want || st.Foreign != 1 || !strings.Contains(e, "1 files hold no records") {
		t.Errorf("mixed: %d imported (want %d), %d foreign; stderr %q", st.Imported, want, st.Foreign, e)
	}
	codexOnly := t.TempDir()
	if _, e, code := run("history", "import", "--index", codexOnly, "--provider", "codex", "--path", codexDir); code != ExitOK {
		t.Fatalf("codex alone: %d %s", code, e)
	}
	if s, c := indexStats(t, idx), indexStats(t, codexOnly); s.Sessions != c.Sessions || s.Events != c.Events {
		t.Errorf("mixed: %d sessions and %d events, codex's files alone %d and %d", s.Sessions, s.Events, c.Sessions, c.Events)
	}
	// A renamed rollout directly in --path is not taken (Codex keeps history.jsonl there), and the usage
	// error says what a file there must be named; one folder down, it imports (B10).
	saved := t.TempDir()
	turn, err := os.ReadFile(filepath.Join(corpus, "codex", "codemie-incremental", "turn-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(saved, "turn-1.jsonl"), turn, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := run("history", "import", "--index", t.TempDir(), "--provider", "codex", "--path", saved); code != ExitUsage || !strings.Contains(e, "named rollout-*.jsonl") {
		t.Errorf("a renamed rollout directly in --path: exit %d %q", code, e)
	}
	if err := os.Mkdir(filepath.Join(saved, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(saved, "turn-1.jsonl"), filepath.Join(saved, "sub", "turn-1.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, e, code := run("history", "import", "--index", t.TempDir(), "--provider", "codex", "--path", saved); code != ExitOK {
		t.Errorf("a renamed rollout one folder down: exit %d %q", code, e)
	}
	// The right provider imports every file.
	for _, p := range []string{"codex", "claude-code", "gemini-cli", "cursor", "copilot-cli", "opencode"} {
		idx := t.TempDir()
		out, e, code := run("history", "import", "--index", idx, "--provider", p, "--path", filepath.Join(corpus, p), "--json")
		var st history.ImportStats
		if code != ExitOK || json.Unmarshal([]byte(out), &st) != nil || st.Foreign != 0 || st.Events == 0 || st.Imported != st.Sources {
			t.Errorf("%s on its own files: exit %d %+v %s", p, code, st, e)
		}
	}
}

// TestImportWrongProviderKeepsImported: `--provider P --path DIR` on a folder whose
// transcripts the index holds as another provider's is the usage error of a fresh index (exit 2, "holds
// no P sessions"), and those sessions keep their events, for every other provider: they were replaced by
// empty P sessions, and by gemini-cli's and cursor's reading of Claude's JSONL (fewer events, exit 0).
func TestImportWrongProviderKeepsImported(t *testing.T) {
	corpus := historyCorpus(t)
	run := runIn(testenv.NewRepo(t))
	claude, err := os.ReadFile(filepath.Join(corpus, "claude-code", "claude-code-transcripts", "sample_session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proj", "sample_session.jsonl"), claude, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := t.TempDir()
	if _, e, code := run("history", "import", "--index", idx, "--provider", "claude-code", "--path", root); code != ExitOK {
		t.Fatalf("claude-code: exit %d %s", code, e)
	}
	want := indexStats(t, idx)
	if want.Sessions != 1 || want.Events == 0 {
		t.Fatalf("claude-code imported %+v", want)
	}
	for _, p := range []string{"codex", "copilot-cli", "gemini-cli", "cursor", "opencode"} {
		out, e, code := run("history", "import", "--index", idx, "--provider", p, "--path", root)
		if code != ExitUsage || out != "" || !strings.Contains(e, "holds no "+p+" sessions") {
			t.Errorf("%s on the imported Claude folder: exit %d, stdout %.200q, stderr %q", p, code, out, e)
		}
		if got := indexStats(t, idx); got.Sessions != want.Sessions || got.Events != want.Events || got.Sources != want.Sources || got.ByProvider["claude-code"] != 1 {
			t.Errorf("%s on the imported Claude folder: the index holds %+v, before %+v", p, got, want)
		}
	}
}
