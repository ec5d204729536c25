package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionByNativePrefix: a session opens by a unique prefix (at least 8 characters) of its provider's
// native id, as by a prefix of its ctx id: what ctx history search prints beside the provider is what a
// reader copies (a tester's `show session 019e1625` was not found). Shorter prefixes and prefixes of
// several sessions' ids are refused.
func TestSessionByNativePrefix(t *testing.T) {
	ix := importedIndex(t)
	ctx := context.Background()
	const native = "019e1625-789d-76c0-80ab-3724b5ddb799"
	want := SessionID(Codex, native)
	for _, given := range []string{native, "019e1625-789d", "019e1625"} {
		s, err := ix.Session(ctx, given)
		if err != nil || s.ID != want {
			t.Errorf("Session(%q) = %s, %v; want %s", given, s.ID, err, want)
		}
	}
	if _, err := ix.Session(ctx, "019e162"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a 7-character prefix: %v, want not found", err)
	}
	all, err := ix.Sessions(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]int{}
	for _, s := range all {
		if len(s.NativeID) >= 8 {
			first[s.NativeID[:8]]++
		}
	}
	shared := 0
	for p, n := range first {
		if n > 1 {
			shared++
			if _, err := ix.Session(ctx, p); !errors.Is(err, ErrAmbiguous) {
				t.Errorf("prefix %s of %d sessions' native ids: %v, want ambiguous", p, n, err)
			}
		}
	}
	t.Logf("%d 8-character prefixes shared by several sessions' native ids checked", shared)
}

// TestSessionIDCollisions: Claude files named after another session's ctx id, whole or its first 8 hex
// digits (a tester's repro): a full ctx id names its own session whatever native ids claim it; the
// fake's own ctx id names the fake; a whole native id that is no whole ctx id names its session unless it
// is also the beginning of another's ctx id, which is ambiguous and says so.
func TestSessionIDCollisions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(corpusDir(t), "claude-code", "claude-code-transcripts", "sample_session.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	real := SessionID(ClaudeCode, "sample_session")
	fake := func(name, word string) string {
		d := filepath.Join(dir, "-b"+word)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		line := `{"type":"user","timestamp":"2025-12-24T10:00:00.000Z","message":{"role":"user","content":"fake ` + word + `"},"uuid":"f1"}` + "\n"
		if err := os.WriteFile(filepath.Join(d, name+".jsonl"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		return SessionID(ClaudeCode, name)
	}
	if err := os.MkdirAll(filepath.Join(dir, "-a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "-a", "sample_session.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	fakeWhole := fake(real, "lynx")
	fakePrefix := fake(real[:8], "ocelot")
	ix := openTestIndex(t)
	srcs, err := Discover(ctx, ClaudeCode, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ given, want string }{
		{real, real}, {strings.ToUpper(real), real}, {fakeWhole, fakeWhole}, {fakePrefix, fakePrefix}, {"sample_session", real},
		{real[:13], real},
	} {
		if s, err := ix.Session(ctx, c.given); err != nil || s.ID != c.want {
			t.Errorf("Session(%q) = %s, %v; want %s", c.given, s.ID, err, c.want)
		}
	}
	if _, err := ix.Session(ctx, real[:8]); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "give the full ctx id") {
		t.Errorf("Session(%q), the beginning of one's ctx id and another's native id: %v, want ambiguous", real[:8], err)
	}
}
