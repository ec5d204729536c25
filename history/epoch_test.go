package history

import (
	"context"
	"testing"
	"time"
)

// TestTimeBoundsBeforeEpoch: a time bound at or before the Unix epoch never matches an event without a
// time, and a time at or before the epoch is read as no time, alike in list and search (docs/history.md
// "Times").
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
		line("u-none", ""), line("u-epoch", "1970-01-01T00:00:00Z"), line("u-moon", "1969-07-20T20:17:00Z"),
		line("u-real", "2026-02-01T10:00:00Z"))
	ctx := context.Background()
	if _, err := ix.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	all, err := ix.ListEvents(ctx, EventQuery{})
	if err != nil || len(all) != 4 {
		t.Fatalf("all: %d %v", len(all), err)
	}
	for _, e := range all {
		if e.Event.NativeKey != "u-real#0" && !e.Event.At.IsZero() {
			t.Errorf("%s kept time %v", e.Event.NativeKey, e.Event.At)
		}
	}
	for _, since := range []string{"1969-01-01T00:00:00Z", "1970-01-01T00:00:00Z"} {
		s, _ := time.Parse(time.RFC3339, since)
		evs, err := ix.ListEvents(ctx, EventQuery{Since: s})
		if err != nil || len(evs) != 1 || evs[0].Event.NativeKey != "u-real#0" {
			t.Errorf("list since %s: %d events %v", since, len(evs), err)
		}
		res, err := ix.Search(ctx, Query{Text: "epochword", Since: s})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].Event.NativeKey != "u-real#0" {
			t.Errorf("search since %s: %+v %v", since, res.Hits, err)
		}
	}
	u, _ := time.Parse(time.RFC3339, "1970-01-02T00:00:00Z")
	if evs, err := ix.ListEvents(ctx, EventQuery{Until: u}); err != nil || len(evs) != 0 {
		t.Errorf("until 1970-01-02: %d %v", len(evs), err)
	}
}
