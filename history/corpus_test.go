package history

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMain removes the template of importedIndex after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if corpusTemplate.dir != "" {
		os.RemoveAll(corpusTemplate.dir)
	}
	os.Exit(code)
}

// corpusDir is the shared corpus of real transcripts (../shared/corpus/agent-history from the project
// root); tests that need it skip when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	t.Skip("agent-history corpus not found (set CTX_HISTORY_CORPUS)")
	return ""
}

func openTestIndex(t testing.TB) *Index {
	t.Helper()
	ix, err := Open(context.Background(), filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// corpusTemplate is a folder holding an index of the whole corpus (in its "history" folder), imported
// once per test run by importedIndex; TestMain removes it.
var corpusTemplate struct {
	once sync.Once
	dir  string
	err  error
}

// importedIndex opens, in the test's own folder, a copy of an index of the whole corpus: what
// openTestIndex then importCorpus make, imported once per test run (an import of the corpus is seconds
// of CPU under -race). For the tests that read an imported corpus; a test of the import itself imports.
func importedIndex(t testing.TB) *Index {
	t.Helper()
	corpus := corpusDir(t)
	corpusTemplate.once.Do(func() { corpusTemplate.dir, corpusTemplate.err = makeCorpusTemplate(corpus) })
	if corpusTemplate.err != nil {
		t.Fatal(corpusTemplate.err)
	}
	dst := filepath.Join(t.TempDir(), "history")
	if err := copyTree(filepath.Join(corpusTemplate.dir, "history"), dst); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// makeCorpusTemplate imports every provider's folder of corpus into a new index in a new temporary
// folder (its "history" folder) and closes it.
func makeCorpusTemplate(corpus string) (string, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ctx-history-corpus-")
	if err != nil {
		return "", err
	}
	ix, err := Open(ctx, filepath.Join(dir, "history"))
	if err != nil {
		return dir, err
	}
	var srcs []Source
	for _, p := range Providers {
		s, err := Discover(ctx, p, filepath.Join(corpus, string(p)), true)
		if err != nil {
			ix.Close()
			return dir, err
		}
		srcs = append(srcs, s...)
	}
	st, err := ix.Import(ctx, srcs)
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	if err == nil && (st.Imported == 0 || st.Failed != 0) {
		err = fmt.Errorf("corpus template: %d sources imported, %d failed", st.Imported, st.Failed)
	}
	return dir, err
}

// copyTree copies the regular files and folders below src into dst (which must not exist).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("copy %s: not a regular file", p)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

func importCorpus(t testing.TB, ix *Index) ImportStats {
	t.Helper()
	ctx := context.Background()
	dir := corpusDir(t)
	var srcs []Source
	for _, p := range Providers {
		s, err := Discover(ctx, p, filepath.Join(dir, string(p)), true)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	st, err := ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCorpusImportsWithoutHardErrors(t *testing.T) {
	ix := openTestIndex(t)
	st := importCorpus(t, ix)
	// Every transcript file of the corpus is a source or part of one (OpenCode's message and part
	// files); what is left is licences, notes and files ctx does not read (named here).
	covered := map[string]bool{}
	for _, r := range st.Results {
		covered[r.Source.Path] = true
		if r.Source.Format == FormatOpenCode {
			files, err := openCodeFiles(context.Background(), r.Source.Path)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				covered[f] = true
			}
		}
	}
	dir := corpusDir(t)
	notTranscripts := map[string]bool{
		"SOURCES.md": true,
		"claude-code/agent-sessions/subagent-layout/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/agent-a0ad4f44468bdf20d.meta.json": true,
		"cursor/agent-sessions/test-store.db":          true, // Cursor's chat store: not read (docs/history.md)
		"opencode/agent-sessions/storage_v2/migration": true, // OpenCode's storage version marker
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !covered[p] && !notTranscripts[filepath.ToSlash(rel)] && !strings.HasPrefix(rel, "LICENSES") {
			t.Errorf("corpus file %s is not imported", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Results) != 24 {
		t.Errorf("%d sources, want 24", len(st.Results))
	}
	for _, r := range st.Results {
		t.Logf("%-12s %-18s %-9s ev=%-4d skip=%-3d bad=%d unknown=%v %s", r.Source.Provider, r.Source.Format, r.Action, r.Events, r.Skipped, r.BadLines, r.Unknown, filepath.Base(r.Source.Path))
		if r.Action == "failed" || r.BadLines != 0 {
			t.Errorf("%s: action %s, %d bad lines, err %q, %v", r.Source.Path, r.Action, r.BadLines, r.Err, r.Errors)
		}
	}
}

// countSession returns the number of events and tool calls of the session imported from the corpus
// file rel, and the session.
func corpusSession(t *testing.T, ix *Index, st ImportStats, rel string) (Session, []Event) {
	t.Helper()
	want := filepath.Join(corpusDir(t), rel)
	for _, r := range st.Results {
		if r.Source.Path == want {
			s, err := ix.Session(context.Background(), r.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := ix.Events(context.Background(), s.ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return s, evs
		}
	}
	t.Fatalf("%s was not imported", rel)
	return Session{}, nil
}

func countType(evs []Event, typ EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestCorpusCounts pins, for one file per provider, the counts checked by hand against the file
// (record by record: see the comments).
func TestCorpusCounts(t *testing.T) {
	ix := openTestIndex(t)
	st := importCorpus(t, ix)
	cases := []struct {
		rel                    string
		native                 string
		events, calls, outputs int
		provider               Provider
	}{
		// summary(1) + user(1) + assistant text+Write(2) + result(1) + Bash(1) + result(1) + user(1) + assistant(1)
		{"claude-code/claude-code-transcripts/sample_session.jsonl", "sample_session", 9, 2, 2, ClaudeCode},
		// 95 text + 167 tool_use + 167 tool_result blocks + 7 string user messages + 1 text block + 1 summary
		{"claude-code/claude-code-viewer/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "fe5e1c67-53e7-4862-81ae-d0e013e3270b", 438, 167, 167, ClaudeCode},
		// developer, user, assistant messages; exec_command call + output; reasoning summary; task_complete
		{"codex/ctxrs/sessions/2026/06/23/codex-session-root.jsonl", "codex-session-root", 7, 1, 1, Codex},
		// user(1); $set skipped; assistant with empty content: run_shell_command call + result (2); assistant text(1)
		{"gemini-cli/agent-sessions/jsonl_v040.jsonl", "gemini_stage0_jsonl", 4, 1, 1, GeminiCLI},
		// user text part(1); assistant: step-finish skipped, Read call+output(2), Write call+output(2), text(1)
		{"opencode/codemie/storage/session/test-project/test-session-1.json", "test-session-1", 6, 2, 2, OpenCode},
		// 6 lines: user, text+Shell, text, user, text+Shell, text
		{"cursor/agent-sessions/test-session.jsonl", "test-session", 8, 2, 0, Cursor},
		// user.message, assistant.message with one tool request (empty content), tool.execution_complete, assistant.message
		{"copilot-cli/agent-sessions/session-state/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl", "aaaabbbb-1111-2222-3333-ccccddddeeee", 4, 1, 1, CopilotCLI},
	}
	for _, c := range cases {
		s, evs := corpusSession(t, ix, st, c.rel)
		if s.NativeID != c.native || s.Provider != c.provider || s.ID != SessionID(c.provider, c.native) {
			t.Errorf("%s: session %+v, want native %q of %s", c.rel, s, c.native, c.provider)
		}
		if len(evs) != c.events || s.EventCount != c.events {
			t.Errorf("%s: %d events (session says %d), want %d", c.rel, len(evs), s.EventCount, c.events)
		}
		if n := countType(evs, ToolCall); n != c.calls {
			t.Errorf("%s: %d tool calls, want %d", c.rel, n, c.calls)
		}
		if n := countType(evs, ToolOutput); n != c.outputs {
			t.Errorf("%s: %d tool outputs, want %d", c.rel, n, c.outputs)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) || e.ID != EventID(s.ID, e.NativeKey) {
				t.Errorf("%s: event %d has seq %d id %s key %s", c.rel, i, e.Seq, e.ID, e.NativeKey)
			}
		}
	}

	// The sample session's Bash `git commit` output carries the receipt as a commit fact, and its Write
	// a file touch.
	_, evs := corpusSession(t, ix, st, "claude-code/claude-code-transcripts/sample_session.jsonl")
	var commits, creates []string
	for _, e := range evs {
		for _, f := range e.Facts {
			if f.Kind == "commit" {
				commits = append(commits, f.Value)
				if e.Tool == nil || !strings.HasPrefix(e.Tool.Output, "[main abc1234] Add hello function") || e.Tool.Name != "Bash" {
					t.Errorf("receipt event tool: %+v", e.Tool)
				}
			}
		}
		for _, f := range e.Files {
			if f.Op == FileCreate {
				creates = append(creates, f.Path)
			}
		}
	}
	if len(commits) != 1 || commits[0] != "abc1234" || len(creates) != 1 || creates[0] != "/project/hello.py" {
		t.Errorf("sample session: commits %v, creates %v", commits, creates)
	}
	// The Codex exec output states its exit code.
	_, evs = corpusSession(t, ix, st, "codex/ctxrs/sessions/2026/06/23/codex-session-root.jsonl")
	for _, e := range evs {
		if e.Type == ToolOutput && (e.Tool == nil || e.Tool.ExitCode == nil || *e.Tool.ExitCode != 0 || e.Tool.Name != "exec_command") {
			t.Errorf("codex output: %+v", e.Tool)
		}
	}
	// Codex apply_patch names its files.
	_, evs = corpusSession(t, ix, st, "codex/codemie/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
	patched := 0
	for _, e := range evs {
		if e.Type == ToolCall && e.Tool.Name == "apply_patch" && len(e.Files) > 0 {
			patched++
		}
	}
	if patched != 3 {
		t.Errorf("codex rollout: %d apply_patch calls with files, want 3", patched)
	}
}

// TestCorpusParentLinks: the Codex root/child pair and both Claude subagent layouts link child to parent.
func TestCorpusParentLinks(t *testing.T) {
	ix := openTestIndex(t)
	st := importCorpus(t, ix)
	cases := []struct {
		rel, parentNative string
		p                 Provider
	}{
		{"codex/ctxrs/sessions/2026/06/23/codex-session-child.jsonl", "codex-session-root", Codex},
		{"claude-code/agent-sessions/subagent-layout/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/agent-a0ad4f44468bdf20d.jsonl", "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f", ClaudeCode},
		{"claude-code/claude-code-viewer/sample-project/agent-test-hash-123.jsonl", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", ClaudeCode},
	}
	for _, c := range cases {
		s, _ := corpusSession(t, ix, st, c.rel)
		want := SessionID(c.p, c.parentNative)
		if s.ParentID != want || s.RootID != want || s.Scope != "subagent" {
			t.Errorf("%s: parent %q root %q scope %q, want parent and root %q", c.rel, s.ParentID, s.RootID, s.Scope, want)
		}
	}
	for _, rel := range []string{
		"codex/ctxrs/sessions/2026/06/23/codex-session-root.jsonl",
		// A primary session whose file holds 405 inline sidechain records after its own (TestSidechainInlineStaysPrimary).
		"claude-code/claude-code-viewer/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
	} {
		root, _ := corpusSession(t, ix, st, rel)
		if root.ParentID != "" || root.RootID != "" || root.Scope != "primary" {
			t.Errorf("%s: %+v, want a primary root", rel, root)
		}
	}
}

// TestSidechainInlineStaysPrimary: a Claude session file that starts with its own records and later
// holds a subagent's inline sidechain records is primary, also when the sidechain records come in a later
// incremental read; a file whose first records are sidechain ones is a subagent's.
func TestSidechainInlineStaysPrimary(t *testing.T) {
	root := t.TempDir()
	side := func(uuid string) string {
		return `{"type":"user","isSidechain":true,"sessionId":"s1","uuid":"` + uuid + `","message":{"role":"user","content":"side"}}`
	}
	main := func(uuid string) string {
		return `{"type":"user","isSidechain":false,"sessionId":"s1","uuid":"` + uuid + `","message":{"role":"user","content":"main"}}`
	}
	ix := openTestIndex(t)
	src := writeClaude(t, root, "-w", "11111111-1111-4111-8111-111111111111", main("u1"))
	r := importOne(t, ix, src)
	f, err := os.OpenFile(src.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(side("u2") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if r2 := importOne(t, ix, src); r2.Action != "appended" {
		t.Fatalf("%+v", r2)
	}
	s, err := ix.Session(context.Background(), r.SessionID)
	if err != nil || s.Scope != "primary" || s.EventCount != 2 {
		t.Fatalf("%+v %v: want a primary session of 2 events", s, err)
	}
	sub := writeClaude(t, root, "-w", "22222222-2222-4222-8222-222222222222", side("v1"), main("v2"))
	rs := importOne(t, ix, sub)
	if s, err := ix.Session(context.Background(), rs.SessionID); err != nil || s.Scope != "subagent" {
		t.Fatalf("%+v %v: want a subagent", s, err)
	}
}

// TestCorpusReimportIsNoop: a second import of the unchanged corpus parses nothing and changes nothing.
func TestCorpusReimportIsNoop(t *testing.T) {
	ix := openTestIndex(t)
	first := importCorpus(t, ix)
	ctx := context.Background()
	gen, _ := ix.Generation(ctx)
	before, _ := ix.Stats(ctx)
	second := importCorpus(t, ix)
	if second.Unchanged != second.Sources || second.Events != 0 || second.Sources != first.Sources {
		t.Fatalf("second import: %+v", second)
	}
	gen2, _ := ix.Generation(ctx)
	after, _ := ix.Stats(ctx)
	if gen2 != gen || after.Events != before.Events || after.Sessions != before.Sessions {
		t.Fatalf("second import changed the index: gen %d→%d, %+v → %+v", gen, gen2, before, after)
	}
}
