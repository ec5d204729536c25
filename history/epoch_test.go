package history

import (
	"context"
	"testing"
	"time"
)

// TestTimeBoundsBeforeEpoch: times at or before the Unix epoch (1969, the epoch itself)
// are kept, as times, beside an event without a time: read back as written, found by since and until
// bounds on either side of the epoch (a bound never matches an event without a time), paged through
// once in their order, and a session of such times starts and ends at them (docs/history.md "Events").
func TestTimeBoundsBeforeEpoch(t *testing.T) {
	root := t.TempDir()
	ix := openTestIndex(t)
	line := func(uuid, ts string) string {
		stamp := ""
		if ts != "" {
			stamp = `"timestamp":"` + ts + `",`
		}
		return `{"type":"user","uuid":"` + uuid + `",` + stamp + `"cwd":"/r","message":{"role":"user","content":"epochword ` + uuid + `"}}`
	}
	src := writeClaude(t, root, "-r", "s-epoch",
		line("u-none", ""), line("u-epoch", "1970-01-01T00:00:00Z"), line("u-moon", "1969-07-20T20:17:00.5Z"),
		line("u-real", "2026-02-01T10:00:00Z"))
	old := writeClaude(t, root, "-r", "s-old", line("o-1", "1969-12-31T23:59:59.999Z"), line("o-2", "1900-01-01T00:00:00Z"))
	ctx := context.Background()
	if _, err := ix.Import(ctx, []Source{src, old}); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := map[string]time.Time{"u-none#0": {}, "u-epoch#0": at("1970-01-01T00:00:00Z"), "u-moon#0": at("1969-07-20T20:17:00.5Z"),
		"u-real#0": at("2026-02-01T10:00:00Z"), "o-1#0": at("1969-12-31T23:59:59.999Z"), "o-2#0": at("1900-01-01T00:00:00Z")}
	all, err := ix.ListEvents(ctx, EventQuery{})
	if err != nil || len(all) != len(want) {
		t.Fatalf("all: %d %v", len(all), err)
	}
	for _, e := range all {
		if w := want[e.Event.NativeKey]; !e.Event.At.Equal(w) || e.Event.At.IsZero() != w.IsZero() {
			t.Errorf("%s: time %v, want %v", e.Event.NativeKey, e.Event.At, w)
		}
	}
	keys := func(evs []ListedEvent) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Event.NativeKey)
		}
		return out
	}
	for _, c := range []struct {
		since, until string
		want         []string // in time order
	}{
		{"1969-01-01T00:00:00Z", "", []string{"u-moon#0", "o-1#0", "u-epoch#0", "u-real#0"}},
		{"1970-01-01T00:00:00Z", "", []string{"u-epoch#0", "u-real#0"}},
		{"", "1970-01-01T00:00:00Z", []string{"o-2#0", "u-moon#0", "o-1#0"}},
		{"", "1970-01-02T00:00:00Z", []string{"o-2#0", "u-moon#0", "o-1#0", "u-epoch#0"}},
		{"1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00.001Z", []string{"o-1#0", "u-epoch#0"}},
	} {
		q := EventQuery{}
		if c.since != "" {
			q.Since = at(c.since)
		}
		if c.until != "" {
			q.Until = at(c.until)
		}
		evs, err := ix.ListEvents(ctx, q)
		if err != nil || len(evs) != len(c.want) {
			t.Errorf("list %s..%s: %v %v, want %v", c.since, c.until, keys(evs), err, c.want)
			continue
		}
		for i := range evs {
			if evs[i].Event.NativeKey != c.want[i] {
				t.Errorf("list %s..%s: %v, want %v", c.since, c.until, keys(evs), c.want)
				break
			}
		}
		res, err := ix.Search(ctx, Query{Text: "epochword", Since: q.Since, Until: q.Until, Limit: 50, Dense: true})
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, h := range res.Hits {
			found[h.Event.NativeKey] = true
		}
		if len(found) != len(c.want) {
			t.Errorf("search %s..%s: %d hits, want %d", c.since, c.until, len(found), len(c.want))
		}
		for _, k := range c.want {
			if !found[k] {
				t.Errorf("search %s..%s: %s not found (%d hits)", c.since, c.until, k, len(res.Hits))
			}
		}
		if found["u-none#0"] {
			t.Errorf("search %s..%s found the event without a time", c.since, c.until)
		}
	}
	// Paged one by one: every event once, in time order.
	var paged []string
	var after *EventPos
	for range 10 {
		evs, err := ix.ListEvents(ctx, EventQuery{Limit: 1, After: after})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		paged = append(paged, evs[0].Event.NativeKey)
		after = &evs[0].Pos
	}
	if len(paged) != len(want) || paged[0] != "o-2#0" || paged[len(paged)-1] != "u-real#0" {
		t.Errorf("paged: %v", paged)
	}
	s, err := ix.Session(ctx, "s-old")
	if err != nil || !s.StartedAt.Equal(want["o-2#0"]) || !s.EndedAt.Equal(want["o-1#0"]) {
		t.Errorf("session of times before the epoch: %v..%v %v", s.StartedAt, s.EndedAt, err)
	}
	if s, err := ix.Session(ctx, "s-epoch"); err != nil || !s.StartedAt.Equal(want["u-moon#0"]) || !s.EndedAt.Equal(want["u-real#0"]) {
		t.Errorf("session s-epoch: %v..%v %v", s.StartedAt, s.EndedAt, err)
	}
}

// TestAtMillis: the stored integer of a time keeps their order, 0 is no time only, and reads back.
func TestAtMillis(t *testing.T) {
	times := []time.Time{time.Date(-200, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.UnixMilli(-1).UTC(), time.UnixMilli(0).UTC(), time.UnixMilli(1).UTC(), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	for i, tm := range times {
		ms := atMillis(tm)
		if ms == 0 || !atTime(ms).Equal(tm) {
			t.Errorf("%v: stored %d, read back %v", tm, ms, atTime(ms))
		}
		if i > 0 && atMillis(times[i-1]) >= ms {
			t.Errorf("%v stored %d, not above %v's %d", tm, ms, times[i-1], atMillis(times[i-1]))
		}
	}
	if atMillis(time.Time{}) != 0 || !atTime(0).IsZero() {
		t.Errorf("no time is not 0")
	}
	if atMillis(time.UnixMilli(5000).UTC()) != 5000 {
		t.Errorf("a time after the epoch is not its Unix milliseconds")
	}
}
