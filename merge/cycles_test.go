package merge

import (
	"strings"
	"testing"
)

// dec is a decision file as ctx writes it; supersededBy "" leaves the key out.
func dec(n, date, status, supersededBy string) string {
	s := "---\nid: " + n + "\ntitle: D" + n + "\nstatus: " + status + "\ndate: \"" + date + "\"\n"
	if supersededBy != "" {
		s += "superseded_by: " + supersededBy + "\n"
	}
	return s + "---\n## Decision\n\nD" + n + ".\n"
}

// Two sides that supersede 3 by 4 and 4 by 3 close a cycle no single writer may write: the merge keeps the
// later decision's supersede (4 by 3), puts 3 back to the base's status, and records a conflict whose lost
// version is the cycle (docs/merge.md "Supersede cycles"). A chain (3 by 4, 4 by 5) is no cycle.
func TestSupersedeCycleIsAConflict(t *testing.T) {
	const p3, p4, p5 = "decisions/0003-d.md", "decisions/0004-d.md", "decisions/0005-d.md"
	d3, d4 := "2026-11-01T10:00:00Z", "2026-11-02T10:00:00Z"
	base := files(p3, dec("3", d3, "accepted", ""), p4, dec("4", d4, "accepted", ""))
	// ctx decision set-status N superseded --superseded-by M also lists N in M's supersedes.
	ours := files(p3, dec("3", d3, "superseded", "4"), p4, strings.Replace(dec("4", d4, "accepted", ""), "status:", "supersedes: [3]\nstatus:", 1))
	theirs := files(p3, strings.Replace(dec("3", d3, "accepted", ""), "status:", "supersedes: [4]\nstatus:", 1), p4, dec("4", d4, "superseded", "3"))
	r := treeBoth(t, base, ours, theirs)
	if len(r.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", r.Conflicts)
	}
	c := r.Conflicts[0]
	if c.Path != p3 || c.Field != "status,superseded_by" || string(c.Kept) != string(theirs[p3]) || string(r.Files[p3]) != string(theirs[p3]) ||
		!strings.Contains(string(c.Lost), "superseded_by: 4") {
		t.Errorf("conflict %+v\nmerged 3:\n%s", c, r.Files[p3])
	}
	if string(r.Files[p4]) != string(theirs[p4]) {
		t.Errorf("4 lost its supersede, or still lists 3 in supersedes:\n%s", r.Files[p4])
	}
	if _, ok := r.Files[c.RecordPath()]; !ok {
		t.Errorf("no conflict record")
	}
	// A chain, and a cycle one side held already, are left as they are.
	a3, s3 := dec("3", d3, "accepted", ""), dec("3", d3, "superseded", "4")
	a4, s4 := dec("4", d4, "accepted", ""), dec("4", d4, "superseded", "3")
	a5 := dec("5", "2026-11-03T10:00:00Z", "accepted", "")
	base3 := files(p3, a3, p4, a4, p5, a5)
	if r := treeBoth(t, base3, files(p3, s3, p4, a4, p5, a5), files(p3, a3, p4, dec("4", d4, "superseded", "5"), p5, a5)); len(r.Conflicts) != 0 || !strings.Contains(string(r.Files[p4]), "superseded_by: 5") {
		t.Errorf("a chain: %+v", r.Conflicts)
	}
	if r := treeBoth(t, base3, files(p3, s3, p4, s4, p5, a5), files(p3, a3, p4, a4, p5, dec("5", "2026-11-03T10:00:00Z", "rejected", ""))); len(r.Conflicts) != 0 {
		t.Errorf("a cycle one side held: %+v", r.Conflicts)
	}
}
