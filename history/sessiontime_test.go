package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSessionTimesMilliseconds: a session's started_at and ended_at are given in one format, RFC 3339 in
// UTC with milliseconds, as the read tools give an event's at, whatever their own precision; the keys keep
// the order of the Session's tags, a zero time is absent and HTML characters are left to the caller.
func TestSessionTimesMilliseconds(t *testing.T) {
	s := Session{ID: "s1", Provider: ClaudeCode, NativeID: "n1", Title: "a <b> & c",
		StartedAt:    time.Date(2026, 1, 2, 3, 4, 5, 123_000_000, time.UTC),
		EndedAt:      time.Date(2026, 1, 2, 4, 4, 59, 0, time.FixedZone("x", 3600)),
		SourceFormat: "claude_jsonl", SourcePath: "/p", EventCount: 2}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ctx_session_id":"s1","provider":"claude-code","native_session_id":"n1","title":"a \u003cb\u003e \u0026 c",` +
		`"started_at":"2026-01-02T03:04:05.123Z","ended_at":"2026-01-02T03:04:59.000Z",` +
		`"source_format":"claude_jsonl","source_path":"/p","event_count":2}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	s.StartedAt, s.EndedAt = time.Time{}, time.Time{}
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	if got := sb.String(); !strings.Contains(got, `"title":"a <b> & c"`) || strings.Contains(got, "_at") {
		t.Fatalf("got %s", got)
	}
	var back Session
	if err := json.Unmarshal(b, &back); err != nil || !back.EndedAt.Equal(time.Date(2026, 1, 2, 3, 4, 59, 0, time.UTC)) {
		t.Fatalf("round trip: %v %v", back.EndedAt, err)
	}
}
