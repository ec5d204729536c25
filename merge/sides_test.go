package merge

import (
	"strings"
	"testing"
)

// stateJSON is a state.json as ctx's writer makes it: every field present, unset ones at their zero value.
func stateJSON(task, blockers, updated string) string {
	return "{\n  \"current_task\": \"" + task + "\",\n  \"blockers\": " + blockers +
		",\n  \"progress\": {},\n  \"last_agent\": \"cli\",\n  \"last_machine\": \"laptop\",\n  \"updated_at\": \"" + updated + "\"\n}\n"
}

// The first write of a JSON record on both sides (no base): one side's zero defaults are not edits. A set
// current_task on one side and set blockers on the other merge cleanly, whichever side wrote last.
func TestAddAddRecordDefaultsAreNotEdits(t *testing.T) {
	for _, later := range []string{"A", "B"} {
		ta, tb := "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z"
		if later == "A" {
			ta, tb = tb, ta
		}
		a := files("state.json", stateJSON("task A", "[]", ta))
		b := files("state.json", stateJSON("", `["blk B"]`, tb))
		r := treeBoth(t, Files{}, a, b)
		got := string(r.Files["state.json"])
		if len(r.Conflicts) != 0 {
			t.Errorf("later=%s: conflicts %+v", later, r.Conflicts)
		}
		if !strings.Contains(got, `"current_task": "task A"`) || !strings.Contains(got, `"blk B"`) {
			t.Errorf("later=%s: merged state lost an edit:\n%s", later, got)
		}
	}
	// Two real values still conflict.
	r := treeBoth(t, Files{}, files("state.json", stateJSON("task A", "[]", "2026-11-30T10:00:00Z")),
		files("state.json", stateJSON("task B", "[]", "2026-11-30T11:00:00Z")))
	if len(r.Conflicts) != 1 || r.Conflicts[0].Field != "current_task" {
		t.Errorf("want one conflict on current_task, got %+v", r.Conflicts)
	}
}

// The same for front matter added on both sides.
func TestAddAddFrontMatterDefaults(t *testing.T) {
	a := files("knowledge/k.md", kn("2026-11-30T10:00:00Z", "same\n", "tags: []", "owner: ada"))
	b := files("knowledge/k.md", kn("2026-11-30T11:00:00Z", "same\n", "tags: [db]", "owner: \"\""))
	r := treeBoth(t, Files{}, a, b)
	got := string(r.Files["knowledge/k.md"])
	if len(r.Conflicts) != 0 || !strings.Contains(got, "tags: [db]") || !strings.Contains(got, "owner: ada") {
		t.Errorf("conflicts %+v\n%s", r.Conflicts, got)
	}
}

// A front-matter list changed on both sides merges as a set.
func TestFrontMatterListMergesAsSet(t *testing.T) {
	const body = "## Context\n\nc\n"
	dec := func(sup string) Files {
		return files("decisions/0004-x.md", adr(4, "u-4", "2026-11-30T10:00:00Z", "X", sup, "0", body))
	}
	r := treeBoth(t, dec("[1]"), dec("[1, 3]"), dec("[1, 5]"))
	if len(r.Conflicts) != 0 {
		t.Fatalf("conflicts %+v", r.Conflicts)
	}
	if got := string(r.Files["decisions/0004-x.md"]); !strings.Contains(got, "supersedes: [1, 3, 5]\n") && !strings.Contains(got, "supersedes: [1, 5, 3]\n") {
		t.Errorf("want supersedes [1, 3, 5]:\n%s", got)
	}
	// Removals on either side stay removed; block style is kept.
	block := func(items ...string) Files {
		return files("knowledge/k.md", kn("2026-11-30T10:00:00Z", "b\n", "tags:\n  - "+strings.Join(items, "\n  - ")))
	}
	r = treeBoth(t, block("a", "b", "c"), block("b", "c", "d"), block("a", "b", "e"))
	got := string(r.Files["knowledge/k.md"])
	if len(r.Conflicts) != 0 || !strings.Contains(got, "tags:\n  - b\n  - ") || strings.Contains(got, "- a\n") || strings.Contains(got, "- c\n") ||
		!strings.Contains(got, "- d\n") || !strings.Contains(got, "- e\n") {
		t.Errorf("conflicts %+v\n%s", r.Conflicts, got)
	}
	// A list against a scalar is still a conflict.
	r = treeBoth(t, dec("[1]"), dec("[1, 3]"), dec("7"))
	if len(r.Conflicts) != 1 || r.Conflicts[0].Field != "supersedes" {
		t.Errorf("want a conflict on supersedes: %+v", r.Conflicts)
	}
}

// A file renamed on one side (hand edit + ctx commit: a delete and an add) and edited at its old path on the
// other: the edit follows the rename, no copy survives at the old path.
func TestRenameFollowsEdit(t *testing.T) {
	body := "# Architecture\n\nline 1\nline 2\nline 3\nline 4\nline 5\n"
	base := files("knowledge/arch.md", kn("2026-11-30T10:00:00Z", body), "knowledge/other.md", kn("2026-11-30T10:00:00Z", "unrelated\n"))
	ours := files("knowledge/architecture.md", kn("2026-11-30T12:00:00Z", body), "knowledge/other.md", kn("2026-11-30T10:00:00Z", "unrelated\n"),
		"knowledge/new-thing.md", kn("2026-11-30T12:00:00Z", "something else entirely\n"))
	theirs := files("knowledge/arch.md", kn("2026-11-30T11:00:00Z", strings.Replace(body, "line 3", "LINE THREE", 1)),
		"knowledge/other.md", kn("2026-11-30T10:00:00Z", "unrelated\n"))
	r := treeBoth(t, base, ours, theirs)
	if _, ok := r.Files["knowledge/arch.md"]; ok {
		t.Errorf("the old path survived beside the renamed file")
	}
	got := string(r.Files["knowledge/architecture.md"])
	if !strings.Contains(got, "LINE THREE") {
		t.Errorf("the edit did not follow the rename:\n%s", got)
	}
	if string(r.Files["knowledge/new-thing.md"]) != string(ours["knowledge/new-thing.md"]) {
		t.Errorf("an unrelated added file changed")
	}
	if len(r.Conflicts) != 0 {
		t.Errorf("conflicts %+v", r.Conflicts)
	}
	if len(r.Notes) != 1 || r.Notes[0].Kind != "renamed" || r.Notes[0].Path != "knowledge/architecture.md" ||
		!strings.Contains(r.Notes[0].Message, "knowledge/arch.md") {
		t.Errorf("notes %+v", r.Notes)
	}
	// Renamed and edited on the same lines on both sides: one file, a conflict at the new path.
	ours["knowledge/architecture.md"] = []byte(kn("2026-11-30T12:00:00Z", strings.Replace(body, "line 3", "line three", 1)))
	r = treeBoth(t, base, ours, theirs)
	if _, ok := r.Files["knowledge/arch.md"]; ok || len(r.Conflicts) != 1 || r.Conflicts[0].Path != "knowledge/architecture.md" {
		t.Errorf("want one conflict at the new path: %+v", r.Conflicts)
	}
}

// Deleted on one side, edited on the other: the edit is kept, a note says so, and a conflict whose lost
// version is the delete lets `ctx resolve` still delete it.
func TestDeleteVsEditIsAConflict(t *testing.T) {
	base := files("knowledge/k.md", kn("2026-11-30T10:00:00Z", "a\n"))
	edit := files("knowledge/k.md", kn("2026-11-30T11:00:00Z", "a\nb\n"))
	r := treeBoth(t, base, Files{}, edit)
	if len(r.Conflicts) != 1 || len(r.Notes) != 1 {
		t.Fatalf("conflicts %+v notes %+v", r.Conflicts, r.Notes)
	}
	c := r.Conflicts[0]
	if !c.LostDeleted || c.Lost != nil || string(c.Kept) != string(edit["knowledge/k.md"]) || string(r.Files["knowledge/k.md"]) != string(c.Kept) {
		t.Errorf("conflict %+v", c)
	}
	rec := string(r.Files[c.RecordPath()])
	if !strings.Contains(rec, `"lost": null`) {
		t.Errorf("record:\n%s", rec)
	}
	back, err := ParseRecord([]byte(rec))
	if err != nil || !back.LostDeleted || back.ID != c.ID {
		t.Errorf("round trip: %+v %v", back, err)
	}
	// A delete and an empty file are different lost versions: different ids.
	if conflictID(c.Path, "", base["knowledge/k.md"], true, c.Kept, nil, true) == conflictID(c.Path, "", base["knowledge/k.md"], true, c.Kept, []byte{}, false) {
		t.Errorf("a delete and an empty file give the same id")
	}
}

// The writers of both versions go into the record and come back.
func TestRecordSides(t *testing.T) {
	c := newConflict("knowledge/k.md", []string{"body"}, []byte("b"), true, []byte("k"), []byte("l"), "rule")
	c.KeptBy = Side{Author: "Ada <ada@example.com>", Machine: "laptop", Agent: "cli", Commit: strings.Repeat("a", 40)}
	c.LostBy = Side{Author: "Bob <bob@example.com>", Machine: "desktop"}
	rec := c.Record()
	if !strings.Contains(string(rec), `"kept_by": {`) || !strings.Contains(string(rec), `"author": "Bob <bob@example.com>"`) {
		t.Errorf("record:\n%s", rec)
	}
	back, err := ParseRecord(rec)
	if err != nil || back.KeptBy != c.KeptBy || back.LostBy != c.LostBy {
		t.Errorf("round trip: %+v %v", back, err)
	}
	// Without sides, the record is as before (no keys for them).
	c.KeptBy, c.LostBy = Side{}, Side{}
	if strings.Contains(string(c.Record()), "_by") {
		t.Errorf("empty sides written:\n%s", c.Record())
	}
}

// manifestJSON is a manifest.json as ctx writes it, with the given adapters object and updated_at.
func manifestJSON(adapters, updated string) string {
	return "{\n  \"schema_version\": \"0.4.0\",\n  \"project\": {\"name\": \"p\", \"id\": \"id-1\", \"repo_url\": \"\"},\n" +
		"  \"adapters\": " + adapters + ",\n  \"team\": {\"members\": []},\n  \"created_at\": \"2026-11-30T09:00:00Z\",\n" +
		"  \"updated_at\": \"" + updated + "\"\n}\n"
}

// A field both sides added to a record that has a base is an edit on each side, even at its type's zero
// value: `ctx adapters enable copilot` on one clone and `ctx adapters disable copilot` on the other
// (adapters.copilot absent in the base) is a conflict on adapters.copilot.enabled that the later write
// wins, never the enable kept silently because the disable wrote false (before: merged clean, the
// disable lost). Different clients added on the two sides still merge clean, and a manifest created on
// both sides (no base) keeps the rule that a zero value is not an edit.
func TestAddAddFieldInBasedRecordIsAnEdit(t *testing.T) {
	base := files("manifest.json", manifestJSON("{}", "2026-11-30T09:00:00Z"))
	for _, later := range []string{"enable", "disable"} {
		te, td := "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z"
		want := `"copilot": {
      "enabled": false
    }`
		if later == "enable" {
			te, td = td, te
			want = strings.ReplaceAll(want, "false", "true")
		}
		r := treeBoth(t, base, files("manifest.json", manifestJSON(`{"copilot": {"enabled": true}}`, te)),
			files("manifest.json", manifestJSON(`{"copilot": {"enabled": false}}`, td)))
		if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "manifest.json" || r.Conflicts[0].Field != "adapters.copilot.enabled" {
			t.Fatalf("later=%s: want one conflict on adapters.copilot.enabled, got %+v", later, r.Conflicts)
		}
		if got := string(r.Files["manifest.json"]); !strings.Contains(got, want) {
			t.Errorf("later=%s: the later write did not win:\n%s", later, got)
		}
		lost := strings.ReplaceAll(strings.ReplaceAll(want, "false", "X"), "true", "false")
		lost = strings.ReplaceAll(lost, "X", "true")
		if !strings.Contains(string(r.Conflicts[0].Lost), lost) {
			t.Errorf("later=%s: the lost version does not hold the other write:\n%s", later, r.Conflicts[0].Lost)
		}
	}
	r := treeBoth(t, base, files("manifest.json", manifestJSON(`{"copilot": {"enabled": true}}`, "2026-11-30T10:00:00Z")),
		files("manifest.json", manifestJSON(`{"cursor": {"enabled": false}}`, "2026-11-30T11:00:00Z")))
	got := string(r.Files["manifest.json"])
	if len(r.Conflicts) != 0 || !strings.Contains(got, `"copilot": {`) || !strings.Contains(got, `"cursor": {`) {
		t.Errorf("two clients: conflicts %+v\n%s", r.Conflicts, got)
	}
	r = treeBoth(t, Files{}, files("manifest.json", manifestJSON(`{"copilot": {"enabled": true}}`, "2026-11-30T10:00:00Z")),
		files("manifest.json", manifestJSON(`{"copilot": {"enabled": false}}`, "2026-11-30T11:00:00Z")))
	if len(r.Conflicts) != 0 || !strings.Contains(string(r.Files["manifest.json"]), `"enabled": true`) {
		t.Errorf("created on both sides: conflicts %+v\n%s", r.Conflicts, r.Files["manifest.json"])
	}
}
