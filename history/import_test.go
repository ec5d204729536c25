package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func importOne(t *testing.T, ix *Index, src Source) SourceResult {
	t.Helper()
	r, err := ix.ImportSource(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func eventIDs(t *testing.T, ix *Index, sessionID string) []string {
	t.Helper()
	evs, err := ix.Events(context.Background(), sessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestIncrementalTurns: turn-2 is turn-1 plus appended lines. Importing turn-1, then the file grown to
// turn-2, parses only the suffix: the first events keep their ids, and the result equals a fresh import of
// turn-2.
func TestIncrementalTurns(t *testing.T) {
	for _, c := range []struct {
		p      Provider
		format string
		dir    string
		name   string
	}{
		{ClaudeCode, FormatClaude, "claude-code/codemie-incremental", "3fb74381-1bf4-475e-8c6f-442d872b1bcf.jsonl"},
		{Codex, FormatCodex, "codex/codemie-incremental", "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"},
	} {
		t.Run(string(c.p), func(t *testing.T) {
			corpus := corpusDir(t)
			ix := openTestIndex(t)
			path := filepath.Join(t.TempDir(), "sessions", "x", c.name)
			src := Source{Provider: c.p, Format: c.format, Path: path}
			copyFile(t, filepath.Join(corpus, c.dir, "turn-1.jsonl"), path)
			r1 := importOne(t, ix, src)
			if r1.Action != "imported" || r1.Events == 0 {
				t.Fatalf("turn 1: %+v", r1)
			}
			ids1 := eventIDs(t, ix, r1.SessionID)

			copyFile(t, filepath.Join(corpus, c.dir, "turn-2.jsonl"), path)
			r2 := importOne(t, ix, src)
			if r2.Action != "appended" || r2.SessionID != r1.SessionID {
				t.Fatalf("turn 2: %+v", r2)
			}
			ids2 := eventIDs(t, ix, r1.SessionID)
			if len(ids2) != len(ids1)+r2.Events || r2.Events == 0 {
				t.Fatalf("turn 2 added %d events: %d → %d", r2.Events, len(ids1), len(ids2))
			}
			for i := range ids1 {
				if ids1[i] != ids2[i] {
					t.Fatalf("event %d changed id: %s → %s", i, ids1[i], ids2[i])
				}
			}
			if r3 := importOne(t, ix, src); r3.Action != "unchanged" {
				t.Fatalf("third import: %+v", r3)
			}

			fresh := openTestIndex(t)
			rf := importOne(t, fresh, src)
			if got := eventIDs(t, fresh, rf.SessionID); strings.Join(got, ",") != strings.Join(ids2, ",") {
				t.Fatalf("incremental and fresh imports differ:\n%v\n%v", ids2, got)
			}
		})
	}
}

// TestRewrittenFileIsReimported: a file whose prefix changed is parsed whole, and its old events go.
func TestRewrittenFileIsReimported(t *testing.T) {
	ix := openTestIndex(t)
	path := filepath.Join(t.TempDir(), "p", "s1.jsonl")
	src := Source{Provider: ClaudeCode, Format: FormatClaude, Path: path}
	write := func(s string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(claudeUser("u1", "first alpha message") + claudeUser("u2", "second alpha message"))
	r := importOne(t, ix, src)
	if r.Events != 2 {
		t.Fatalf("%+v", r)
	}
	write(claudeUser("u9", "replaced beta message with a longer body than before to grow the file"))
	r = importOne(t, ix, src)
	if r.Action != "imported" || r.Events != 1 {
		t.Fatalf("rewrite: %+v", r)
	}
	evs, _ := ix.Events(context.Background(), r.SessionID, 0, 0)
	if len(evs) != 1 || !strings.Contains(evs[0].Text, "beta") {
		t.Fatalf("after rewrite: %+v", evs)
	}
	if res, err := ix.Search(context.Background(), Query{Text: "alpha"}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("old events still searchable: %+v %v", res.Hits, err)
	}
}

func claudeUser(uuid, text string) string {
	return `{"type":"user","uuid":"` + uuid + `","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w","message":{"role":"user","content":"` + text + `"}}` + "\n"
}

// TestPartialLastLine: a last line still being written is left for the next import.
func TestPartialLastLine(t *testing.T) {
	ix := openTestIndex(t)
	path := filepath.Join(t.TempDir(), "p", "s1.jsonl")
	src := Source{Provider: ClaudeCode, Format: FormatClaude, Path: path}
	full := claudeUser("u1", "one") + claudeUser("u2", "two")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(full[:len(full)-20]), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := importOne(t, ix, src); r.Events != 1 || r.BadLines != 0 {
		t.Fatalf("partial: %+v", r)
	}
	if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := importOne(t, ix, src); r.Action != "appended" || r.Events != 1 || r.BadLines != 0 {
		t.Fatalf("completed: %+v", r)
	}
}

// TestHostileInput: oversize lines, invalid UTF-8, deeply nested JSON, non-objects and NUL bytes are
// counted as bad lines or cleaned, and the good lines around them import.
func TestHostileInput(t *testing.T) {
	old := maxLineBytes
	maxLineBytes = 64 << 10
	t.Cleanup(func() { maxLineBytes = old })
	var b strings.Builder
	b.WriteString(claudeUser("u1", "before"))
	b.WriteString(`{"type":"user","uuid":"big","message":{"role":"user","content":"` + strings.Repeat("x", 100<<10) + `"}}` + "\n")
	b.WriteString(`{"type":"user","uuid":"bad-utf8","message":{"role":"user","content":"caf` + "\xff\xfe" + ` \u0000 nul"}}` + "\n")
	b.WriteString(strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + "\n")
	b.WriteString(`{"type":"user","uuid":"deep","message":` + strings.Repeat(`[`, 12000) + strings.Repeat("]", 12000) + "}\n")
	b.WriteString("not json at all\n")
	b.WriteString(`{"type":"user","uuid":"wrong","message":{"role":"user","content":42}}` + "\n")
	b.WriteString(`{"type":"brand-new-type","uuid":"n1"}` + "\n")
	b.WriteString(claudeUser("u2", "after"))
	path := filepath.Join(t.TempDir(), "p", "hostile.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	r := importOne(t, ix, Source{Provider: ClaudeCode, Format: FormatClaude, Path: path})
	if r.Action != "imported" || r.Unknown["claude:brand-new-type"] != 1 {
		t.Fatalf("%+v", r)
	}
	// too long, "[[[...", deeper than encoding/json's limit, not json, content 42
	if r.BadLines != 5 {
		t.Errorf("bad lines %d, want 5: %v", r.BadLines, r.Errors)
	}
	evs, _ := ix.Events(context.Background(), r.SessionID, 0, 0)
	var texts []string
	for _, e := range evs {
		if !utf8.ValidString(e.Text) || strings.ContainsRune(e.Text, 0) {
			t.Errorf("event text not clean UTF-8: %q", e.Text)
		}
		texts = append(texts, e.Text)
	}
	joined := strings.Join(texts, "|")
	if !strings.Contains(joined, "before") || !strings.Contains(joined, "after") || !strings.Contains(joined, "caf\uFFFD") {
		t.Errorf("events: %q", joined)
	}
}

// TestDiscoverSkipsSymlinks: discovery never follows a link out of the root, and a source that became a
// link is refused when opened.
func TestDiscoverSkipsSymlinks(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.jsonl")
	if err := os.WriteFile(secret, []byte(claudeUser("u1", "outside")), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "projects")
	real := filepath.Join(root, "-w", "real.jsonl")
	copyFile(t, secret, real)
	if err := os.Symlink(secret, filepath.Join(root, "-w", "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	srcs, err := Discover(context.Background(), ClaudeCode, root, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Path != real {
		t.Fatalf("discovered %+v, want only %s", srcs, real)
	}
	ix := openTestIndex(t)
	r := importOne(t, ix, Source{Provider: ClaudeCode, Format: FormatClaude, Path: filepath.Join(root, "-w", "link.jsonl")})
	if r.Action != "failed" {
		t.Fatalf("import through a symlink: %+v", r)
	}
}

// TestRootsFromEnv: each provider's override variable wins over its default; nothing is created.
func TestRootsFromEnv(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"CODEX_HOME": "/x/codex", "CLAUDE_CONFIG_DIR": "/x/claude", "OPENCODE_DB": "/x/oc/opencode.db"}
	roots := Roots(Env{Getenv: func(k string) string { return env[k] }, Home: home})
	got := map[Provider]Root{}
	for _, r := range roots {
		got[r.Provider] = r
	}
	want := map[Provider]string{
		ClaudeCode: "/x/claude/projects", Codex: "/x/codex", OpenCode: "/x/oc",
		GeminiCLI: filepath.Join(home, ".gemini", "tmp"), Cursor: filepath.Join(home, ".cursor", "projects"),
		CopilotCLI: filepath.Join(home, ".copilot", "session-state"),
	}
	for p, w := range want {
		if got[p].Path != w {
			t.Errorf("%s root %q, want %q", p, got[p].Path, w)
		}
	}
	if !got[Codex].FromEnv || got[GeminiCLI].FromEnv || got[GeminiCLI].Exists {
		t.Errorf("%+v", got)
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("discovery created %v in home", ents)
	}
}

// TestIndexIsPrivate: the index directory is 0700 and the database 0600.
func TestIndexIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ctx", "history")
	ix, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	fi, _ := os.Stat(dir)
	db, _ := os.Stat(filepath.Join(dir, "index.db"))
	if fi.Mode().Perm() != 0o700 || db.Mode().Perm() != 0o600 {
		t.Fatalf("modes %v %v", fi.Mode(), db.Mode())
	}
}

// TestMCPToolCalls: a Claude tool call named mcp__<server>__<tool> is marked as an MCP invocation.
func TestMCPToolCalls(t *testing.T) {
	root := t.TempDir()
	src := writeClaude(t, root, "-a", "s1",
		rec("a1", "assistant", "/w", `[{"type":"tool_use","id":"t1","name":"mcp__github__create_issue","input":{"title":"x"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]`))
	ix := openTestIndex(t)
	r := importOne(t, ix, src)
	evs, _ := ix.Events(context.Background(), r.SessionID, 0, 0)
	if len(evs) != 2 || evs[0].Tool.Protocol != "mcp" || evs[0].Tool.Server != "github" || evs[1].Tool.Protocol != "" {
		t.Fatalf("%+v %+v", evs[0].Tool, evs[1].Tool)
	}
}

// TestTouchedFileIsNoop: a file whose mtime changed but whose bytes did not is checked by hash and not
// re-imported; the index generation does not move.
func TestTouchedFileIsNoop(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	root := t.TempDir()
	srcs := []Source{
		writeClaude(t, root, "-a", "s1", rec("m1", "user", "/w", `"one"`)),
		{Provider: GeminiCLI, Format: FormatGeminiJSON, Path: filepath.Join(root, "g.json")},
	}
	if err := os.WriteFile(srcs[1].Path, []byte(`{"sessionId":"g1","messages":[{"id":"a","type":"user","content":"hi"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Import(ctx, srcs); err != nil || st.Imported != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	gen, _ := ix.Generation(ctx)
	later := time.Now().Add(time.Hour)
	for _, s := range srcs {
		if err := os.Chtimes(s.Path, later, later); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Unchanged != 2 || st.Events != 0 {
		t.Fatalf("after touch: %+v %v", st, err)
	}
	if g, _ := ix.Generation(ctx); g != gen {
		t.Fatalf("generation moved %d → %d", gen, g)
	}
	// Both touches were recorded (by the import's writer, not the parsing goroutines).
	for _, s := range srcs {
		if row, err := ix.loadSource(ctx, s.key()); err != nil || row == nil || row.mtime != later.UnixNano() {
			t.Fatalf("%s: recorded %+v %v, want mtime %d", s.Path, row, err, later.UnixNano())
		}
	}
}

// TestOpenCodePartChangeReimports: a changed part file (filed under the message's id, not its file name)
// re-imports the session.
func TestOpenCodePartChangeReimports(t *testing.T) {
	root := t.TempDir()
	w := func(rel, body string) {
		p := filepath.Join(root, "storage", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("session/proj/ses_1.json", `{"id":"ses_1","directory":"/w","time":{"created":1}}`)
	w("message/ses_1/msg_0001.json", `{"id":"m_one","role":"user","time":{"created":2}}`)
	w("part/m_one/001.json", `{"id":"p1","type":"text","text":"first"}`)
	ctx := context.Background()
	srcs, err := Discover(ctx, OpenCode, root, false)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("%+v %v", srcs, err)
	}
	ix := openTestIndex(t)
	if st, err := ix.Import(ctx, srcs); err != nil || st.Events != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	w("part/m_one/002.json", `{"id":"p2","type":"text","text":"second"}`)
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Imported != 1 || st.Events != 1 { // read again whole: one event is new
		t.Fatalf("after a new part: %+v %v", st, err)
	}
}

// TestDiscoverSymlinkedRoot: a provider root that is itself a symbolic link ($CLAUDE_CONFIG_DIR/projects ->
// /real/projects, the user's own layout) is resolved once and walked; a link below it is still skipped.
func TestDiscoverSymlinkedRoot(t *testing.T) {
	realRoot := filepath.Join(t.TempDir(), "projects")
	real := filepath.Join(realRoot, "-w", "real.jsonl")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte(claudeUser("u1", "hello")), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(realRoot, "linkdir")); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	root := filepath.Join(cfg, "projects")
	if err := os.Symlink(realRoot, root); err != nil {
		t.Fatal(err)
	}
	srcs, err := Discover(context.Background(), ClaudeCode, root, false)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(real)
	if len(srcs) != 1 || srcs[0].Path != want {
		t.Fatalf("discovered %+v, want %s", srcs, want)
	}
}
