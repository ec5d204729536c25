package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestCLIEventTimesMilliseconds: the `at` of an event in the CLI's JSON (ctx list events, ctx history show
// session, ctx history show event) is RFC 3339 in UTC with milliseconds, as MCP's tools and the session's
// started_at give it (docs/history.md "Events"), whatever precision the transcript recorded.
func TestCLIEventTimesMilliseconds(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	root := t.TempDir()
	rollout := `{"timestamp":"2026-07-02T00:00:00Z","type":"session_meta","payload":{"id":"019e1625-789d-76c0-80ab-dddddddddddd","cwd":"/w"}}` + "\n" +
		`{"timestamp":"2026-07-02T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"a whole second"}]}}` + "\n" +
		`{"timestamp":"2026-07-02T02:00:02.5+02:00","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"half a second"}]}}` + "\n"
	if err := os.WriteFile(filepath.Join(root, "rollout-2026-07-02T00-00-00-019e1625-789d-76c0-80ab-dddddddddddd.jsonl"), []byte(rollout), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, e, code := run("history", "import", "--provider", "codex", "--path", root); code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	want := []string{"2026-07-02T00:00:01.000Z", "2026-07-02T00:00:02.500Z"}
	lines := func(args ...string) []map[string]any {
		t.Helper()
		var evs []map[string]any
		for _, m := range jsonLines(t, run, args...) {
			if m["ctx_event_id"] != nil {
				evs = append(evs, m)
			}
		}
		return evs
	}
	ats := func(what string, evs []map[string]any) {
		t.Helper()
		var got []string
		for _, ev := range evs {
			s, _ := ev["at"].(string)
			got = append(got, s)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: at %q, want %q", what, got, want)
		}
	}
	listed := lines("list", "events", "--json")
	ats("list events", listed)
	if len(listed) != 2 {
		t.Fatalf("list events: %v", listed)
	}
	ats("show session", lines("history", "show", "session", listed[0]["ctx_session_id"].(string), "--json"))
	out, e, code := run("history", "show", "event", listed[1]["ctx_event_id"].(string), "--window", "1", "--json")
	var shown struct {
		Event  map[string]any   `json:"event"`
		Window []map[string]any `json:"window"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &shown) != nil {
		t.Fatalf("show event: %d %s %s", code, out, e)
	}
	ats("show event's window", shown.Window)
	if shown.Event["at"] != want[1] {
		t.Errorf("show event: at %v, want %s", shown.Event["at"], want[1])
	}
}

// jsonLines runs ctx with args (run: runIn's), which must exit 0, and returns the JSON Lines it printed.
func jsonLines(t *testing.T, run func(...string) (string, string, int), args ...string) []map[string]any {
	t.Helper()
	out, e, code := run(args...)
	if code != ExitOK {
		t.Fatalf("%q: %d %s", args, code, e)
	}
	var ms []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: line %q: %v", args, l, err)
		}
		ms = append(ms, m)
	}
	return ms
}
