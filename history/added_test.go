package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestAddedCountsNewEventsOnly: an import's "events added" counts the events it inserted that the index
// did not hold (docs/history.md "Incremental import"). Two imports at once (two index handles, as two
// processes: one reads a source, the other imports it and commits, then the first writes) add each event
// once and the second reports none added; with an appended log read by both, the second adds nothing
// twice. An OpenCode session read again whole after a change reports only its new events.
func TestAddedCountsNewEventsOnly(t *testing.T) {
	ctx := context.Background()
	corpus := corpusDir(t)
	dir := filepath.Join(t.TempDir(), "history")
	open := func() *Index {
		ix, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	a, b := open(), open()
	stats := func() Stats {
		st, err := a.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// A log that grows: turn-1, then turn-2 (turn-1 plus appended lines).
	root := t.TempDir()
	name := filepath.Join(root, "proj", "3fb74381-1bf4-475e-8c6f-442d872b1bcf.jsonl")
	copyFile(t, filepath.Join(corpus, "claude-code", "codemie-incremental", "turn-1.jsonl"), name)
	srcs, err := Discover(ctx, ClaudeCode, root, false)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("discover: %v %v", srcs, err)
	}
	src := srcs[0]
	for round, file := range []string{"turn-1.jsonl", "turn-2.jsonl"} {
		copyFile(t, filepath.Join(corpus, "claude-code", "codemie-incremental", file), name)
		before := stats().Events
		// a reads the source; b imports it whole and commits; then a writes what it read.
		ra, pa, err := a.prepare(ctx, src)
		if err != nil || pa == nil {
			t.Fatalf("round %d: prepare %+v %v", round, ra, err)
		}
		stb, err := b.Import(ctx, []Source{src})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.writeBatch(ctx, []*pending{pa}, []*SourceResult{&ra}); err != nil {
			t.Fatal(err)
		}
		after := stats().Events
		if stb.Events != after-before || stb.Events == 0 {
			t.Errorf("round %d: the first import added %d events, the index grew by %d", round, stb.Events, after-before)
		}
		if ra.Events != 0 {
			t.Errorf("round %d: the second import reports %d events added (action %s), it added none", round, ra.Events, ra.Action)
		}
	}
	// The same as one import of turn-2 alone.
	fresh := openTestIndex(t)
	if _, err := fresh.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	if got, want := eventIDs(t, a, onlySession(t, a)), eventIDs(t, fresh, onlySession(t, fresh)); len(got) != len(want) {
		t.Errorf("after two imports at once: %d events, one import: %d", len(got), len(want))
	}

	// OpenCode: a session read again whole after a change adds only its new events.
	oc := t.TempDir()
	w := func(rel, body string) {
		p := filepath.Join(oc, "storage", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("session/proj/ses_1.json", `{"id":"ses_1","directory":"/w","time":{"created":1}}`)
	w("message/ses_1/msg_0001.json", `{"id":"m_one","role":"user","time":{"created":2}}`)
	w("part/m_one/001.json", `{"id":"p1","type":"text","text":"first"}`)
	w("message/ses_1/msg_0002.json", `{"id":"m_two","role":"assistant","time":{"created":3}}`)
	w("part/m_two/001.json", `{"id":"p2","type":"text","text":"an answer"}`)
	ocs, err := Discover(ctx, OpenCode, oc, false)
	if err != nil || len(ocs) != 1 {
		t.Fatalf("%+v %v", ocs, err)
	}
	ix := openTestIndex(t)
	if st, err := ix.Import(ctx, ocs); err != nil || st.Events != 2 {
		t.Fatalf("first: %+v %v", st, err)
	}
	w("session/proj/ses_1.json", `{"id":"ses_1","directory":"/w","title":"renamed","time":{"created":1}}`)
	if st, err := ix.Import(ctx, ocs); err != nil || st.Imported != 1 || st.Events != 0 {
		t.Errorf("after a new title: %+v %v, want 1 source imported, 0 events added", st, err)
	}
	w("message/ses_1/msg_0003.json", `{"id":"m_three","role":"user","time":{"created":4}}`)
	w("part/m_three/001.json", `{"id":"p3","type":"text","text":"more"}`)
	if st, err := ix.Import(ctx, ocs); err != nil || st.Imported != 1 || st.Events != 1 {
		t.Errorf("after a new message: %+v %v, want 1 event added", st, err)
	}
}

// onlySession is the id of the only session in ix.
func onlySession(t *testing.T, ix *Index) string {
	t.Helper()
	ss, err := ix.Sessions(context.Background(), "", 0)
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions: %v %v", ss, err)
	}
	return ss[0].ID
}
