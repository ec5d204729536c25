package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// kn builds a knowledge file in the docs/format.md layout.
func kn(updated, body string, extra ...string) string {
	fm := "---\nauthor: Ada Lovelace <ada@example.com>\nagent: claude-code\nupdated_at: " + updated +
		"\nprovenance: agent_generated\nscope: public\n"
	for _, e := range extra {
		fm += e + "\n"
	}
	return fm + "---\n" + body
}

// adr builds a decision file.
func adr(id int, uid, date, title, supersedes, supersededBy, body string) string {
	return fmt.Sprintf("---\nid: %d\nuid: %s\ntitle: %s\nstatus: accepted\ndate: %s\nauthor: Ada <ada@example.com>\nsupersedes: %s\nsuperseded_by: %s\n---\n%s",
		id, uid, title, date, supersedes, supersededBy, body)
}

const body5 = "# Architecture\n\nline 1\nline 2\nline 3\nline 4\nline 5\n"

func files(kv ...string) Files {
	f := Files{}
	for i := 0; i+1 < len(kv); i += 2 {
		f[kv[i]] = []byte(kv[i+1])
	}
	return f
}

// treeBoth runs Tree both ways round and fails unless both give the same
// result.
func treeBoth(t *testing.T, base, ours, theirs Files) Result {
	t.Helper()
	r1 := Tree(base, ours, theirs)
	r2 := Tree(base, theirs, ours)
	if !reflect.DeepEqual(r1.Files, r2.Files) {
		t.Errorf("Files depend on which side is ours:\n%s\n---\n%s", dump(r1), dump(r2))
	}
	if !reflect.DeepEqual(r1.Conflicts, r2.Conflicts) || !reflect.DeepEqual(r1.Notes, r2.Notes) {
		t.Errorf("Conflicts/Notes depend on which side is ours:\n%+v\n%+v", r1, r2)
	}
	for p, c := range r1.Files {
		if bytes.Contains(c, []byte("<<<<<<<")) || bytes.Contains(c, []byte(">>>>>>>")) {
			t.Errorf("conflict markers in %s", p)
		}
	}
	return r1
}

func TestTreeRules(t *testing.T) {
	state := func(fields string) string { return "{\n" + fields + "\n}\n" }
	tests := []struct {
		name              string
		base, ours, their Files
		want              Files // checked paths (nil value: must be absent)
		absent            []string
		conflicts         int
		conflictField     string
		notes             []string // kinds
	}{
		{
			name: "unchanged on both", base: files("a.txt", "x"), ours: files("a.txt", "x"), their: files("a.txt", "x"),
			want: files("a.txt", "x"),
		},
		{
			name: "one side changed", base: files("a.txt", "x"), ours: files("a.txt", "y"), their: files("a.txt", "x"),
			want: files("a.txt", "y"),
		},
		{
			name: "delete vs unchanged", base: files("knowledge/k.md", kn("2026-01-01T00:00:00Z", body5)),
			ours: files(), their: files("knowledge/k.md", kn("2026-01-01T00:00:00Z", body5)),
			absent: []string{"knowledge/k.md"},
		},
		{
			name: "delete vs edit: the edit survives", base: files("knowledge/k.md", kn("2026-01-01T00:00:00Z", body5)),
			ours: files(), their: files("knowledge/k.md", kn("2026-01-02T00:00:00Z", body5+"more\n")),
			want:          files("knowledge/k.md", kn("2026-01-02T00:00:00Z", body5+"more\n")),
			notes:         []string{"delete-vs-edit"},
			conflicts:     1, // the delete is the lost version: ctx conflicts lists it
			conflictField: "",
		},
		{
			name: "added on one side", base: files(), ours: files("history/s1.json", "{}\n"), their: files("history/s2.json", "{\"a\": 1}\n"),
			want: files("history/s1.json", "{}\n", "history/s2.json", "{\"a\": 1}\n"),
		},
		{
			name: "knowledge body: different places merge, later updated_at",
			base: files("knowledge/arch.md", kn("2026-01-01T00:00:00Z", body5)),
			ours: files("knowledge/arch.md", kn("2026-01-02T00:00:00Z", strings.Replace(body5, "line 1", "LINE ONE", 1))),
			their: files("knowledge/arch.md", kn("2026-01-03T00:00:00Z", strings.Replace(body5, "line 5", "LINE FIVE", 1),
				"tags: [db]")),
			want: files("knowledge/arch.md", kn("2026-01-03T00:00:00Z",
				strings.Replace(strings.Replace(body5, "line 1", "LINE ONE", 1), "line 5", "LINE FIVE", 1), "tags: [db]")),
		},
		{
			name:          "knowledge body: same line conflicts, later updated_at wins",
			base:          files("knowledge/arch.md", kn("2026-01-01T00:00:00Z", body5)),
			ours:          files("knowledge/arch.md", kn("2026-01-03T00:00:00Z", strings.Replace(body5, "line 3", "ours 3", 1))),
			their:         files("knowledge/arch.md", kn("2026-01-02T00:00:00Z", strings.Replace(body5, "line 3", "theirs 3", 1))),
			want:          files("knowledge/arch.md", kn("2026-01-03T00:00:00Z", strings.Replace(body5, "line 3", "ours 3", 1))),
			conflicts:     1,
			conflictField: "body",
		},
		{
			name:          "front matter: same key conflicts, other keys merge",
			base:          files("conventions/go.md", kn("2026-01-01T00:00:00Z", "b\n", "x: 1", "y: 1")),
			ours:          files("conventions/go.md", kn("2026-01-01T00:00:00Z", "b\n", "x: 2", "y: 1")),
			their:         files("conventions/go.md", kn("2026-01-01T00:00:00Z", "b\n", "x: 3", "y: 9")),
			want:          files("conventions/go.md", kn("2026-01-01T00:00:00Z", "b\n", "x: 3", "y: 9")),
			conflicts:     1,
			conflictField: "x",
		},
		{
			name: "SKILL.md without front matter: body only",
			base: files("skills/s/SKILL.md", "# S\n\na\nb\nc\n"), ours: files("skills/s/SKILL.md", "# S\n\nA\nb\nc\n"),
			their: files("skills/s/SKILL.md", "# S\n\na\nb\nC\n"), want: files("skills/s/SKILL.md", "# S\n\nA\nb\nC\n"),
		},
		{
			name: "JSON record: disjoint fields, nested, unknown fields",
			base: files("state.json", state(`  "current_task": "a",
  "progress": "p0",
  "extra": {"k": 1, "j": 2},
  "updated_at": "2026-01-01T00:00:00Z"`)),
			ours: files("state.json", state(`  "current_task": "b",
  "progress": "p0",
  "extra": {"k": 5, "j": 2},
  "updated_at": "2026-01-02T00:00:00Z"`)),
			their: files("state.json", state(`  "current_task": "a",
  "progress": "p1",
  "extra": {"k": 1, "j": 7},
  "updated_at": "2026-01-03T00:00:00Z",
  "future_field": true`)),
			want: files("state.json", state(`  "current_task": "b",
  "progress": "p1",
  "extra": {
    "k": 5,
    "j": 7
  },
  "updated_at": "2026-01-03T00:00:00Z",
  "future_field": true`)),
		},
		{
			name:          "JSON record: stale copy does not revert the newer change",
			base:          files("state.json", state(`  "current_task": "a",`+"\n"+`  "updated_at": "2026-01-02T00:00:00Z"`)),
			ours:          files("state.json", state(`  "current_task": "old",`+"\n"+`  "updated_at": "2026-01-01T00:00:00Z"`)),
			their:         files("state.json", state(`  "current_task": "new",`+"\n"+`  "updated_at": "2026-01-03T00:00:00Z"`)),
			want:          files("state.json", state(`  "current_task": "new",`+"\n"+`  "updated_at": "2026-01-03T00:00:00Z"`)),
			conflicts:     1,
			conflictField: "current_task",
		},
		{
			// The winner's order (ours: larger content); theirs' "e" goes after
			// its predecessor "c".
			name:  "JSON record: arrays of distinct scalars merge as sets",
			base:  files("activity/ada/claude--laptop.json", state(`  "files": ["a", "b", "c"]`)),
			ours:  files("activity/ada/claude--laptop.json", state(`  "files": ["a", "c", "d"]`)),
			their: files("activity/ada/claude--laptop.json", state(`  "files": ["a", "b", "c", "e"]`)),
			want: files("activity/ada/claude--laptop.json", state(`  "files": [
    "a",
    "c",
    "e",
    "d"
  ]`)),
		},
		{
			name:          "JSON record: delete field vs edit field",
			base:          files("manifest.json", state(`  "a": 1,`+"\n"+`  "b": 2`)),
			ours:          files("manifest.json", state(`  "a": 1`)),
			their:         files("manifest.json", state(`  "a": 1,`+"\n"+`  "b": 3`)),
			want:          files("manifest.json", state(`  "a": 1,`+"\n"+`  "b": 3`)),
			notes:         []string{"delete-vs-edit"},
			conflicts:     1,
			conflictField: "b",
		},
		{
			name:  "ndjson: union by id, ordered by timestamp then id",
			base:  files("skills/s/.feedback.ndjson", `{"id":"1","timestamp":"2026-01-01T00:00:00Z","rating":5}`+"\n"),
			ours:  files("skills/s/.feedback.ndjson", `{"id":"1","timestamp":"2026-01-01T00:00:00Z","rating":5}`+"\n"+`{"id":"3","timestamp":"2026-01-03T00:00:00Z","rating":4}`+"\n"),
			their: files("skills/s/.feedback.ndjson", `{"id":"1","timestamp":"2026-01-01T00:00:00Z","rating":5}`+"\n"+`{"id":"2","timestamp":"2026-01-02T00:00:00Z","rating":1}`+"\n"+`{"id":"0","timestamp":"2026-01-02T00:00:00Z","rating":2}`+"\n"),
			want: files("skills/s/.feedback.ndjson", `{"id":"1","timestamp":"2026-01-01T00:00:00Z","rating":5}`+"\n"+
				`{"id":"0","timestamp":"2026-01-02T00:00:00Z","rating":2}`+"\n"+
				`{"id":"2","timestamp":"2026-01-02T00:00:00Z","rating":1}`+"\n"+
				`{"id":"3","timestamp":"2026-01-03T00:00:00Z","rating":4}`+"\n"),
		},
		{
			name:  "ndjson: deleted line stays deleted only if unchanged on the other side",
			base:  files("skills/s/.usage.ndjson", `{"id":"1","timestamp":"2026-01-01T00:00:00Z"}`+"\n"+`{"id":"2","timestamp":"2026-01-02T00:00:00Z"}`+"\n"),
			ours:  files("skills/s/.usage.ndjson", `{"id":"9","timestamp":"2026-01-09T00:00:00Z"}`+"\n"),
			their: files("skills/s/.usage.ndjson", `{"id":"1","timestamp":"2026-01-01T00:00:00Z"}`+"\n"+`{"id":"2","timestamp":"2026-01-02T00:00:00Z","agent":"x"}`+"\n"),
			want:  files("skills/s/.usage.ndjson", `{"id":"2","timestamp":"2026-01-02T00:00:00Z","agent":"x"}`+"\n"+`{"id":"9","timestamp":"2026-01-09T00:00:00Z"}`+"\n"),
			notes: []string{"delete-vs-edit"},
		},
		{
			name:          "unknown binary path: winner whole, conflict record",
			base:          files("blob.bin", "\x00a"),
			ours:          files("blob.bin", "\x00b"),
			their:         files("blob.bin", "\x00c"),
			want:          files("blob.bin", "\x00c"),
			conflicts:     1,
			conflictField: "",
		},
		{
			name: "unknown text path: diff3",
			base: files("notes.txt", "a\nb\nc\n"), ours: files("notes.txt", "A\nb\nc\n"), their: files("notes.txt", "a\nb\nC\n"),
			want: files("notes.txt", "A\nb\nC\n"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := treeBoth(t, tt.base, tt.ours, tt.their)
			for p, w := range tt.want {
				if got, ok := r.Files[p]; !ok || string(got) != string(w) {
					t.Errorf("%s =\n%s\nwant\n%s", p, got, w)
				}
			}
			for _, p := range tt.absent {
				if _, ok := r.Files[p]; ok {
					t.Errorf("%s present, want absent", p)
				}
			}
			if len(r.Conflicts) != tt.conflicts {
				t.Fatalf("%d conflicts, want %d: %+v", len(r.Conflicts), tt.conflicts, r.Conflicts)
			}
			for _, c := range r.Conflicts {
				if c.Field != tt.conflictField {
					t.Errorf("conflict field %q, want %q", c.Field, tt.conflictField)
				}
				if !bytes.Equal(r.Files[c.Path], c.Kept) {
					t.Errorf("Kept is not the file as written")
				}
				if !bytes.Equal(r.Files[c.RecordPath()], c.Record()) {
					t.Errorf("record %s missing", c.RecordPath())
				}
			}
			var kinds []string
			for _, n := range r.Notes {
				kinds = append(kinds, n.Kind)
			}
			if !reflect.DeepEqual(kinds, tt.notes) {
				t.Errorf("notes %v, want %v (%+v)", kinds, tt.notes, r.Notes)
			}
			// Every other path of the result comes from an input or is a record.
			if len(r.Files) != len(tt.want)+tt.conflicts && tt.absent == nil {
				t.Errorf("unexpected files: %s", dump(r))
			}
		})
	}
}

func TestConflictRecordFormat(t *testing.T) {
	base := files("knowledge/architecture.md", kn("2026-01-01T00:00:00Z", body5))
	ours := files("knowledge/architecture.md", kn("2026-01-02T00:00:00Z", strings.Replace(body5, "line 2", "ours", 1)))
	theirs := files("knowledge/architecture.md", kn("2026-01-03T00:00:00Z", strings.Replace(body5, "line 2", "theirs", 1)))
	r := treeBoth(t, base, ours, theirs)
	if len(r.Conflicts) != 1 {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	c := r.Conflicts[0]
	rec := r.Files["conflicts/"+c.ID+".json"]
	var m map[string]any
	if err := json.Unmarshal(rec, &m); err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{`"id"`, `"path"`, `"field"`, `"base"`, `"kept"`, `"lost"`, `"rule"`}
	last := -1
	for _, k := range wantKeys {
		i := bytes.Index(rec, []byte(k))
		if i <= last {
			t.Errorf("key %s out of order in\n%s", k, rec)
		}
		last = i
	}
	if !bytes.HasSuffix(rec, []byte("}\n")) || !bytes.HasPrefix(rec, []byte("{\n  \"id\"")) {
		t.Errorf("record format:\n%s", rec)
	}
	if m["path"] != "knowledge/architecture.md" || m["field"] != "body" || len(c.ID) != 16 {
		t.Errorf("record: %v", m)
	}
	if !strings.Contains(m["kept"].(string), "theirs") || !strings.Contains(m["lost"].(string), "ours") {
		t.Errorf("kept/lost: %v", m)
	}
	if m["rule"] != "later updated_at wins; ties by larger content" {
		t.Errorf("rule %v", m["rule"])
	}
	// Absent base is null.
	r2 := treeBoth(t, Files{}, files("x.bin", "\x00a"), files("x.bin", "\x00b"))
	if !bytes.Contains(r2.Files[r2.Conflicts[0].RecordPath()], []byte(`"base": null`)) {
		t.Errorf("absent base not null:\n%s", r2.Files[r2.Conflicts[0].RecordPath()])
	}
}

func TestDecisionRenumbering(t *testing.T) {
	base := files(
		"decisions/0001-use-go.md", adr(1, "u-1", "2026-01-01T00:00:00Z", "Use Go", "[]", "0", "## Context\n"),
		"decisions/0002-use-sqlite.md", adr(2, "u-2", "2026-01-01T00:00:00Z", "Use SQLite", "[]", "0", "## Context\n"),
	)
	ours := copyFiles(base)
	ours["decisions/0003-use-postgres.md"] = []byte(adr(3, "u-ours", "2026-01-05T00:00:00Z", "Use Postgres", "[2]", "0", "## Context\nours\n"))
	ours["decisions/0002-use-sqlite.md"] = []byte(adr(2, "u-2", "2026-01-01T00:00:00Z", "Use SQLite", "[]", "3", "## Context\n"))
	theirs := copyFiles(base)
	theirs["decisions/0003-use-redis.md"] = []byte(adr(3, "u-theirs", "2026-01-04T00:00:00Z", "Use Redis", "[]", "0", "## Context\ntheirs\n"))
	theirs["decisions/0004-drop-redis.md"] = []byte(adr(4, "u-theirs-2", "2026-01-06T00:00:00Z", "Drop Redis", "[3]", "0", "## Context\n"))
	theirs["decisions/0001-use-go.md"] = []byte(adr(1, "u-1", "2026-01-01T00:00:00Z", "Use Go", "[]", "0", "## Context\nmore\n"))

	r := treeBoth(t, base, ours, theirs)
	// Theirs' 0003 is older: it keeps 3; ours' 0003 becomes 5 (max was 4).
	want := map[string]string{
		"decisions/0003-use-redis.md":    adr(3, "u-theirs", "2026-01-04T00:00:00Z", "Use Redis", "[]", "0", "## Context\ntheirs\n"),
		"decisions/0005-use-postgres.md": adr(5, "u-ours", "2026-01-05T00:00:00Z", "Use Postgres", "[2]", "0", "## Context\nours\n"),
		"decisions/0004-drop-redis.md":   adr(4, "u-theirs-2", "2026-01-06T00:00:00Z", "Drop Redis", "[3]", "0", "## Context\n"),
		// Ours' reference to its 0003 follows it to 5.
		"decisions/0002-use-sqlite.md": adr(2, "u-2", "2026-01-01T00:00:00Z", "Use SQLite", "[]", "5", "## Context\n"),
		"decisions/0001-use-go.md":     adr(1, "u-1", "2026-01-01T00:00:00Z", "Use Go", "[]", "0", "## Context\nmore\n"),
	}
	for p, w := range want {
		if string(r.Files[p]) != w {
			t.Errorf("%s =\n%s\nwant\n%s", p, r.Files[p], w)
		}
	}
	if _, ok := r.Files["decisions/0003-use-postgres.md"]; ok {
		t.Errorf("old path kept")
	}
	if len(r.Files) != len(want) || len(r.Conflicts) != 0 {
		t.Errorf("files:\n%s", dump(r))
	}
	kinds := []string{}
	for _, n := range r.Notes {
		kinds = append(kinds, n.Path+" "+n.Kind)
	}
	wantNotes := []string{"decisions/0002-use-sqlite.md renumbered-reference", "decisions/0005-use-postgres.md renumbered"}
	if !reflect.DeepEqual(kinds, wantNotes) {
		t.Errorf("notes %v", kinds)
	}

	// Renumbered side's own references, and chains of clashes.
	theirs2 := copyFiles(base)
	theirs2["decisions/0003-a.md"] = []byte(adr(3, "t3", "2026-01-01T00:00:00Z", "A", "[]", "0", ""))
	theirs2["decisions/0004-b.md"] = []byte(adr(4, "t4", "2026-01-09T00:00:00Z", "B", "[3]", "0", ""))
	ours2 := copyFiles(base)
	ours2["decisions/0003-c.md"] = []byte(adr(3, "o3", "2026-01-02T00:00:00Z", "C", "[]", "0", ""))
	ours2["decisions/0004-d.md"] = []byte(adr(4, "o4", "2026-01-03T00:00:00Z", "D", "[3, 1]", "0", ""))
	r = treeBoth(t, base, ours2, theirs2)
	// 3: t3 (Jan 1) keeps, o3 -> 5. 4: o4 (Jan 3) keeps, t4 -> 6.
	want = map[string]string{
		"decisions/0003-a.md": adr(3, "t3", "2026-01-01T00:00:00Z", "A", "[]", "0", ""),
		"decisions/0005-c.md": adr(5, "o3", "2026-01-02T00:00:00Z", "C", "[]", "0", ""),
		"decisions/0004-d.md": adr(4, "o4", "2026-01-03T00:00:00Z", "D", "[5, 1]", "0", ""),
		"decisions/0006-b.md": adr(6, "t4", "2026-01-09T00:00:00Z", "B", "[3]", "0", ""),
	}
	for p, w := range want {
		if string(r.Files[p]) != w {
			t.Errorf("%s =\n%s\nwant\n%s", p, r.Files[p], w)
		}
	}
	if len(r.Files) != len(want)+2 {
		t.Errorf("files:\n%s", dump(r))
	}

	// The same decision (same uid and path) added on both sides is merged,
	// not renumbered.
	same := files("decisions/0003-x.md", adr(3, "same", "2026-01-01T00:00:00Z", "X", "[]", "0", "a\nb\n"))
	same2 := files("decisions/0003-x.md", adr(3, "same", "2026-01-01T00:00:00Z", "X", "[]", "0", "a\nb\n"))
	r = treeBoth(t, Files{}, same, same2)
	if len(r.Files) != 1 || len(r.Notes) != 0 {
		t.Errorf("same decision: %s", dump(r))
	}
}

// TestRenumberingRewritesSessions: the session records a side added or changed name its renumbered
// decision by the new number in decisions_added, as its decisions' supersedes do (docs/merge.md "Decisions
// numbered twice"); before, the session kept the old number, now the other side's decision. Records of
// the other side, of the base unchanged, and numbers the side did not renumber are left as they are.
func TestRenumberingRewritesSessions(t *testing.T) {
	base := files(
		"decisions/0001-use-go.md", adr(1, "u-1", "2026-01-01T00:00:00Z", "Use Go", "[]", "0", "## Context\n"),
		"history/2026/01/old.json", "{\n  \"id\": \"old\",\n  \"decisions_added\": [\n    \"1\",\n    \"2\"\n  ]\n}\n",
	)
	ours := copyFiles(base)
	ours["decisions/0002-a-new-db.md"] = []byte(adr(2, "u-a", "2026-01-02T00:00:00Z", "A new DB", "[]", "0", ""))
	ours["history/2026/01/sess-a.json"] = []byte("{\n  \"id\": \"sess-a\",\n  \"decisions_added\": [\n    \"2\"\n  ]\n}\n")
	theirs := copyFiles(base)
	theirs["decisions/0002-b-new-cache.md"] = []byte(adr(2, "u-b", "2026-01-03T00:00:00Z", "B new cache", "[]", "0", ""))
	// A layout 1 record, a number written as a JSON number by another tool, a string that needs escaping.
	theirs["history/sess-b.json"] = []byte("{\n  \"id\": \"sess-b\",\n  \"summary\": \"<b>\",\n  \"decisions_added\": [\n    \"1\",\n    \"2\",\n    2\n  ],\n  \"ended\": null\n}\n")
	r := treeBoth(t, base, ours, theirs)
	want := map[string]string{
		"decisions/0003-b-new-cache.md": adr(3, "u-b", "2026-01-03T00:00:00Z", "B new cache", "[]", "0", ""),
		"history/2026/01/sess-a.json":   string(ours["history/2026/01/sess-a.json"]),
		"history/2026/01/old.json":      string(base["history/2026/01/old.json"]),
		"history/sess-b.json":           "{\n  \"id\": \"sess-b\",\n  \"summary\": \"<b>\",\n  \"decisions_added\": [\n    \"1\",\n    \"3\",\n    3\n  ],\n  \"ended\": null\n}\n",
	}
	for p, w := range want {
		if string(r.Files[p]) != w {
			t.Errorf("%s =\n%s\nwant\n%s", p, r.Files[p], w)
		}
	}
	found := false
	for _, n := range r.Notes {
		found = found || (n.Path == "history/sess-b.json" && n.Kind == "renumbered-reference")
	}
	if !found {
		t.Errorf("no renumbered-reference note for the session: %s", dump(r))
	}
}
