package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkGroupMap fails unless ev_group holds exactly one row per event, naming the root group and scope
// its session has in the sessions table (docs/history.md "The index"), and no event shares a group
// number with an event of another root group.
func checkGroupMap(t *testing.T, ix *Index, when string) {
	t.Helper()
	ctx := context.Background()
	want := map[int64]string{} // event rowid → root key + "/" + scope
	err := ix.scanRows(ctx, `SELECT e.rowid, `+groupKeySQL("s")+`, s.scope FROM events e JOIN sessions s ON s.id = e.session_id`, nil, func(r *sql.Rows) error {
		var id int64
		var key, scope string
		if err := r.Scan(&id, &key, &scope); err != nil {
			return err
		}
		if scope != "subagent" {
			scope = "primary"
		}
		want[id] = key + "/" + scope
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var events int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if events != len(want) {
		t.Fatalf("%s: %d events, %d with a session", when, events, len(want))
	}
	got := map[int64]string{}
	err = ix.scanRows(ctx, `SELECT m.ev, r.key, m.grp & 1 FROM ev_group m LEFT JOIN ev_roots r ON r.n = m.grp >> 1`, nil, func(r *sql.Rows) error {
		var id, sub int64
		var key *string
		if err := r.Scan(&id, &key, &sub); err != nil {
			return err
		}
		if key == nil {
			return fmt.Errorf("event %d: group number without a key", id)
		}
		scope := "primary"
		if sub == 1 {
			scope = "subagent"
		}
		got[id] = *key + "/" + scope
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if !reflect.DeepEqual(got, want) {
		n := 0
		for id, w := range want {
			if got[id] != w && n < 5 {
				t.Errorf("%s: event %d maps to %q, its session says %q", when, id, got[id], w)
				n++
			}
		}
		for id, g := range got {
			if _, ok := want[id]; !ok && n < 10 {
				t.Errorf("%s: ev_group row %d (%q) without an event", when, id, g)
				n++
			}
		}
		t.Fatalf("%s: the map (%d rows) differs from the events (%d)", when, len(got), len(want))
	}
	if len(want) == 0 {
		t.Fatalf("%s: no events: the check tests nothing", when)
	}
}

// TestGroupMapMatchesEvents: the map from event to root group equals what the events and sessions tables
// say after a first import of the corpus, an append, a rewrite, a subagent imported before its parent
// (its root moves), a deleted source, a shared record and its replacement, and after a version 5 index
// is migrated in place (the search gives the same JSON before and after).
func TestGroupMapMatchesEvents(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ix.Close() }()
	importCorpus(t, ix)
	checkGroupMap(t, ix, "first import")

	root := t.TempDir()
	// A subagent imported before its parent: its root is its own until the parent arrives.
	sub := writeClaude(t, root, "-g/par-1/subagents", "agent-g1", rec("g1", "user", "/w", `"kumquat in the subagent"`), rec("g2", "user", "/w", `"kumquat again"`))
	sub.ParentNative = "par-1"
	if _, err := ix.Import(ctx, []Source{sub}); err != nil {
		t.Fatal(err)
	}
	checkGroupMap(t, ix, "subagent alone")
	par := writeClaude(t, root, "-g", "par-1", rec("q1", "user", "/w", `"kumquat in the parent"`))
	if _, err := ix.Import(ctx, []Source{par, sub}); err != nil {
		t.Fatal(err)
	}
	checkGroupMap(t, ix, "parent imported")
	var roots int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(DISTINCT grp >> 1) FROM ev_group WHERE ev IN (SELECT rowid FROM events WHERE session_id IN (?, ?))`,
		SessionID(ClaudeCode, "par-1"), SessionID(ClaudeCode, "par-1/agent-g1")).Scan(&roots); err != nil || roots != 1 {
		t.Fatalf("parent and subagent in %d groups (%v)", roots, err)
	}

	// Growth: records appended to the parent.
	f, err := os.OpenFile(par.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, rec("q2", "user", "/w", `"kumquat appended"`))
	f.Close()
	if res := importOne(t, ix, par); res.Events != 1 {
		t.Fatalf("append: %+v", res)
	}
	checkGroupMap(t, ix, "append")

	// A session whose scope changes while it keeps its events: a file imported as a primary session, then
	// a copy of it in another project folder (the same session) whose first record is a sidechain's (the
	// session's fields are its last imported file's).
	lone := writeClaude(t, root, "-g", "lone-g2", rec("h1", "user", "/w", `"kumquat alone"`))
	importOne(t, ix, lone)
	checkGroupMap(t, ix, "primary session")
	side := writeClaude(t, root, "-h", "lone-g2",
		`{"type":"user","uuid":"h2","isSidechain":true,"timestamp":"2026-02-01T10:00:01Z","message":{"role":"user","content":"kumquat no longer alone"}}`)
	if res := importOne(t, ix, side); res.Events != 1 {
		t.Fatalf("second file: %+v", res)
	}
	if got, err := ix.Session(ctx, SessionID(ClaudeCode, "lone-g2")); err != nil || got.Scope != "subagent" || got.EventCount != 2 {
		t.Fatalf("the session did not become a subagent keeping its events: %+v %v", got, err)
	}
	checkGroupMap(t, ix, "scope changed")

	// Rewrite: the subagent's file replaced by other records (its events are replaced).
	writeClaude(t, root, "-g/par-1/subagents", "agent-g1", rec("g9", "user", "/w", `"kumquat rewritten"`))
	importOne(t, ix, sub)
	checkGroupMap(t, ix, "rewrite")

	// Deletion: the parent's file is gone; its events leave, the subagent's root goes back to itself.
	if err := os.Remove(par.Path); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.PruneMissing(ctx, []string{root}); err != nil || n != 1 {
		t.Fatalf("prune: %d %v", n, err)
	}
	checkGroupMap(t, ix, "deleted source")

	// Shared records: imported, then replaced by another blob.
	s, h := sharedSession("native-shared-g")
	rec1 := sharedRecord(t, h, sharedEvent(s.ID, "k1", "kumquat shared"), sharedEvent(s.ID, "k2", "kumquat shared twice"))
	if res, err := ix.ImportShared(ctx, "transcripts/0000/00/"+s.ID+".ndjson", "blob1", s.ID, rec1); err != nil || res.Action != "imported" {
		t.Fatalf("%+v %v", res, err)
	}
	checkGroupMap(t, ix, "shared record")
	rec2 := sharedRecord(t, h, sharedEvent(s.ID, "k3", "kumquat shared again"))
	if res, err := ix.ImportShared(ctx, "transcripts/0000/00/"+s.ID+".ndjson", "blob2", s.ID, rec2); err != nil || res.Action != "imported" {
		t.Fatalf("%+v %v", res, err)
	}
	checkGroupMap(t, ix, "shared record replaced")

	// A version 5 index (no map) is migrated in place by Open: same events, same map, same search.
	queries := []Query{{Text: "the"}, {Text: "error", Limit: 50}, {Text: "kumquat"}, {Text: "session meta", Dense: true}, {Text: "test", Scope: ScopeTranscript}}
	var want []string
	for _, q := range queries {
		res, err := ix.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		want = append(want, string(b))
	}
	gen, _ := ix.Generation(ctx)
	for _, q := range []string{`DROP TABLE ev_group`, `DROP TABLE ev_roots`, `DROP TRIGGER ev_group_del`, `DROP TRIGGER ev_group_session_upd`,
		`PRAGMA user_version = 5`} {
		if _, err := ix.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	ix.Close()
	if ix, err = Open(ctx, dir); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := ix.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version %d %v", v, err)
	}
	if gen2, _ := ix.Generation(ctx); gen2 != gen {
		t.Errorf("the migration moved the generation: %d, was %d", gen2, gen)
	}
	checkGroupMap(t, ix, "migrated from version 5")
	for i, q := range queries {
		res, err := ix.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res); string(b) != want[i] {
			t.Errorf("%+v after the migration:\n%s\nwas\n%s", q, b, want[i])
		}
		if !strings.Contains(want[i], `"hits":[{`) {
			t.Errorf("%+v: no hits, the comparison tests nothing", q)
		}
	}
	// The migrated index keeps the map through the next import.
	writeClaude(t, root, "-g/par-1/subagents", "agent-g1", rec("g10", "user", "/w", `"kumquat after the migration"`))
	importOne(t, ix, sub)
	checkGroupMap(t, ix, "import after the migration")
}
