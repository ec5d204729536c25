package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
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
// under make stress, 1.06 MiB events, which the import cuts to 1 MiB) are never cut (docs/mcp.md
// "Oversized events", the contract's "an individually unrepresentable page fails with
// output_limit_exceeded rather than silently clipping an event"): a page holds the whole events before
// one (fewer than limit, has_more), the next page, whose first event it is, fails with
// output_limit_exceeded naming the event, the CLI command that prints it and a next_cursor after it, and
// paging on with that cursor reads every other event whole. Two 20 KiB events that fit one response
// each but not together come on two pages. query_events fails the same way, before loading the event (by
// its stored size), for content full, for text only where the text alone cannot fit, never for none;
// show_event fails for an event that cannot fit
// with its window. Every response is within the limit.
func TestAgentHistoryOversizedEvent(t *testing.T) {
	withResponseLimit(t, responseLimitSmall)
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	ctx := context.Background()
	root := t.TempDir()
	over := maxResponseBytes + maxResponseBytes>>4
	huge := strings.Repeat("x", over)
	cmd := "echo " + strings.Repeat("y", over)
	out := strings.Repeat("z", over)
	mid := strings.Repeat("m", maxResponseBytes*5/16)
	msg := func(uuid, at, text string) map[string]any {
		return map[string]any{"type": "user", "uuid": uuid, "timestamp": "2026-02-01T10:00:0" + at + "Z",
			"message": map[string]any{"role": "user", "content": text}}
	}
	recs := []map[string]any{
		msg("u0", "0", "first"),
		msg("u1", "1", huge),
		{"type": "assistant", "uuid": "a2", "timestamp": "2026-02-01T10:00:02Z", "message": map[string]any{"role": "assistant",
			"content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": cmd}}}}},
		{"type": "user", "uuid": "u3", "timestamp": "2026-02-01T10:00:03Z", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": out}}}},
		msg("u4", "4", "after the big ones"),
		msg("u5", "5", "then"),
		msg("u6", "6", mid),
		msg("u7", "7", mid+"!"),
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
	var order []string
	for _, e := range whole {
		byID[e.ID] = e
		order = append(order, e.ID)
	}
	// bigFull: the events whose full rows cannot fit (u1, a2, u3); bigText: whose text alone cannot (u1, and
	// u3 if the import keeps a tool's output as its text).
	bigFull, bigText := map[string]bool{}, map[string]bool{}
	for _, e := range whole {
		n := len(e.Text)
		if e.Tool != nil {
			n += len(e.Tool.Input) + len(e.Tool.Output)
		}
		bigFull[e.ID] = n > maxResponseBytes
		bigText[e.ID] = len(e.Text) > maxResponseBytes
	}
	if !bigFull[whole[1].ID] || !bigFull[whole[2].ID] || !bigFull[whole[3].ID] || bigFull[whole[6].ID] {
		t.Fatalf("fixture: oversized events %v", bigFull)
	}

	// checkRow: a row is its event whole (its text unless the row is a content "none" row).
	checkRow := func(what string, row map[string]any, withText bool) {
		t.Helper()
		e, ok := byID[fmt.Sprint(row["ctx_event_id"])]
		if !ok {
			t.Fatalf("%s: row of no event: %.200v", what, row)
		}
		if withText && e.Text != "" && row["text"] != e.Text {
			t.Errorf("%s: event %d's text is not whole: %d bytes of %d", what, e.Seq, len(fmt.Sprint(row["text"])), len(e.Text))
		}
		if tool := obj(row["tool"]); tool != nil && e.Tool != nil && (tool["input"] != e.Tool.Input || tool["output"] != e.Tool.Output) {
			t.Errorf("%s: event %d's tool is not whole", what, e.Seq)
		}
		if _, ok := row["clipped"]; ok {
			t.Errorf("%s: event %d has `clipped`", what, e.Seq)
		}
	}
	// size checks that a response is within the limit, as the client received it.
	size := func(what string, v any) {
		t.Helper()
		if b, _ := json.Marshal(v); len(b)+responseEnvelope > maxResponseBytes {
			t.Errorf("%s: %d bytes", what, len(b))
		}
	}
	// oversized checks that r is output_limit_exceeded for event want, naming it and the CLI command, and
	// returns its next_cursor (nil when none).
	oversized := func(what string, r *mcpgo.CallToolResult, want string) any {
		t.Helper()
		if code := errorCode(t, what, r); code != "output_limit_exceeded" {
			t.Fatalf("%s: %s, want output_limit_exceeded", what, code)
		}
		sc := obj(r.StructuredContent)
		if sc["ctx_event_id"] != want || !strings.Contains(fmt.Sprint(sc["message"]), "ctx show event "+want+" --json") {
			t.Errorf("%s: error for %v (%v), want event %s and the command that prints it", what, sc["ctx_event_id"], sc["message"], want)
		}
		if c, ok := sc["next_cursor"]; ok && !strings.Contains(resultText(r), fmt.Sprint(c)) {
			t.Errorf("%s: the text block lacks next_cursor: %s", what, resultText(r))
		}
		return sc["next_cursor"]
	}

	// walk pages a tool through the session: every event comes whole in order or as the error of a page
	// it begins, exactly the big ones; a page before a big event is shorter than limit with has_more.
	walk := func(tool string, args map[string]any, big map[string]bool, cursorOf func(res map[string]any) any) {
		t.Helper()
		var seen, failed []string
		pageOf := map[string]int{}
		shortBeforeBig := false
		var cursor any
		for page := 0; page < 20; page++ {
			a := maps.Clone(args)
			if cursor != nil {
				a["cursor"] = cursor
			}
			what := fmt.Sprintf("%s %v page %d", tool, args, page+1)
			r := s.call(t, tool, a)
			size(what, r)
			if r.IsError {
				want := order[min(len(seen), len(order)-1)]
				if cursor = oversized(what, r, want); cursor == nil {
					t.Fatalf("%s: no next_cursor after event %s", what, want)
				}
				if msg := fmt.Sprint(obj(r.StructuredContent)["message"]); tool == "query_events" && !strings.Contains(msg, "stored "+fmt.Sprint(args["content"])) {
					t.Errorf("%s: not refused before loading (by its stored size): %s", what, msg)
				}
				failed = append(failed, want)
				seen = append(seen, want)
				continue
			}
			res := structured(t, what, r)
			evs := list(res, "events")
			for _, ev := range evs {
				checkRow(what, obj(ev), args["content"] != "none")
				seen = append(seen, fmt.Sprint(obj(ev)["ctx_event_id"]))
				pageOf[seen[len(seen)-1]] = page
			}
			pg := obj(res["pagination"])
			if pg["has_more"] != true {
				break
			}
			if len(evs) < 100 && len(seen) < len(order) && big[order[len(seen)]] {
				shortBeforeBig = true
			}
			cursor = cursorOf(res)
		}
		if !slices.Equal(seen, order) {
			t.Errorf("%s %v: events %v, want %v", tool, args, seen, order)
		}
		var want []string
		for _, e := range order {
			if big[e] {
				want = append(want, e)
			}
		}
		if !slices.Equal(failed, want) {
			t.Errorf("%s %v: output_limit_exceeded for %v, want %v", tool, args, failed, want)
		}
		if args["content"] != "none" && pageOf[order[6]] == pageOf[order[7]] {
			t.Errorf("%s %v: the two 20 KiB events on one page", tool, args)
		}
		if len(want) > 0 && !shortBeforeBig {
			t.Errorf("%s %v: no page stopped short of a big event with has_more", tool, args)
		}
	}
	pageCursor := func(res map[string]any) any { return obj(res["pagination"])["next_cursor"] }
	walk("show_session", map[string]any{"ctx_session_id": id, "limit": 4096, "mode": "log"}, bigFull, pageCursor)
	topCursor := func(res map[string]any) any { return res["next_cursor"] }
	walk("query_events", map[string]any{"ctx_session_id": id, "content": "full"}, bigFull, topCursor)
	walk("query_events", map[string]any{"ctx_session_id": id, "content": "text"}, bigText, topCursor)
	walk("query_events", map[string]any{"ctx_session_id": id, "content": "none"}, nil, topCursor)

	// show_event: a big event fails alone and with a window; a small one whose window holds a big one
	// fails with its window, naming the big one of the window (not the small event asked
	// for) with the command that prints it and a smaller window, and shows without it.
	for _, e := range whole[1:4] {
		for _, w := range []int{0, 1} {
			what := fmt.Sprintf("show_event %d window %d", e.Seq, w)
			r := s.call(t, "show_event", map[string]any{"ctx_event_id": e.ID, "window": w})
			size(what, r)
			if c := oversized(what, r, e.ID); c != nil {
				t.Errorf("%s: next_cursor %v", what, c)
			}
		}
	}
	small := whole[4]
	for _, args := range []map[string]any{{"window": 1}, {"before": 1}, {"before": 3, "after": 3}} {
		args["ctx_event_id"] = small.ID
		what := fmt.Sprintf("show_event %v", args)
		r := s.call(t, "show_event", args)
		size(what, r)
		// The window's big events: whole[3] (before 1), or whole[1..3] (before 3), the largest named.
		want := whole[3].ID
		if args["before"] == 3 {
			want = order[1]
			for _, e := range whole[1:4] {
				if rowSize(eventOut(e, history.ClaudeCode)) > rowSize(eventOut(byID[want], history.ClaudeCode)) {
					want = e.ID
				}
			}
		}
		oversized(what, r, want)
		if msg := fmt.Sprint(obj(r.StructuredContent)["message"]); !strings.Contains(msg, "window") || !strings.Contains(msg, small.ID) {
			t.Errorf("%s: %s", what, msg)
		}
	}
	r := s.call(t, "show_event", map[string]any{"ctx_event_id": small.ID, "after": 1})
	size("show_event after 1", r)
	res := structured(t, "show_event after 1", r)
	checkRow("show_event", obj(res["event"]), true)
	for _, ev := range list(res, "after") {
		checkRow("show_event after", obj(ev), true)
	}
	if len(list(res, "after")) != 1 || len(list(res, "before")) != 0 {
		t.Errorf("show_event after 1: before %d, after %d", len(list(res, "before")), len(list(res, "after")))
	}
}
