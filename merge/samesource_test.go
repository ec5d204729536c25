package merge

import (
	"fmt"
	"strings"
	"testing"
)

// imported is an imported decision: number n, uid, author and date as ctx import writes them, from source src.
func imported(n int, uid, author, date, src, body string) string {
	return fmt.Sprintf("---\nid: %d\nuid: %s\ntitle: Use dashes\nstatus: proposed\ndate: %q\nauthor: %s\nsource: %s\n---\n%s", n, uid, date, author, src, body)
}

// The same ADR imported on two clones (another uid, author and date each): one decision, not two with the
// second renumbered, whichever side is ours; the earlier import is kept whole. Before, every ADR of a
// folder imported on two clones was in the store twice after the merge.
func TestSameSourceOneDecision(t *testing.T) {
	const src = "docs/adr/0005-use-dashes.md"
	byA := imported(5, "aaaa-1", "a <a@x>", "2026-12-02T00:03:50Z", src, "# Use dashes\n\nBody.\n")
	byB := imported(5, "bbbb-2", "b <b@x>", "2026-12-02T00:03:52Z", src, "# Use dashes\n\nBody.\n")
	other := imported(7, "cccc-3", "b <b@x>", "2026-12-02T00:03:52Z", "docs/adr/0007-other.md", "# Other\n")
	p := "decisions/0005-use-dashes.md"
	r := treeBoth(t, Files{}, files(p, byA), files(p, byB, "decisions/0007-other.md", other))
	if len(r.Conflicts) != 0 || len(r.Files) != 2 || string(r.Files[p]) != byA || string(r.Files["decisions/0007-other.md"]) != other {
		t.Fatalf("two imports of one ADR:\n%s%+v", dump(r), r.Conflicts)
	}
	if len(r.Notes) != 1 || r.Notes[0].Kind != "same-source" {
		t.Errorf("notes: %+v", r.Notes)
	}

	// Imported under different numbers (b's store had a decision of its own first): one decision, at the
	// earlier import's number; b's reference to its old number follows.
	byB6 := imported(6, "bbbb-2", "b <b@x>", "2026-12-02T00:03:52Z", src, "# Use dashes\n\nBody.\n")
	refs := "---\nid: 9\nuid: dddd-4\ntitle: Later\nstatus: accepted\nsupersedes: 6\n---\nlater\n"
	ours := files(p, byA)
	theirs := files("decisions/0006-use-dashes.md", byB6, "decisions/0009-later.md", refs)
	r = treeBoth(t, Files{}, ours, theirs)
	if len(r.Conflicts) != 0 || string(r.Files[p]) != byA || r.Files["decisions/0006-use-dashes.md"] != nil {
		t.Fatalf("two imports of one ADR under two numbers:\n%s", dump(r))
	}
	if got := string(r.Files["decisions/0009-later.md"]); !strings.Contains(got, "supersedes: 5\n") {
		t.Errorf("reference not rewritten:\n%s", got)
	}

	// One ADR edited on one clone before its import: one decision, the difference merged by the rules of
	// its kind (a conflict on the body; the later import's text kept, the other in the record).
	edited := imported(5, "bbbb-2", "b <b@x>", "2026-12-02T00:03:52Z", src, "# Use dashes\n\nBody, edited.\n")
	r = treeBoth(t, Files{}, files(p, byA), files(p, edited))
	if len(r.Files) != 2 || len(r.Conflicts) != 1 || r.Conflicts[0].Path != p || !strings.Contains(string(r.Files[p]), "Body, edited.") ||
		!strings.Contains(string(r.Conflicts[0].Lost), "\nBody.\n") || !strings.Contains(string(r.Files[p]), "uid: aaaa-1\n") {
		t.Fatalf("two different imports of one ADR:\n%s%+v", dump(r), r.Conflicts)
	}

	// Two decisions of one side from one source (imported twice there): left to the other rules.
	twice := files(p, byB, "decisions/0008-use-dashes.md", imported(8, "eeee-5", "b <b@x>", "2026-12-02T00:03:53Z", src, "# Use dashes\n\nBody.\n"))
	r = treeBoth(t, Files{}, files(p, byA), twice)
	if len(r.Files) != 3 {
		t.Errorf("a side's own two decisions of one source were merged:\n%s", dump(r))
	}
}
