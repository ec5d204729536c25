package merge

import (
	"strings"
	"testing"
)

func entry(author, updated, body string) string {
	return "---\nauthor: " + author + "\nupdated_at: \"" + updated + "\"\nscope: public\n---\n" + body
}

// openConflict is a base holding path with content kept and the record of a conflict on it.
func openConflict(path, kept, lost string) (Files, string) {
	c := newConflict(path, []string{"body"}, []byte("old\n"), true, []byte(kept), []byte(lost), "later updated_at wins")
	return files(path, kept, c.RecordPath(), string(c.Record())), c.ID
}

// A conflict settled on both sides (its record deleted on both) in two different ways: the later
// settlement is in the file and the other in a new conflict, whichever side is ours, even when one
// settlement kept the file's version with new stamps only. The same settlement twice (stamps apart) is
// not a conflict; a settlement against a delete keeps the change and records the delete.
func TestSettledTwice(t *testing.T) {
	const p = "knowledge/kc.md"
	kept, lost := entry("B", "2026-12-01T10:00:01Z", "B version\n"), entry("A", "2026-12-01T10:00:01Z", "A version\n")
	base, id := openConflict(p, kept, lost)
	byA := entry("A", "2026-12-01T10:05:00Z", "A version\n") // A took its own (lost) version
	byB := entry("B", "2026-12-01T10:06:00Z", "B version\n") // later, B kept the file's: stamps only
	r := treeBoth(t, base, files(p, byA), files(p, byB))
	if len(r.Conflicts) != 1 || string(r.Files[p]) != byB || string(r.Conflicts[0].Lost) != byA || r.Conflicts[0].ID == id {
		t.Fatalf("want B's later settlement in the file and A's in a new conflict: %s %+v", r.Files[p], r.Conflicts)
	}
	if _, ok := r.Files["conflicts/"+id+".json"]; ok {
		t.Error("the settled record came back")
	}
	if len(r.Notes) != 1 || r.Notes[0].Kind != "settled-twice" || !strings.Contains(r.Notes[0].Message, id) {
		t.Errorf("notes: %+v", r.Notes)
	}

	// The same choice on both sides, stamped at different times: no conflict.
	again := entry("B", "2026-12-01T10:07:00Z", "B version\n")
	if r := treeBoth(t, base, files(p, again), files(p, byB)); len(r.Conflicts) != 0 {
		t.Errorf("one settlement twice conflicts: %+v", r.Conflicts)
	}

	// A decision has no updated_at: a settlement that kept the file's version is no write at all.
	const d = "decisions/0001-queue.md"
	dk, dl := "---\nid: 1\nstatus: deprecated\ndate: 2026-12-01\n---\nq\n", "---\nid: 1\nstatus: rejected\ndate: 2026-12-01\n---\nq\n"
	dbase, _ := openConflict(d, dk, dl)
	r = treeBoth(t, dbase, files(d, dl), files(d, dk))
	if len(r.Conflicts) != 1 {
		t.Fatalf("decision settled twice: %+v", r.Conflicts)
	}
	if both := string(r.Files[d]) + string(r.Conflicts[0].Lost); !strings.Contains(both, "rejected") || !strings.Contains(both, "deprecated") {
		t.Errorf("a status is lost: %q", both)
	}

	// One side settled by deleting, the other kept the (unstamped) file: the change wins, the delete is
	// recorded.
	r = treeBoth(t, dbase, Files{}, files(d, dk))
	if len(r.Conflicts) != 1 || !r.Conflicts[0].LostDeleted || string(r.Files[d]) != dk {
		t.Errorf("delete against keep: %s %+v", r.Files[d], r.Conflicts)
	}

	// A crafted record (not named by its id, or about a conflict record) is not a settlement to compare.
	for _, craft := range []func(Files){
		func(f Files) {
			f["conflicts/0000000000000000.json"] = f["conflicts/"+id+".json"]
			delete(f, "conflicts/"+id+".json")
		},
		func(f Files) {
			c := newConflict("conflicts/x.json", nil, nil, false, []byte("{}"), []byte("[]"), "")
			f[c.RecordPath()] = c.Record()
			f["conflicts/x.json"] = []byte("{}")
			delete(f, "conflicts/"+id+".json")
		},
	} {
		cb := Files{}
		for k, v := range base {
			cb[k] = v
		}
		craft(cb)
		r := treeBoth(t, cb, files(p, byA), files(p, byB))
		for _, c := range r.Conflicts {
			if strings.HasPrefix(c.Rule, "settled twice") {
				t.Errorf("crafted record compared settlements: %+v", c)
			}
		}
	}

	// Only one side settled: the usual 3-way merge (the settlement wins, the record is gone).
	r = treeBoth(t, base, files(p, byA), base)
	if len(r.Conflicts) != 0 || string(r.Files[p]) != byA {
		t.Errorf("one settlement: %s %+v", r.Files[p], r.Conflicts)
	}
}

func manifest(id, name, created string) string {
	return "{\n  \"schema_version\": \"0.4.0\",\n  \"project\": {\n    \"name\": \"" + name + "\",\n    \"id\": \"" + id +
		"\",\n    \"repo_url\": \"\"\n  },\n  \"created_at\": \"" + created + "\",\n  \"updated_at\": \"" + created + "\"\n}\n"
}

// Two stores of different identity (an offline `ctx init` merged with the team's store): the store
// created first keeps project and created_at whichever side is ours, though the other was written later;
// on a tie of created_at the smaller project.id. The other identity is the conflict's lost version.
func TestManifestTwoIdentities(t *testing.T) {
	team := manifest("f-team", "app", "2026-11-01T09:00:00Z")
	newcomer := manifest("0-new", "x", "2026-12-01T09:00:00Z")
	r := treeBoth(t, Files{}, files("manifest.json", team), files("manifest.json", newcomer))
	if string(r.Files["manifest.json"]) != team || len(r.Conflicts) != 1 || string(r.Conflicts[0].Lost) != newcomer {
		t.Fatalf("want the team's manifest kept, the newcomer's lost: %s %+v", r.Files["manifest.json"], r.Conflicts)
	}
	if len(r.Notes) != 1 || r.Notes[0].Kind != "identity" || !strings.Contains(r.Notes[0].Message, "f-team") {
		t.Errorf("notes: %+v", r.Notes)
	}
	// The same second: the smaller id.
	tie := manifest("0-new", "x", "2026-11-01T09:00:00Z")
	r = treeBoth(t, Files{}, files("manifest.json", team), files("manifest.json", tie))
	if string(r.Files["manifest.json"]) != tie {
		t.Errorf("tie: %s", r.Files["manifest.json"])
	}
	// One identity: the usual rule (later updated_at) for a field both changed.
	renamed := strings.Replace(manifest("f-team", "renamed", "2026-11-01T09:00:00Z"), "\"updated_at\": \"2026-11-01T09:00:00Z\"", "\"updated_at\": \"2026-12-01T00:00:00Z\"", 1)
	other := manifest("f-team", "other", "2026-11-01T09:00:00Z")
	r = treeBoth(t, files("manifest.json", team), files("manifest.json", renamed), files("manifest.json", other))
	if len(r.Conflicts) != 1 || r.Conflicts[0].Rule == identityRule || !strings.Contains(string(r.Files["manifest.json"]), "renamed") {
		t.Errorf("one identity: %s %+v", r.Files["manifest.json"], r.Conflicts)
	}
}
