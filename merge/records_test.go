package merge

import (
	"strings"
	"testing"
)

// One conflict recorded by two machines that named its writers differently (an older ctx credited the
// merging machine): the merge keeps one record, the one naming more writers (else the larger), and makes
// no conflict of its own, whichever side is ours. Before, the two records conflicted on lost_by and the merge
// wrote a record whose path is a conflict record, which every pull refuses.
func TestRecordMergedAsRecord(t *testing.T) {
	const p = "knowledge/k.md"
	c := newConflict(p, []string{"body"}, nil, false, []byte(entry("b", "2026-12-01T10:00:02Z", "from b\n")),
		[]byte(entry("a", "2026-12-01T10:00:01Z", "from a\n")), "later updated_at wins")
	c.KeptBy = Side{Author: "b <b@x>", Machine: "m-b", Commit: strings.Repeat("b", 40)}
	byC, byB := c, c
	byC.LostBy = Side{Author: "c <c@x>", Machine: "m-c", Commit: strings.Repeat("c", 40)}
	byB.LostBy = Side{Author: "a <a@x>", Machine: "m-a", Commit: strings.Repeat("a", 40)}
	rp := c.RecordPath()
	file := entry("b", "2026-12-01T10:00:02Z", "from b\n")
	ours, theirs := files(p, file, rp, string(byC.Record())), files(p, file, rp, string(byB.Record()))
	r := treeBoth(t, Files{}, ours, theirs)
	if len(r.Conflicts) != 0 {
		t.Fatalf("a conflict of a conflict record: %+v", r.Conflicts)
	}
	for q := range r.Files {
		if q != p && q != rp {
			t.Errorf("unexpected file %s", q)
		}
	}
	want := string(byC.Record()) // both name two writers: the larger ("c..." > "a...")
	if string(byB.Record()) > want {
		want = string(byB.Record())
	}
	if string(r.Files[rp]) != want {
		t.Errorf("record kept:\n%s", r.Files[rp])
	}
	if len(r.Notes) != 1 || r.Notes[0].Kind != "conflict-record" {
		t.Errorf("notes: %+v", r.Notes)
	}
	// A record that names its writers wins over one that does not (a ctx that named none).
	bare := c
	bare.KeptBy = Side{}
	r = treeBoth(t, Files{}, files(rp, string(bare.Record())), files(rp, string(byB.Record())))
	if len(r.Conflicts) != 0 || string(r.Files[rp]) != string(byB.Record()) {
		t.Errorf("record naming writers not kept: %s %+v", r.Files[rp], r.Conflicts)
	}

	// Two different conflicts under one file name (a record edited by hand): both kept, the other one under
	// the id of its own content; still no conflict record about a record.
	other := newConflict("knowledge/other.md", []string{"body"}, nil, false, []byte("x\n"), []byte("y\n"), "larger content wins")
	other.ID = c.ID
	r = treeBoth(t, Files{}, files(rp, string(c.Record())), files(rp, string(other.Record())))
	if len(r.Conflicts) != 0 || len(r.Files) != 2 {
		t.Fatalf("two conflicts under one name: %s %+v", dump(r), r.Conflicts)
	}
	var paths []string
	for q, b := range r.Files {
		rec, err := ParseRecord(b)
		if err != nil || q != rec.RecordPath() || strings.HasPrefix(rec.Path, "conflicts/") {
			t.Errorf("%s: %+v %v", q, rec, err)
		}
		paths = append(paths, rec.Path)
	}
	if !strings.Contains(strings.Join(paths, " "), "knowledge/other.md") || !strings.Contains(strings.Join(paths, " "), p) {
		t.Errorf("a conflict was lost: %v", paths)
	}
}
