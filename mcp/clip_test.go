package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
)

// withResponseLimit sets the response limit to n bytes for the rest of the test: the paths that fit a
// response to the limit are the same at any limit, and a response over 64 KiB costs a sixteenth of one
// over 1 MiB to encode, decode and check under the race detector.
func withResponseLimit(t *testing.T, n int) {
	old := maxResponseBytes
	maxResponseBytes = n
	t.Cleanup(func() { maxResponseBytes = old })
}

// TestAgentHistoryOversizedEvent: events over the response limit (responseLimitSmall, 64 KiB in make test:
// a 68 KiB message; a Bash call whose 68 KiB command is its input and a fact; its 68 KiB output; at 1 MiB
// under make stress, 1.06 MiB events, which the import cuts to 1 MiB) never stop the paging:
// show_session (any limit) and query_events (content full and text) page through every event, each
// response within the limit, each oversized event cut with a marker and `clipped` that say so and name
// the CLI command that prints it whole; show_event shows it cut too, with its window.
func TestAgentHistoryOversizedEvent(t *testing.T) {
	withResponseLimit(t, responseLimitSmall)
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	ctx := context.Background()
	root := t.TempDir()
	over := maxResponseBytes + maxResponseBytes>>4
	huge := strings.Repeat("x", over)
	cmd := "echo " + strings.Repeat("y", over)
	out := strings.Repeat("z", over)
	recs := []map[string]any{
		{"type": "user", "uuid": "u0", "timestamp": "2026-02-01T10:00:00Z", "message": map[string]any{"role": "user", "content": "first"}},
		{"type": "user", "uuid": "u1", "timestamp": "2026-02-01T10:00:01Z", "message": map[string]any{"role": "user", "content": huge}},
		{"type": "assistant", "uuid": "a2", "timestamp": "2026-02-01T10:00:02Z", "message": map[string]any{"role": "assistant",
			"content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": cmd}}}}},
		{"type": "user", "uuid": "u3", "timestamp": "2026-02-01T10:00:03Z", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": out}}}},
		{"type": "user", "uuid": "u4", "timestamp": "2026-02-01T10:00:04Z", "message": map[string]any{"role": "user", "content": "after the big ones"}},
		{"type": "user", "uuid": "u5", "timestamp": "2026-02-01T10:00:05Z", "message": map[string]any{"role": "user", "content": "last"}},
	}
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(mustJSON(r) + "\n")
	}
	if err := os.MkdirAll(filepath.Join(root, "-w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "-w", "big.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(t.TempDir(), "history")
	reimport(t, hist, root)
	s := serve(t, st, Options{HistoryDir: hist}, "")
	id := history.SessionID(history.ClaudeCode, "big")
	whole, err := func() ([]history.Event, error) {
		ix, err := history.Open(ctx, hist)
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		return ix.Events(ctx, id, 0, 0)
	}()
	if err != nil || len(whole) != len(recs) {
		t.Fatalf("events: %d %v", len(whole), err)
	}
	byID := map[string]history.Event{}
	for _, e := range whole {
		byID[e.ID] = e
	}

	// checkRow: a row is its event whole, or cut (text, tool fields, facts) with the marker and `clipped`.
	checkRow := func(what string, row map[string]any) {
		t.Helper()
		e := byID[fmt.Sprint(row["ctx_event_id"])]
		fields := map[string][2]string{"text": {fmt.Sprint(row["text"]), e.Text}}
		if tool := obj(row["tool"]); tool != nil && e.Tool != nil {
			fields["tool.input"] = [2]string{fmt.Sprint(tool["input"]), e.Tool.Input}
			fields["tool.output"] = [2]string{fmt.Sprint(tool["output"]), e.Tool.Output}
		}
		for i, f := range list(row, "facts") {
			fields[fmt.Sprintf("facts.%d", i)] = [2]string{fmt.Sprint(obj(f)["value"]), e.Facts[i].Value}
		}
		full := "ctx show event " + e.ID + " --json"
		cut := false
		for name, f := range fields {
			got, want := f[0], f[1]
			if want == "" && got == "<nil>" {
				continue
			}
			if got == want {
				continue
			}
			head, marker, ok := strings.Cut(got, "\n[… ")
			if !ok || !strings.HasPrefix(want, head) || !strings.Contains(marker, full) ||
				!strings.Contains(marker, fmt.Sprintf("%d bytes cut", len(want)-len(head))) {
				t.Errorf("%s: event %d's %s is neither whole nor cut with its marker: %d bytes, %.100q ... %.200q", what, e.Seq,
					name, len(got), got, got[max(0, len(got)-200):])
			}
			cut = true
		}
		note := obj(row["clipped"])
		if cut != (note != nil) || (cut && note["full"] != full) {
			t.Errorf("%s: event %d cut %v, clipped %v", what, e.Seq, cut, row["clipped"])
		}
	}
	// size checks that a response is within the limit, as the client received it.
	size := func(what string, v any) {
		t.Helper()
		if b, _ := json.Marshal(v); len(b)+responseEnvelope > maxResponseBytes {
			t.Errorf("%s: %d bytes", what, len(b))
		}
	}

	for _, limit := range []int{4096} { // a page of any limit moves on; each of these events is a page of its own
		var seen []string
		var cursor any
		for page := 0; page < 20; page++ {
			args := map[string]any{"ctx_session_id": id, "limit": limit, "mode": "log"}
			if cursor != nil {
				args["cursor"] = cursor
			}
			what := fmt.Sprintf("show_session limit %d page %d", limit, page+1)
			r := s.call(t, "show_session", args)
			size(what, r)
			res := structured(t, what, r)
			for _, ev := range list(res, "events") {
				checkRow(what, obj(ev))
				seen = append(seen, fmt.Sprint(obj(ev)["ctx_event_id"]))
			}
			pg := obj(res["pagination"])
			if pg["has_more"] != true {
				break
			}
			cursor = pg["next_cursor"]
		}
		if len(seen) != len(whole) {
			t.Errorf("show_session limit %d: %d events, want %d", limit, len(seen), len(whole))
		}
	}
	for _, content := range []string{"full", "text"} {
		var seen int
		var cursor any
		for page := 0; page < 20; page++ {
			args := map[string]any{"ctx_session_id": id, "content": content}
			if cursor != nil {
				args["cursor"] = cursor
			}
			what := fmt.Sprintf("query_events content %s page %d", content, page+1)
			r := s.call(t, "query_events", args)
			size(what, r)
			res := structured(t, what, r)
			for _, ev := range list(res, "events") {
				checkRow(what, obj(ev))
				seen++
			}
			if res["next_cursor"] == nil {
				break
			}
			cursor = res["next_cursor"]
		}
		if seen != len(whole) {
			t.Errorf("query_events content %s: %d events, want %d", content, seen, len(whole))
		}
	}
	for _, e := range whole[1:3] {
		r := s.call(t, "show_event", map[string]any{"ctx_event_id": e.ID, "window": 1})
		size("show_event", r)
		res := structured(t, "show_event", r)
		checkRow("show_event", obj(res["event"]))
		if obj(res["event"])["clipped"] == nil {
			t.Errorf("show_event of event %d: not cut", e.Seq)
		}
		for k, want := range map[string]int{"before": 1, "after": 1} {
			if len(list(res, k)) != want {
				t.Errorf("show_event of event %d: %d %s, want %d", e.Seq, len(list(res, k)), k, want)
			}
			for _, ev := range list(res, k) {
				checkRow("show_event "+k, obj(ev))
			}
		}
	}
}
