package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubagentIdentityNamesParent: Claude Code names a subagent's transcript after the agent
// only, so two parents' subagents can have the same file name: in the newer layout
// (<parent>/subagents/agent-<id>.jsonl) and in the older sibling one (agent-<id>.jsonl beside the parent,
// whose records' sessionId names it). Each is its own session, its native id naming its parent; the ids
// are the same when the same files are imported on another machine (another path) and on a re-import; a
// sibling file whose first lines named no session gets its parent's id once its lines do, read whole.
func TestSubagentIdentityNamesParent(t *testing.T) {
	ctx := context.Background()
	line := func(uuid, session, text string) string {
		s := ""
		if session != "" {
			s = `,"sessionId":"` + session + `"`
		}
		return `{"type":"user","uuid":"` + uuid + `","timestamp":"2026-02-01T10:00:00Z","cwd":"/w"` + s + `,"isSidechain":true,"message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	write := func(root, rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	layout := func(root string) {
		for _, par := range []string{"par-a", "par-b"} {
			write(root, "-w/"+par+".jsonl", line("p-"+par, par, "parent "+par))
			write(root, "-w/"+par+"/subagents/agent-x1.jsonl", line("s1", par, "newer layout under "+par)) // same uuids too
		}
		write(root, "-s/ses-c.jsonl", line("c1", "ses-c", "parent c"))
		write(root, "-s/agent-y2.jsonl", line("y1", "ses-c", "sibling of c"))
		write(root, "-t/ses-d.jsonl", line("d1", "ses-d", "parent d"))
		write(root, "-t/agent-y2.jsonl", line("y1", "ses-d", "sibling of d"))
	}
	want := map[string]string{ // native id -> parent's native id
		"par-a/agent-x1": "par-a", "par-b/agent-x1": "par-b", "ses-c/agent-y2": "ses-c", "ses-d/agent-y2": "ses-d",
	}
	imported := func(root string) map[string]Session {
		ix := openTestIndex(t)
		for range 2 { // a re-import changes nothing
			srcs, err := Discover(ctx, ClaudeCode, root, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ix.Import(ctx, srcs); err != nil {
				t.Fatal(err)
			}
		}
		all, err := ix.Sessions(ctx, ClaudeCode, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Session{}
		for _, s := range all {
			got[s.NativeID] = s
		}
		return got
	}
	one, two := t.TempDir(), filepath.Join(t.TempDir(), "elsewhere", "projects")
	layout(one)
	layout(two)
	a, b := imported(one), imported(two)
	if len(a) != 8 {
		t.Errorf("%d sessions, want 8 (4 parents, 4 subagents): %v", len(a), a)
	}
	for native, parent := range want {
		s, ok := a[native]
		switch {
		case !ok:
			t.Errorf("no session %q", native)
		case s.ID != SessionID(ClaudeCode, native) || s.ParentID != SessionID(ClaudeCode, parent) || s.Scope != "subagent" || s.EventCount != 1:
			t.Errorf("%s: id %s parent %s scope %s events %d; want parent %s", native, s.ID, s.ParentID, s.Scope, s.EventCount, SessionID(ClaudeCode, parent))
		case b[native].ID != s.ID:
			t.Errorf("%s: id %s on one machine, %s on another", native, s.ID, b[native].ID)
		}
	}

	// A sibling file imported before any line named its session, then appended to.
	root := t.TempDir()
	write(root, "-u/ses-e.jsonl", line("e1", "ses-e", "parent e"))
	write(root, "-u/agent-z3.jsonl", line("z1", "", "before the session id"))
	ix := openTestIndex(t)
	imp := func() {
		srcs, err := Discover(ctx, ClaudeCode, root, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Import(ctx, srcs); err != nil {
			t.Fatal(err)
		}
	}
	imp()
	f, err := os.OpenFile(filepath.Join(root, "-u", "agent-z3.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line("z2", "ses-e", "now it names its parent")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	imp()
	s, err := ix.Session(ctx, "ses-e/agent-z3")
	if err != nil || s.EventCount != 2 || s.ParentID != SessionID(ClaudeCode, "ses-e") {
		t.Errorf("appended sibling: %+v, %v; want 2 events under ses-e", s, err)
	}
	if _, err := ix.Session(ctx, SessionID(ClaudeCode, "agent-z3")); err == nil {
		t.Errorf("the session of the file's first read is still there")
	}
}

// TestSubagentBareName: a Claude subagent's own name (agent-<id>, its file name), without the parent its
// native id begins with, finds its session when one parent has a subagent of that name; when several do,
// the error names them all, and a name no subagent has is not found.
func TestSubagentBareName(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, f := range []struct{ rel, session string }{
		{"-w/par-a.jsonl", "par-a"}, {"-w/par-b.jsonl", "par-b"},
		{"-w/par-a/subagents/agent-x1.jsonl", "par-a"}, {"-w/par-b/subagents/agent-x1.jsonl", "par-b"},
		{"-w/par-a/subagents/agent-q9.jsonl", "par-a"},
	} {
		p := filepath.Join(root, f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := `{"type":"user","uuid":"u-` + filepath.Base(f.rel) + `","timestamp":"2026-02-01T10:00:00Z","cwd":"/w","sessionId":"` + f.session + `","message":{"role":"user","content":"hello"}}` + "\n"
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix := openTestIndex(t)
	srcs, err := Discover(ctx, ClaudeCode, root, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	if s, err := ix.Session(ctx, "agent-q9"); err != nil || s.NativeID != "par-a/agent-q9" {
		t.Errorf("agent-q9: %+v, %v; want the session par-a/agent-q9", s, err)
	}
	_, err = ix.Session(ctx, "agent-x1")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "par-a/agent-x1, par-b/agent-x1") {
		t.Errorf("agent-x1: %v; want ErrAmbiguous naming par-a/agent-x1 and par-b/agent-x1", err)
	}
	if _, err := ix.Session(ctx, "agent-none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("agent-none: %v; want ErrNotFound", err)
	}
	// A name is a whole segment: the end of another name is not it.
	if _, err := ix.Session(ctx, "t-q9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("t-q9: %v; want ErrNotFound", err)
	}
}
