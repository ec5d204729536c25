package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/redact/redacttest"
	"github.com/ctx-dev/ctx/store/storetest"
)

const sid = "01c8c315-8e07-81e7-af92-11b2972fb290"

func line(t *testing.T, id, ts, text string) store.TranscriptLine {
	t.Helper()
	l, err := store.EncodeTranscriptLine(id, ts, map[string]string{"id": id, "timestamp": ts, "text": text})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestTranscriptPath(t *testing.T) {
	p, err := store.TranscriptPath(sid, time.Date(2026, 11, 30, 23, 0, 0, 0, time.FixedZone("x", -3600*5)))
	if err != nil || p != "transcripts/2026/12/"+sid+".ndjson" {
		t.Errorf("%q %v", p, err)
	}
	if p, _ := store.TranscriptPath(sid, time.Time{}); p != "transcripts/0000/00/"+sid+".ndjson" {
		t.Errorf("undated: %q", p)
	}
	for _, id := range []string{"../../x", "", strings.ToUpper(sid), sid + "/..", "x"} {
		if _, err := store.TranscriptPath(id, time.Now()); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("TranscriptPath(%q): %v", id, err)
		}
	}
	for p, ok := range map[string]bool{
		"transcripts/2026/11/" + sid + ".ndjson":    true,
		"transcripts/0000/00/" + sid + ".ndjson":    true,
		"transcripts/2026/13/" + sid + ".ndjson":    false,
		"transcripts/2026/00/" + sid + ".ndjson":    false,
		"transcripts/2026/11/x.ndjson":              false,
		"transcripts/2026/11/" + sid + ".json":      false,
		"transcripts/" + sid + ".ndjson":            false,
		"transcripts/2026/11/12/" + sid + ".ndjson": false,
	} {
		if err := store.LayoutPath(p); (err == nil) != ok {
			t.Errorf("LayoutPath(%q) = %v, want ok %v", p, err, ok)
		}
	}
}

// TestShareTranscriptAppendsByID: a record is written in one commit; sharing it again adds only the
// lines whose id it does not hold (existing lines kept byte for byte), in timestamp order; nothing new
// commits nothing; a malformed line, a path outside the layout and a secret refuse the whole write.
func TestShareTranscriptAppendsByID(t *testing.T) {
	f := newFixture(t)
	p := "transcripts/2026/11/" + sid + ".ndjson"
	head := line(t, "00000000-0000-0000-0000-000000000000", "2026-11-30T10:00:00.000Z", "header")
	a := line(t, "aaaa", "2026-11-30T10:00:01.000Z", "first")
	c := line(t, "cccc", "2026-11-30T10:00:03.000Z", "third")
	f.commits("ctx", 1, func() {
		res, _, err := f.s.ShareTranscript(f.ctx, p, sid, []store.TranscriptLine{head, c, a})
		if err != nil || res.Added != 3 || res.Commit == "" {
			t.Fatalf("%+v %v", res, err)
		}
	})
	f.trailers("ctx", "transcript.share", sid)
	changed := line(t, "aaaa", "2026-11-30T10:00:01.000Z", "rewritten")
	b := line(t, "bbbb", "2026-11-30T10:00:02.000Z", "second")
	f.commits("ctx", 1, func() {
		res, _, err := f.s.ShareTranscript(f.ctx, p, sid, []store.TranscriptLine{head, changed, b, c})
		if err != nil || res.Added != 1 || res.Existing != 3 {
			t.Fatalf("%+v %v", res, err)
		}
	})
	got := storetest.Show(t, f.dir, "ctx", p)
	want := string(head.JSON) + "\n" + string(a.JSON) + "\n" + string(b.JSON) + "\n" + string(c.JSON) // Show trims the last newline
	if got != want {
		t.Errorf("record:\n%s\nwant:\n%s", got, want)
	}
	f.commits("ctx", 0, func() {
		if res, _, err := f.s.ShareTranscript(f.ctx, p, sid, []store.TranscriptLine{a, b}); err != nil || res.Added != 0 {
			t.Fatalf("%+v %v", res, err)
		}
	})
	ts, err := f.view().SharedTranscripts(f.ctx)
	if err != nil || len(ts) != 1 || ts[0].SessionID != sid || ts[0].Path != p || len(ts[0].Blob) != 40 {
		t.Errorf("SharedTranscripts: %+v %v", ts, err)
	}
	f.commits("ctx", 0, func() {
		bad := store.TranscriptLine{ID: "dddd", JSON: []byte("{\"id\":\"dddd\"}\n{\"id\":\"eeee\"}")}
		if _, _, err := f.s.ShareTranscript(f.ctx, p, sid, []store.TranscriptLine{bad}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("two lines in one: %v", err)
		}
		if _, _, err := f.s.ShareTranscript(f.ctx, "transcripts/../knowledge/x.md", sid, []store.TranscriptLine{a}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("path outside the layout: %v", err)
		}
		secret := line(t, "ffff", "2026-11-30T10:00:04.000Z", redacttest.Plants()[3].Line)
		if _, _, err := f.s.ShareTranscript(f.ctx, p, sid, []store.TranscriptLine{secret}); !errors.Is(err, store.ErrSecret) {
			t.Errorf("an unredacted secret: %v", err)
		}
	})
}
