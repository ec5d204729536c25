package merge

import (
	"strings"
	"testing"
)

// A file renamed on both sides to two different paths is kept under both, with a rename-rename note at
// each; renamed on one side and deleted on the other, the renamed file is kept with a delete-vs-edit note
// and a conflict whose lost version is the delete, as an edit against a delete gets (docs/merge.md
// "Renames").
func TestRenameClashes(t *testing.T) {
	body := "Install Go 1.26.\nRun make build.\nRun make test.\nAsk on the team channel.\n"
	other := kn("2026-11-30T10:00:00Z", "other\n")
	base := files("knowledge/setup.md", kn("2026-11-30T10:00:00Z", body), "knowledge/other.md", other)
	x := files("knowledge/install.md", kn("2026-11-30T11:00:00Z", body), "knowledge/other.md", other)
	y := files("knowledge/onboarding.md", kn("2026-11-30T12:00:00Z", body), "knowledge/other.md", other)
	r := treeBoth(t, base, x, y)
	if len(r.Conflicts) != 0 || len(r.Notes) != 2 || r.Notes[0].Kind != "rename-rename" || r.Notes[1].Kind != "rename-rename" ||
		!strings.Contains(r.Notes[0].Message, "knowledge/setup.md") || r.Files["knowledge/install.md"] == nil || r.Files["knowledge/onboarding.md"] == nil {
		t.Errorf("rename/rename: conflicts %+v notes %+v", r.Conflicts, r.Notes)
	}
	// Renamed against deleted.
	del := files("knowledge/other.md", other)
	r = treeBoth(t, base, x, del)
	if len(r.Conflicts) != 1 || len(r.Notes) != 1 || r.Notes[0].Kind != "delete-vs-edit" {
		t.Fatalf("rename/delete: conflicts %+v notes %+v", r.Conflicts, r.Notes)
	}
	c := r.Conflicts[0]
	if c.Path != "knowledge/install.md" || !c.LostDeleted || string(c.Kept) != string(x["knowledge/install.md"]) ||
		string(c.Base) != string(base["knowledge/setup.md"]) || r.Files[c.RecordPath()] == nil || r.Files["knowledge/install.md"] == nil {
		t.Errorf("rename/delete conflict %+v", c)
	}
	// The store merges one-sided paths without Tree unless NeedsOneSided says the rest could change them:
	// a file deleted on both sides (its rename added on one side only) must send them through Tree.
	if !NeedsOneSided(files("knowledge/setup.md", string(base["knowledge/setup.md"])), Files{}, Files{}) {
		t.Error("NeedsOneSided: a file deleted on both sides does not send the added files through Tree")
	}
	// Deleted on both sides, or renamed alike on both: nothing to report.
	if r := treeBoth(t, base, del, del); len(r.Conflicts)+len(r.Notes) != 0 {
		t.Errorf("delete/delete: %+v %+v", r.Conflicts, r.Notes)
	}
	if r := treeBoth(t, base, x, x); len(r.Conflicts)+len(r.Notes) != 0 {
		t.Errorf("the same rename: %+v %+v", r.Conflicts, r.Notes)
	}
}
