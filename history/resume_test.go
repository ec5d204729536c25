package history

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

func codexMsg(at, text string) string {
	return `{"timestamp":"` + at + `","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text + `"}]}}` + "\n"
}

// TestSameSessionTwoFiles: two Codex rollouts of one session (a resumed thread: the same session_meta.id)
// keep each its events: the session holds their union, an append to one leaves the other's as they were,
// and a deleted file's events leave the index at the next import (PruneMissing), the other's staying.
func TestSameSessionTwoFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	day := filepath.Join(root, "sessions", "2026", "03", "01")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"timestamp":"2026-03-01T03:00:00Z","type":"session_meta","payload":{"id":"019fdddd-0000-7000-8000-000000000001","cwd":"/w/app"}}` + "\n"
	a := filepath.Join(day, "rollout-2026-03-01T03-00-00-resumeA.jsonl")
	b := filepath.Join(day, "rollout-2026-03-01T04-00-00-resumeB.jsonl")
	if err := os.WriteFile(a, []byte(meta+codexMsg("2026-03-01T03:00:01Z", "RESUMEFIRSTFILE one")+codexMsg("2026-03-01T03:00:02Z", "RESUMEFIRSTFILE two")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(meta+codexMsg("2026-03-01T04:00:01Z", "RESUMESECONDFILE")), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	imp := func() ImportStats {
		t.Helper()
		return refresh(t, ix, Codex, root) // PruneMissing, then Import, as ctx history import
	}
	hits := func(q string) int {
		t.Helper()
		r, err := ix.Search(ctx, Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		return len(r.Hits)
	}
	texts := func(sid string) []string {
		t.Helper()
		evs, err := ix.Events(ctx, sid, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, e.Text)
		}
		sort.Strings(out)
		return out
	}
	st := imp()
	if st.Imported != 2 || st.Results[0].SessionID != st.Results[1].SessionID {
		t.Fatalf("import: %+v", st)
	}
	sid := st.Results[0].SessionID
	if got := texts(sid); len(got) != 3 {
		t.Fatalf("the session holds %q, want the 3 messages of both files", got)
	}
	if hits("RESUMEFIRSTFILE") == 0 || hits("RESUMESECONDFILE") == 0 {
		t.Fatal("a file's events are not found")
	}
	s, err := ix.Session(ctx, sid)
	if err != nil || s.EventCount != 3 {
		t.Fatalf("session %+v, %v: want 3 events", s, err)
	}

	// An append to A adds to A's events; B's stay.
	f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(codexMsg("2026-03-01T03:00:03Z", "RESUMEAPPENDED")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st := imp(); st.Appended != 1 {
		t.Fatalf("append: %+v", st)
	}
	if got := texts(sid); len(got) != 4 || hits("RESUMESECONDFILE") == 0 || hits("RESUMEAPPENDED") == 0 {
		t.Fatalf("after the append: %q", got)
	}

	// B rewritten whole (not an append) replaces B's events only.
	if err := os.WriteFile(b, []byte(meta+codexMsg("2026-03-01T04:00:01Z", "RESUMEREWRITTEN")), 0o644); err != nil {
		t.Fatal(err)
	}
	imp()
	if got := texts(sid); len(got) != 4 || hits("RESUMESECONDFILE") != 0 || hits("RESUMEREWRITTEN") == 0 || hits("RESUMEFIRSTFILE") == 0 {
		t.Fatalf("after B's rewrite: %q", got)
	}

	// B deleted: its events leave, A's stay.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if st := imp(); st.Removed != 1 {
		t.Fatalf("delete: %+v", st)
	}
	if got := texts(sid); len(got) != 3 || hits("RESUMEREWRITTEN") != 0 {
		t.Fatalf("after B's deletion: %q", got)
	}
	if s, err := ix.Session(ctx, sid); err != nil || s.EventCount != 3 {
		t.Fatalf("session %+v, %v: want 3 events", s, err)
	}
	// A deleted too: the session goes.
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	imp()
	if _, err := ix.Session(ctx, sid); err == nil {
		t.Fatal("a session without files is still there")
	}
}

// TestLineKeysNameTheFile: a line-keyed event's native key names its file by name only, so the same file
// imported from another directory (another machine) gives the same ids.
func TestLineKeysNameTheFile(t *testing.T) {
	ctx := context.Background()
	data := `{"timestamp":"2026-03-01T03:00:00Z","type":"session_meta","payload":{"id":"019fdddd-0000-7000-8000-000000000002"}}` + "\n" + codexMsg("2026-03-01T03:00:01Z", "hello")
	var ids [2][]string
	for i := range ids {
		p := filepath.Join(t.TempDir(), "m", "rollout-2026-03-01T03-00-00-x.jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		ix := openTestIndex(t)
		r := importOne(t, ix, Source{Provider: Codex, Format: FormatCodex, Path: p})
		evs, err := ix.Events(ctx, r.SessionID, 0, 0)
		if err != nil || len(evs) != 1 {
			t.Fatalf("%v %v", evs, err)
		}
		if want := "rollout-2026-03-01T03-00-00-x.jsonl:L2#0"; evs[0].NativeKey != want {
			t.Fatalf("native key %q, want %q", evs[0].NativeKey, want)
		}
		ids[i] = eventIDs(t, ix, r.SessionID)
	}
	if ids[0][0] != ids[1][0] {
		t.Fatalf("ids differ between machines: %v", ids)
	}
}
