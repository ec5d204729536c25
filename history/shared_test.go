package history

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func sharedRecord(t *testing.T, h SharedHeader, evs ...SharedEvent) []byte {
	t.Helper()
	var b strings.Builder
	for _, v := range append([]any{h}, func() []any {
		out := make([]any, len(evs))
		for i := range evs {
			out[i] = evs[i]
		}
		return out
	}()...) {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func sharedSession(native string) (Session, SharedHeader) {
	s := Session{ID: SessionID(ClaudeCode, native), Provider: ClaudeCode, NativeID: native, CWD: "~/src/app", Title: "t"}
	return s, NewSharedHeader(s)
}

func sharedEvent(sid, key, text string) SharedEvent {
	return NewSharedEvent(Event{ID: EventID(sid, key), NativeKey: key, Type: Message, Role: "user", Text: text, Seq: 1})
}

func TestParseSharedRoundTrip(t *testing.T) {
	s, h := sharedSession("native-1")
	rec := sharedRecord(t, h, sharedEvent(s.ID, "k1", "hello"), sharedEvent(s.ID, "k2", "world"))
	got, evs, bad, err := ParseShared(rec, s.ID)
	if err != nil || bad != 0 || got.ID != s.ID || got.CWD != "~/src/app" || len(evs) != 2 || evs[1].Seq != 2 || evs[1].Text != "world" {
		t.Fatalf("ParseShared: %+v %+v bad %d err %v", got, evs, bad, err)
	}
}

// TestParseSharedRefusesHostileRecords: a record from the branch is a teammate's (or an attacker's) file:
// a header naming another session, an id that is not the id of its native id, forged event ids, control
// characters, a path in an id, and an oversized record are refused or neutralised.
func TestParseSharedRefusesHostileRecords(t *testing.T) {
	s, h := sharedSession("native-1")
	// The header claims another session than the file is named after.
	if _, _, _, err := ParseShared(sharedRecord(t, h), SessionID(ClaudeCode, "other")); err == nil {
		t.Errorf("a record named after another session was accepted")
	}
	// A header whose ctx_session_id is not derived from its provider and native id.
	forged := h
	forged.NativeID = "../../../etc/passwd"
	if _, _, _, err := ParseShared(sharedRecord(t, forged), s.ID); err == nil {
		t.Errorf("a header with a forged native id was accepted")
	}
	// A native id with a path in it is only data: its id is derived, the file is named by that id.
	_, trav := sharedSession("../../.git/hooks/post-commit")
	if got, _, _, err := ParseShared(sharedRecord(t, trav), trav.SessionID); err != nil || !ValidSessionID(got.ID) {
		t.Errorf("traversal native id: %+v %v", got, err)
	}
	// No header, unknown provider.
	if _, _, _, err := ParseShared(sharedRecord(t, h)[len(sharedRecord(t, h)):], s.ID); err == nil {
		t.Errorf("an empty record was accepted")
	}
	bp := h
	bp.Provider = "evil"
	if _, _, _, err := ParseShared(sharedRecord(t, bp), ""); err == nil {
		t.Errorf("an unknown provider was accepted")
	}
	// Forged event ids are dropped; a repeated id is kept once; control characters are neutralised.
	good := sharedEvent(s.ID, "k1", "a\x1b[31mred\x1b[0m\x07 text\x00")
	forgedEv := sharedEvent(s.ID, "k2", "forged")
	forgedEv.ID = EventID(SessionID(ClaudeCode, "victim"), "k2")
	rec := sharedRecord(t, h, good, good, forgedEv)
	rec = append(rec, []byte("not json\n{\"kind\":\"weird\"}\n")...)
	_, evs, bad, err := ParseShared(rec, s.ID)
	if err != nil || len(evs) != 1 || bad != 4 {
		t.Fatalf("events %+v bad %d err %v", evs, bad, err)
	}
	if strings.ContainsAny(evs[0].Text, "\x1b\x07\x00") || !strings.Contains(evs[0].Text, "red") {
		t.Errorf("control characters kept: %q", evs[0].Text)
	}
	// A huge text is cut; a record over the bound is refused before parsing.
	huge := sharedEvent(s.ID, "k3", strings.Repeat("x", MaxTextBytes+100))
	if _, evs, _, err := ParseShared(sharedRecord(t, h, huge), s.ID); err != nil || len(evs[0].Text) > MaxTextBytes {
		t.Errorf("huge text: %v", err)
	}
	if _, _, _, err := ParseShared(make([]byte, MaxSharedBytes+1), s.ID); err == nil {
		t.Errorf("an oversized record was accepted")
	}
}

func TestImportSharedKeepsLocalSessions(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	s, h := sharedSession("native-1")
	rec := sharedRecord(t, h, sharedEvent(s.ID, "k1", "shared words"))
	res, err := ix.ImportShared(ctx, "transcripts/0000/00/"+s.ID+".ndjson", "blob1", s.ID, rec)
	if err != nil || res.Action != "imported" || res.Events != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if res, _ := ix.ImportShared(ctx, "transcripts/0000/00/"+s.ID+".ndjson", "blob1", s.ID, rec); res.Action != "unchanged" {
		t.Errorf("same blob: %+v", res)
	}
	got, err := ix.Session(ctx, s.ID)
	if err != nil || got.SourceFormat != FormatShared || !strings.HasPrefix(got.SourcePath, "ctx:transcripts/") {
		t.Errorf("session %+v %v", got, err)
	}
	hits, err := ix.Search(ctx, Query{Text: "shared words"})
	if err != nil || len(hits.Hits) != 1 || hits.Hits[0].Event.ID != EventID(s.ID, "k1") {
		t.Errorf("search: %+v %v", hits, err)
	}
	// A hostile record fails and leaves the indexed one.
	res, err = ix.ImportShared(ctx, "transcripts/0000/00/"+s.ID+".ndjson", "blob2", s.ID, []byte("{}\n"))
	if err != nil || res.Action != "failed" {
		t.Errorf("bad record: %+v %v", res, err)
	}
	if got, _ := ix.Session(ctx, s.ID); got.EventCount != 1 {
		t.Errorf("the failed record changed the session: %+v", got)
	}
	// A session whose own transcript is indexed here is not replaced by a shared record.
	if _, err := ix.db.ExecContext(ctx, `UPDATE sessions SET source_format='claude_jsonl' WHERE id=?`, s.ID); err != nil {
		t.Fatal(err)
	}
	if res, _ := ix.ImportShared(ctx, "transcripts/0000/00/"+s.ID+".ndjson", "blob3", s.ID, rec); res.Action != "local" {
		t.Errorf("local session: %+v", res)
	}
}

// ImportShared writes ev_fts like every other writer: its transaction restores FTS5's default merge
// policy left by a killed first import and records the hash size.
func TestImportSharedRestoresMergePolicy(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	for _, q := range []string{
		`INSERT INTO ev_fts(ev_fts, rank) VALUES('automerge', 0)`,
		`INSERT INTO ev_fts(ev_fts, rank) VALUES('crisismerge', 64)`,
	} {
		if _, err := ix.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, h := sharedSession("native-policy")
	rec := sharedRecord(t, h, sharedEvent(s.ID, "k1", "shared words"))
	if res, err := ix.ImportShared(ctx, "transcripts/0000/00/"+s.ID+".ndjson", "blob1", s.ID, rec); err != nil || res.Action != "imported" {
		t.Fatalf("%+v %v", res, err)
	}
	if a, c := ftsPolicy(t, ix); a != ftsAutomerge || c != ftsCrisismerge {
		t.Fatalf("after ImportShared: automerge %d, crisismerge %d; want %d and %d", a, c, ftsAutomerge, ftsCrisismerge)
	}
	have, err := ftsConfig(ctx, ix.db)
	if err != nil || have["hashsize"] != ftsHashSize {
		t.Fatalf("hashsize %v (%v), want %d", have["hashsize"], err, ftsHashSize)
	}
}
