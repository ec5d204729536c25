package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// unNameID reads a native id nameID wrote back into the name it came from (\\ and \xHH), for a name that
// was not valid UTF-8.
func unNameID(t *testing.T, id string) string {
	t.Helper()
	var b []byte
	for i := 0; i < len(id); i++ {
		switch {
		case id[i] != '\\':
			b = append(b, id[i])
		case strings.HasPrefix(id[i:], `\\`):
			b = append(b, '\\')
			i++
		case strings.HasPrefix(id[i:], `\x`) && i+4 <= len(id):
			v, err := strconv.ParseUint(id[i+2:i+4], 16, 8)
			if err != nil {
				t.Fatalf("%q: bad escape at %d", id, i)
			}
			b = append(b, byte(v))
			i += 3
		default:
			t.Fatalf("%q: lone backslash at %d", id, i)
		}
	}
	return string(b)
}

// TestInvalidUTF8FileNames: transcripts whose file names are not valid UTF-8 (a Latin-1 byte,
// a hostile name with an escape sequence) get native ids and line keys that are valid UTF-8 without
// control characters, different for different names, that give the name back, and by which `show
// session` finds the session as search prints it (JSON, where an invalid byte would be U+FFFD); a name
// that is valid UTF-8 keeps its id.
func TestInvalidUTF8FileNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	proj := filepath.Join(dir, "claude", "-p")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"caf\xe9", "caf\xe8", "\xff\xfe", `a\x` + "\xff", "\x1b]52;c;\xff\x07", "caf\u00e9"}
	for i, n := range names {
		line := `{"type":"user","timestamp":"2025-12-24T10:00:00.000Z","message":{"role":"user","content":"word` + strconv.Itoa(i) + `"},"uuid":"u1","sessionId":"x"}` + "\n"
		if err := os.WriteFile(filepath.Join(proj, n+".jsonl"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	codex := filepath.Join(dir, "codex")
	if err := os.MkdirAll(codex, 0o755); err != nil {
		t.Fatal(err)
	}
	rollout := "rollout-2025-12-24T10-00-00-caf\xe9.jsonl"
	if err := os.WriteFile(filepath.Join(codex, rollout), []byte(
		`{"timestamp":"2025-12-24T10:00:00.000Z","type":"session_meta","payload":{"id":"0199aaaa-0000-7000-8000-000000000001","cwd":"/w"}}`+"\n"+
			`{"timestamp":"2025-12-24T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"latin"}]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	for p, root := range map[Provider]string{ClaudeCode: filepath.Join(dir, "claude"), Codex: codex} {
		srcs, err := Discover(ctx, p, root, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Import(ctx, srcs); err != nil {
			t.Fatal(err)
		}
	}
	sessions, err := ix.Sessions(ctx, ClaudeCode, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != len(names) {
		t.Fatalf("%d sessions, want %d", len(sessions), len(names))
	}
	clean := func(what, s string) {
		t.Helper()
		if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) || strings.ContainsAny(s, "/\x00") {
			t.Errorf("%s %q: not valid UTF-8, or holds a control character or a slash", what, s)
		}
	}
	seen := map[string]string{}
	for _, s := range sessions {
		clean("native id", s.NativeID)
		name := strings.TrimSuffix(filepath.Base(s.SourcePath), ".jsonl")
		if utf8.ValidString(name) {
			if s.NativeID != name {
				t.Errorf("valid name %q: native id %q", name, s.NativeID)
			}
		} else if got := unNameID(t, s.NativeID); got != name {
			t.Errorf("native id %q reads back as %q, not the name %q", s.NativeID, got, name)
		}
		if other, ok := seen[s.NativeID]; ok {
			t.Errorf("names %q and %q share the native id %q", other, name, s.NativeID)
		}
		seen[s.NativeID] = name
		if s.ID != SessionID(ClaudeCode, s.NativeID) {
			t.Errorf("%q: ctx id %s is not SessionID of its native id", name, s.ID)
		}
		// What ctx history search --json prints, copied back.
		out, _ := json.Marshal(s.NativeID)
		var printed string
		if err := json.Unmarshal(out, &printed); err != nil {
			t.Fatal(err)
		}
		for _, given := range []string{printed, name} {
			if got, err := ix.Session(ctx, given); err != nil || got.ID != s.ID {
				t.Errorf("Session(%q) = %s, %v; want %s (file %q)", given, got.ID, err, s.ID, name)
			}
		}
	}
	cs, err := ix.Sessions(ctx, Codex, 0)
	if err != nil || len(cs) != 1 {
		t.Fatalf("codex sessions %v, %v", cs, err)
	}
	evs, err := ix.Events(ctx, cs[0].ID, 0, 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("codex events %v, %v", evs, err)
	}
	for _, e := range evs {
		clean("line key", e.NativeKey)
		if file, _, _ := strings.Cut(e.NativeKey, ":L"); unNameID(t, file) != rollout {
			t.Errorf("line key %q does not name the file %q", e.NativeKey, rollout)
		}
	}
}
