package merge

import (
	"strconv"
	"strings"
	"testing"
)

func renADR(id int, uid, status string) []byte {
	return []byte("---\nid: " + renItoa(id) + "\nuid: " + uid + "\ntitle: Use X\nstatus: " + status + "\ndate: 2026-11-29T10:00:00Z\n---\n## Context\n\nctx\n")
}

func renItoa(n int) string { return strconv.Itoa(n) }

// A decision renumbered on one side and edited on the other stays one decision, at the new number, with
// the edit (found by the convergence test: an edit of the old file used to survive beside the moved one).
func TestRenumberedOnOneSideEditedOnTheOther(t *testing.T) {
	base := Files{"decisions/0003-use-x.md": renADR(3, "u-b", "proposed")}
	ours := Files{"decisions/0010-use-x.md": renADR(10, "u-b", "proposed")}
	theirs := Files{"decisions/0003-use-x.md": renADR(3, "u-b", "accepted")}
	for _, swap := range []bool{false, true} {
		o, th := ours, theirs
		if swap {
			o, th = theirs, ours
		}
		r := Tree(base, o, th)
		if _, dup := r.Files["decisions/0003-use-x.md"]; dup {
			t.Fatalf("swap=%v: the old file survived beside the renumbered one: %v", swap, renKeys(r.Files))
		}
		got := string(r.Files["decisions/0010-use-x.md"])
		if !strings.Contains(got, "id: 10") || !strings.Contains(got, "status: accepted") {
			t.Errorf("swap=%v: want id 10 with the edit:\n%s", swap, got)
		}
		if len(r.Conflicts) != 0 {
			t.Errorf("swap=%v: conflicts %+v", swap, r.Conflicts)
		}
	}
}

// Two merges elsewhere placed the same decision at different numbers: the larger number wins on every
// machine, and there is one copy.
func TestSameDecisionAtTwoNumbers(t *testing.T) {
	base := Files{}
	ours := Files{"decisions/0003-use-x.md": renADR(3, "u-b", "proposed"), "decisions/0004-a.md": renADR(4, "u-a", "proposed")}
	theirs := Files{"decisions/0010-use-x.md": renADR(10, "u-b", "proposed")}
	r1, r2 := Tree(base, ours, theirs), Tree(base, theirs, ours)
	if len(r1.Files) != len(r2.Files) {
		t.Fatalf("not symmetric: %v vs %v", renKeys(r1.Files), renKeys(r2.Files))
	}
	for p, b := range r1.Files {
		if string(r2.Files[p]) != string(b) {
			t.Errorf("not symmetric at %s", p)
		}
	}
	n := 0
	for p := range r1.Files {
		if strings.HasSuffix(p, "-use-x.md") {
			n++
			if p != "decisions/0010-use-x.md" {
				t.Errorf("kept at %s", p)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d copies: %v", n, renKeys(r1.Files))
	}
}

func renKeys(f Files) []string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	return out
}

// One side renumbered decision a onto 4 while the other side, still holding a at 1, added decision c as
// 4: after the merge every number is held once (found by the convergence test), whichever side merges.
func TestRenumberedOntoANumberTheOtherSideReused(t *testing.T) {
	base := Files{"decisions/0001-a.md": renADR(1, "u-a", "proposed")}
	ours := Files{"decisions/0001-a.md": renADR(1, "u-a", "proposed"), "decisions/0004-c.md": renADR(4, "u-c", "proposed")}
	theirs := Files{"decisions/0004-a.md": renADR(4, "u-a", "proposed")}
	r1, r2 := Tree(base, ours, theirs), Tree(base, theirs, ours)
	for name, r := range map[string]Result{"ours": r1, "theirs": r2} {
		nums := map[int]string{}
		for p := range r.Files {
			if n, _, ok := decisionNum(p); ok {
				if other, dup := nums[n]; dup {
					t.Errorf("%s merging: %d held by %s and %s", name, n, other, p)
				}
				nums[n] = p
			}
		}
		if len(nums) != 2 {
			t.Errorf("%s merging: want 2 decisions, got %v", name, renKeys(r.Files))
		}
	}
	for p, b := range r1.Files {
		if string(r2.Files[p]) != string(b) {
			t.Errorf("not symmetric at %s", p)
		}
	}
}

// A conflict's lost version keeps its own author and updated_at: resolving in its favour must not credit
// its text to the winner's author (reported by a new user).
func TestLostVersionKeepsItsAuthor(t *testing.T) {
	doc := func(author, at, body string) []byte {
		return []byte("---\nauthor: " + author + "\nupdated_at: " + at + "\nprovenance: owner_instruction\n---\n" + body)
	}
	base := Files{"knowledge/a.md": doc("Ada", "2026-11-29T10:00:00Z", "one\n")}
	ours := Files{"knowledge/a.md": doc("Alice", "2026-11-29T11:00:00Z", "one by alice\n")}
	theirs := Files{"knowledge/a.md": doc("Bob", "2026-11-29T12:00:00Z", "one by bob\n")}
	for _, r := range []Result{Tree(base, ours, theirs), Tree(base, theirs, ours)} {
		if len(r.Conflicts) != 1 {
			t.Fatalf("want one conflict, got %d", len(r.Conflicts))
		}
		c := r.Conflicts[0]
		if !strings.Contains(string(c.Kept), "author: Bob") || !strings.Contains(string(c.Kept), "one by bob") {
			t.Errorf("kept: %s", c.Kept)
		}
		if !strings.Contains(string(c.Lost), "author: Alice") || !strings.Contains(string(c.Lost), "updated_at: 2026-11-29T11:00:00Z") || !strings.Contains(string(c.Lost), "one by alice") {
			t.Errorf("lost should be Alice's own version: %s", c.Lost)
		}
	}
}

// TestDecisionRenamedTwice: a decision renamed by hand to two different names, one on each side
// (0004-use-why.md -> 0004-alpha.md and -> 0004-beta.md), stays one file (one uid, one number: two files
// would be the renumbering path) at the later name, and the other side's rename is reported, not lost: a
// "rename-rename" note at the kept file naming the other path (OldPath: the merge's Ctx-Renamed).
func TestDecisionRenamedTwice(t *testing.T) {
	const bp, ap, cp = "decisions/0004-use-why.md", "decisions/0004-alpha.md", "decisions/0004-beta.md"
	d := string(renADR(4, "u-why", "accepted"))
	r := treeBoth(t, files(bp, d), files(ap, d), files(cp, d))
	if len(r.Files) != 1 || r.Files[cp] == nil || len(r.Conflicts) != 0 {
		t.Fatalf("files %v, conflicts %+v", dump(r), r.Conflicts)
	}
	if len(r.Notes) != 1 || r.Notes[0].Kind != "rename-rename" || r.Notes[0].Path != cp || r.Notes[0].OldPath != ap ||
		!strings.Contains(r.Notes[0].Message, bp) || !strings.Contains(r.Notes[0].Message, ap) {
		t.Fatalf("notes %+v", r.Notes)
	}
	// One side's rename alone is no clash: no note.
	if r := treeBoth(t, files(bp, d), files(ap, d), files(bp, d)); len(r.Notes) != 0 || r.Files[ap] == nil {
		t.Errorf("one rename: %+v", r.Notes)
	}
}
