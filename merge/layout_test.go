package merge

import (
	"strings"
	"testing"
)

func sess(id, started, summary string) string {
	return `{"id": "` + id + `", "started": "` + started + `", "ended": null, "summary": "` + summary + `"}` + "\n"
}

// TestTreeSessionBothLayouts: one side moved a session to history/YYYY/MM/, the other (flat layout)
// changed it at history/<id>.json and added a flat one: one record each, the edit kept, no conflict.
func TestTreeSessionBothLayouts(t *testing.T) {
	base := files("history/s1.json", sess("s1", "2025-05-10T14:00:00Z", "first"))
	ours := files("history/2025/05/s1.json", sess("s1", "2025-05-10T14:00:00Z", "first"))
	theirs := files("history/s1.json", sess("s1", "2025-05-10T14:00:00Z", "ended"),
		"history/s2.json", sess("s2", "2025-06-01T00:00:00Z", "new"))
	r := treeBoth(t, base, ours, theirs)
	if len(r.Files) != 2 || !strings.Contains(string(r.Files["history/2025/05/s1.json"]), `"ended"`) ||
		r.Files["history/s2.json"] == nil || len(r.Conflicts) != 0 || len(r.Notes) != 0 {
		t.Fatalf("files %v conflicts %v notes %v", keys(r.Files), r.Conflicts, r.Notes)
	}
	// Both sides changed it, one in each layout: a field merge at the sharded path, as for one path.
	ours["history/2025/05/s1.json"] = []byte(sess("s1", "2025-05-10T14:00:00Z", "ours"))
	r = treeBoth(t, base, ours, theirs)
	if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "history/2025/05/s1.json" || r.Conflicts[0].Field != "summary" {
		t.Fatalf("conflicts %+v", r.Conflicts)
	}
	// A side that holds both layouts of one session is merged path by path (nothing dropped).
	both := files("history/s1.json", sess("s1", "2025-05-10T14:00:00Z", "a"), "history/2025/05/s1.json", sess("s1", "2025-05-10T14:00:00Z", "b"))
	r = treeBoth(t, base, both, ours)
	if r.Files["history/s1.json"] == nil || r.Files["history/2025/05/s1.json"] == nil {
		t.Fatalf("a side holding both layouts lost one: %v", keys(r.Files))
	}
}

// TestTreeLogBothLayouts: one side split a skill log into month files, the other appended to the flat log:
// the union by month, no flat file left, no conflict; a line whose timestamp does not parse stays flat.
func TestTreeLogBothLayouts(t *testing.T) {
	l1 := `{"id":"u1","timestamp":"2025-05-10T14:05:00Z"}`
	l2 := `{"id":"u2","timestamp":"2025-06-01T09:05:00Z"}`
	l3 := `{"id":"u3","timestamp":"2025-06-02T09:05:00Z"}`
	odd := `{"id":"u4","timestamp":"soon"}`
	flat := "skills/lint/.usage.ndjson"
	base := files(flat, l1+"\n"+l2+"\n")
	months, residue := SplitLog(base[flat])
	if len(months) != 2 || residue != nil || string(months["2025/06"]) != l2+"\n" {
		t.Fatalf("SplitLog: %q %q", months, residue)
	}
	ours := Files{}
	for m, b := range months {
		ours[LogMonthPath("skills/lint", "usage", m)] = b
	}
	theirs := files(flat, l1+"\n"+l2+"\n"+l3+"\n"+odd+"\n")
	r := treeBoth(t, base, ours, theirs)
	if got := string(r.Files["skills/lint/.usage/2025-06.ndjson"]); got != l2+"\n"+l3+"\n" {
		t.Errorf("June: %q", got)
	}
	if got := string(r.Files["skills/lint/.usage/2025-05.ndjson"]); got != l1+"\n" {
		t.Errorf("May: %q", got)
	}
	if got := string(r.Files[flat]); got != odd+"\n" || len(r.Files) != 3 || len(r.Conflicts) != 0 {
		t.Errorf("files %v flat %q conflicts %v", keys(r.Files), got, r.Conflicts)
	}
	// Unchanged flat side against the split: the split wins whole.
	r = treeBoth(t, base, ours, base)
	if len(r.Files) != 2 || r.Files[flat] != nil {
		t.Errorf("unchanged flat side: %v", keys(r.Files))
	}
}

func TestLayoutNames(t *testing.T) {
	for p, want := range map[string]string{
		"history/x.json": "x", "history/2026/11/x.json": "x", "history/2026/13/x.json": "", "history/..": "",
		"history/.private/x.json": "", "history/misc/11/x.json": "", "history/2026/11/.json": "", "knowledge/x.json": "",
	} {
		if got, _ := SessionID(p); got != want {
			t.Errorf("SessionID(%q) = %q, want %q", p, got, want)
		}
	}
	for ts, want := range map[string]string{"2026-11-30T23:59:59Z": "2026/11", "2026-11-30T23:59:59-02:00": "2026/12",
		"2026-01-02": "2026/01", "yesterday": "", "": ""} {
		if got, _ := Month(ts); got != want {
			t.Errorf("Month(%q) = %q, want %q", ts, got, want)
		}
	}
	if SessionPath("x", "nope", true) != "history/x.json" || SessionPath("x", "2026-11-30T10:00:00Z", false) != "history/x.json" {
		t.Error("SessionPath falls back to the flat path")
	}
}

func keys(f Files) []string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	return out
}
