package merge

import (
	"testing"
)

// TestRemovedSkillRatedOnTheOtherSide: a skill removed on one side (its folder deleted) and rated or used
// on the other is kept, SKILL.md as the rating side holds it, with a delete-vs-edit note and a conflict
// whose lost version is the delete, and the files of its folder the remover deleted come back (before,
// only SKILL.md did, and a script the skill runs stayed deleted); before that, SKILL.md was deleted and
// the new log stayed in a folder no reader lists (docs/merge.md "Rules by kind of file"). A folder the
// other side did not change, or changed without holding SKILL.md, is left to the path-by-path merge.
func TestRemovedSkillRatedOnTheOtherSide(t *testing.T) {
	const md = "---\nname: sky\ndescription: skill y\n---\ndo y\n"
	const usage = `{"id":"u1","session_id":"s","agent":"a","timestamp":"2026-11-01T00:00:00Z"}` + "\n"
	const rating = `{"id":"f1","agent":"b","rating":2,"comment":"meh","timestamp":"2026-12-02T10:00:00Z"}` + "\n"
	const script = "#!/bin/sh\necho y\n"
	base := files("skills/sky/SKILL.md", md, "skills/sky/.usage/2026-11.ndjson", usage, "skills/sky/scripts/run.sh", script,
		"knowledge/k.md", "k\n", "knowledge/gone.md", "gone\n")
	removed := files("knowledge/k.md", "k\n")
	rated := copyFiles(base)
	rated["skills/sky/.feedback/2026-12.ndjson"] = []byte(rating)
	r := treeBoth(t, base, removed, rated)
	if string(r.Files["skills/sky/SKILL.md"]) != md || string(r.Files["skills/sky/.feedback/2026-12.ndjson"]) != rating {
		t.Fatalf("the rated skill is not kept whole:\n%s", dump(r))
	}
	if string(r.Files["skills/sky/.usage/2026-11.ndjson"]) != usage || string(r.Files["skills/sky/scripts/run.sh"]) != script {
		t.Errorf("the files of the kept skill the remover deleted and the other side left alone are not back:\n%s", dump(r))
	}
	if _, ok := r.Files["knowledge/gone.md"]; ok {
		t.Errorf("a file out of the skill's folder the remover deleted is back:\n%s", dump(r))
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "skills/sky/SKILL.md" || !r.Conflicts[0].LostDeleted ||
		string(r.Conflicts[0].Kept) != md || r.Files[r.Conflicts[0].RecordPath()] == nil {
		t.Fatalf("conflicts %+v; want one on skills/sky/SKILL.md whose lost version is the delete", r.Conflicts)
	}
	if len(r.Notes) != 1 || r.Notes[0].Kind != "delete-vs-edit" || r.Notes[0].Path != "skills/sky/SKILL.md" {
		t.Errorf("notes %+v; want a delete-vs-edit note at SKILL.md", r.Notes)
	}

	// An edit of a log the base held (a use appended): the same.
	used := copyFiles(base)
	used["skills/sky/.usage/2026-11.ndjson"] = []byte(usage + `{"id":"u2","session_id":"s","agent":"a","timestamp":"2026-11-02T00:00:00Z"}` + "\n")
	if r := treeBoth(t, base, removed, used); r.Files["skills/sky/SKILL.md"] == nil {
		t.Errorf("a skill used on one side and removed on the other is not kept:\n%s", dump(r))
	}
	// The remover left alone by the other side, or a side that removed it and wrote a log itself (a hand
	// edit merged with the base): the delete stands, the side comes back as it is.
	if r := treeBoth(t, base, removed, base); r.Files["skills/sky/SKILL.md"] != nil || len(r.Conflicts) != 0 {
		t.Errorf("an unchanged side brought a removed skill back:\n%s", dump(r))
	}
	orphan := copyFiles(removed)
	orphan["skills/sky/.feedback/2026-12.ndjson"] = []byte(rating)
	if r := treeBoth(t, base, orphan, base); r.Files["skills/sky/SKILL.md"] != nil || len(r.Conflicts) != 0 {
		t.Errorf("a side merged with an unchanged base is not returned as it is:\n%s", dump(r))
	}
}
