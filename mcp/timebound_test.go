package mcp

import (
	"strings"
	"testing"
	"time"
)

// TestTimeBoundsAsCLI: query_events and search take since/until as the CLI's --since/--until do
// (docs/mcp.md "search"): an RFC 3339 time, or a YYYY-MM-DD date meaning that day's UTC midnight, which
// selects exactly what the midnight time selects; anything else is invalid_request. Every event's `at`
// is one format whatever the content projection (RFC 3339, UTC, milliseconds: the format of search
// results and of the frontier's last_at).
func TestTimeBoundsAsCLI(t *testing.T) {
	s := corpusServer(t).s
	ids := func(args map[string]any) []string {
		t.Helper()
		res := structured(t, "query_events", s.call(t, "query_events", args))
		var out []string
		for _, ev := range list(res, "events") {
			out = append(out, obj(ev)["ctx_event_id"].(string))
		}
		return out
	}
	// A day of the corpus with events before and after it.
	all := structured(t, "all", s.call(t, "query_events", map[string]any{"content": "none", "limit": 500}))
	var days []string
	for _, ev := range list(all, "events") {
		if at, ok := obj(ev)["at"].(string); ok && (len(days) == 0 || days[len(days)-1] != at[:10]) {
			days = append(days, at[:10])
		}
	}
	if len(days) < 3 {
		t.Fatalf("the corpus's first page spans days %v", days)
	}
	day := days[1]
	for _, c := range []struct{ since, until string }{{day, ""}, {"", day}, {days[0], days[2]}} {
		dateArgs := map[string]any{"content": "none", "limit": 500}
		timeArgs := map[string]any{"content": "none", "limit": 500}
		for k, v := range map[string]string{"since": c.since, "until": c.until} {
			if v != "" {
				dateArgs[k] = v
				timeArgs[k] = v + "T00:00:00Z"
			}
		}
		byDate, byTime := ids(dateArgs), ids(timeArgs)
		if len(byTime) == 0 || strings.Join(byDate, ",") != strings.Join(byTime, ",") {
			t.Errorf("since %q until %q: dates select %d events, midnight times %d", c.since, c.until, len(byDate), len(byTime))
		}
		dateArgs["query"] = "the"
		delete(dateArgs, "content")
		delete(dateArgs, "limit")
		structured(t, "search by dates", s.call(t, "search", dateArgs))
	}
	for _, bad := range []string{"2025-13-01", "2025-1-1", "yesterday", "2025-01-01 10:00", "20250101"} {
		for _, tool := range []string{"query_events", "search"} {
			if code := errorCode(t, tool, s.call(t, tool, map[string]any{"query": "x", "since": bad})); code != "invalid_request" {
				t.Errorf("%s since %q: %s, want invalid_request", tool, bad, code)
			}
		}
	}
	// One `at` format in every content projection, and equal to the frontier's last_at.
	ats := map[string]map[string]string{}
	for _, content := range []string{"full", "text", "none"} {
		res := structured(t, content, s.call(t, "query_events", map[string]any{"content": content, "limit": 200}))
		ats[content] = map[string]string{}
		var last string
		for _, ev := range list(res, "events") {
			at, _ := obj(ev)["at"].(string)
			ats[content][obj(ev)["ctx_event_id"].(string)] = at
			last = at
			if at == "" {
				continue
			}
			if p, err := time.Parse(atFormat, at); err != nil || p.Format(atFormat) != at || !strings.HasSuffix(at, "Z") {
				t.Errorf("content %s: at %q is not RFC 3339 UTC with milliseconds", content, at)
			}
		}
		if fr := obj(res["frontier"]); last != "" && fr["last_at"] != last {
			t.Errorf("content %s: frontier last_at %v, last event's at %q", content, fr["last_at"], last)
		}
	}
	for id, at := range ats["full"] {
		if ats["text"][id] != at || ats["none"][id] != at {
			t.Errorf("event %s: at %q (full), %q (text), %q (none)", id, at, ats["text"][id], ats["none"][id])
		}
	}
}
