package store_test

import (
	"errors"
	"fmt"
	"github.com/ctx-dev/ctx/merge"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

func TestAddSkill(t *testing.T) {
	f := newFixture(t)
	f.commits("ctx", 1, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "deploy-staging", "Deploy to staging", "## Steps\n\n1. Build", ""))
	})
	f.trailers("ctx", "skill.add", "deploy-staging")
	want := "---\nname: deploy-staging\ndescription: Deploy to staging\n---\n\n## Steps\n\n1. Build\n"
	if got := storetest.Show(t, f.dir, "ctx", "skills/deploy-staging/SKILL.md"); got+"\n" != want {
		t.Fatalf("SKILL.md:\n%q\nwant\n%q", got, want)
	}
	sk, err := f.view().GetSkill(f.ctx, "deploy-staging")
	if err != nil || sk.Description != "Deploy to staging" || sk.Content != want {
		t.Fatalf("get: %+v %v", sk, err)
	}
	f.commits("ctx", 0, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "deploy-staging", "Deploy to staging", "## Steps\n\n1. Build", ""))
		if _, _, err := f.s.AddSkill(f.ctx, "Bad/Name", "d", "x", ""); err == nil {
			t.Fatal("bad name accepted")
		}
		if _, _, err := f.s.AddSkill(f.ctx, "x", " ", "x", ""); err == nil {
			t.Fatal("empty description accepted")
		}
		if _, _, err := f.s.AddSkill(f.ctx, "x", strings.Repeat("d", 1025), "x", ""); err == nil {
			t.Fatal("long description accepted")
		}
	})
}

func TestAddSkillKeepsUnknownKeysAndBytes(t *testing.T) {
	f := newFixture(t)
	orig := "---\n# a comment\nname: lint\ndescription:   Run the linter\nlicense: MIT\nallowed-tools: [bash]\n---\nRun  `make lint`.\r\n"
	if _, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "skills/lint/SKILL.md", []byte(orig))
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
	// Same name, description and instructions: nothing changes.
	f.commits("ctx", 0, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "lint", "Run the linter", "Run  `make lint`.", ""))
	})
	// New instructions: the front matter's bytes are kept.
	f.commits("ctx", 1, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "lint", "Run the linter", "Run `golangci-lint run`.", ""))
	})
	got := storetest.Show(t, f.dir, "ctx", "skills/lint/SKILL.md")
	if !strings.HasPrefix(got, orig[:strings.Index(orig, "Run  ")]) || !strings.Contains(got, "golangci-lint") {
		t.Fatalf("front matter not kept byte for byte:\n%s", got)
	}
	// New description: unknown keys kept, body bytes kept.
	f.commits("ctx", 1, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "lint", "Lint the code", "Run `golangci-lint run`.", ""))
	})
	got = storetest.Show(t, f.dir, "ctx", "skills/lint/SKILL.md")
	for _, w := range []string{"license: MIT", "allowed-tools:", "description: Lint the code", "\nRun `golangci-lint run`."} {
		if !strings.Contains(got, w) {
			t.Fatalf("SKILL.md lacks %q:\n%s", w, got)
		}
	}
}

func TestSkillUsageFeedbackStats(t *testing.T) {
	f := newFixture(t)
	must[store.Skill](t)(f.s.AddSkill(f.ctx, "run-tests", "Run tests", "go test ./...", ""))
	var nf *store.NotFoundError
	f.commits("ctx", 0, func() {
		for _, r := range []int{0, 6, -1} {
			if _, _, err := f.s.RateSkill(f.ctx, "run-tests", r, "x"); err == nil || !strings.Contains(err.Error(), "1 to 5") {
				t.Fatalf("rating %d: %v", r, err)
			}
		}
		if _, _, err := f.s.RateSkill(f.ctx, "nope", 3, ""); !errors.As(err, &nf) || err.Error() != "Skill 'nope' not found" {
			t.Fatalf("missing skill: %v", err)
		}
		if _, _, err := f.s.ReportSkillUsage(f.ctx, "nope", ""); !errors.As(err, &nf) {
			t.Fatalf("missing skill: %v", err)
		}
	})
	f.commits("ctx", 1, func() { must[store.SkillUsage](t)(f.s.ReportSkillUsage(f.ctx, "run-tests", "")) })
	f.trailers("ctx", "skill.usage", "run-tests")
	var used store.SkillUsage
	f.commits("ctx", 1, func() { used = must[store.SkillUsage](t)(f.s.ReportSkillUsage(f.ctx, "run-tests", "other")) })
	f.commits("ctx", 1, func() { must[store.SkillFeedback](t)(f.s.RateSkill(f.ctx, "run-tests", 1, "broken")) })
	f.trailers("ctx", "skill.rate", "run-tests")

	usage := storetest.Show(t, f.dir, "ctx", merge.LogMonthPath("skills/run-tests", "usage", mustMonth(t, used.Timestamp)))
	// Lines are ordered by timestamp then id (docs/format.md); both writes may share a second.
	if lines := strings.Split(usage, "\n"); len(lines) != 2 || !strings.Contains(usage, `"session_id":"s1"`) || !strings.Contains(usage, `"session_id":"other"`) {
		t.Fatalf("usage log:\n%s", usage)
	}
	fb, err := f.view().SkillFeedback(f.ctx, "run-tests")
	if err != nil || len(fb) != 1 || fb[0].Rating != 1 || fb[0].Comment != "broken" || fb[0].Agent != "test-agent" || fb[0].ID == "" {
		t.Fatalf("feedback: %+v %v", fb, err)
	}
	if !strings.Contains(storetest.Show(t, f.dir, "ctx", merge.LogMonthPath("skills/run-tests", "feedback", mustMonth(t, fb[0].Timestamp))), `"rating":1,`) {
		t.Fatal("rating not written as a whole number")
	}
	stats := func() store.SkillStats {
		t.Helper()
		st, err := f.view().SkillStats(f.ctx)
		if err != nil || len(st) != 1 {
			t.Fatalf("stats: %+v %v", st, err)
		}
		return st[0]
	}
	// One rating of 1: not enough ratings.
	if st := stats(); st.NeedsAttention || st.RatingCount != 1 || st.UsageCount != 2 || st.LastUsed == nil || st.AvgRating != 1 {
		t.Fatalf("one rating: %+v", st)
	}
	// Ratings 2 and 3.9 (written directly, as a merge or import could): average 2.95 → needs attention.
	setFeedback := func(ratings ...float64) {
		t.Helper()
		var b strings.Builder
		for i, r := range ratings {
			fmt.Fprintf(&b, `{"id":"f%d","agent":"a","rating":%v,"comment":"","timestamp":"2025-05-10T14:0%d:00Z"}`+"\n", i, r, i)
		}
		if _, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
			ed := store.Edits{}
			ed.Put(store.Public, "skills/run-tests/.feedback.ndjson", []byte(b.String()))
			// The flat log replaces the whole log: the month file of the rating above goes.
			ed.Del(store.Public, merge.LogMonthPath("skills/run-tests", "feedback", mustMonth(t, fb[0].Timestamp)))
			return ed, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	setFeedback(2, 3.9)
	if st := stats(); !st.NeedsAttention || st.AvgRating != 2.95 || st.RatingCount != 2 {
		t.Fatalf("avg 2.95: %+v", st)
	}
	setFeedback(2, 4)
	if st := stats(); st.NeedsAttention || st.AvgRating != 3 {
		t.Fatalf("avg exactly 3.0: %+v", st)
	}
	setFeedback(1)
	if st := stats(); st.NeedsAttention {
		t.Fatalf("one rating of 1: %+v", st)
	}
	if !store.NeedsAttention([]float64{2, 3}) || store.NeedsAttention([]float64{3, 3}) || store.NeedsAttention([]float64{1}) {
		t.Fatal("NeedsAttention rule")
	}
}

func TestSkillProposals(t *testing.T) {
	f := newFixture(t)
	must[store.Skill](t)(f.s.AddSkill(f.ctx, "deploy", "Deploy", "1. Build\n2. Push\n3. Roll out", ""))
	cur := storetest.Show(t, f.dir, "ctx", "skills/deploy/SKILL.md") + "\n"
	proposed := strings.Replace(cur, "3. Roll out\n", "3. Roll out\n4. Roll back on failure\n", 1)
	var p store.SkillProposal
	f.commits("ctx", 1, func() {
		p = must[store.SkillProposal](t)(f.s.ProposeSkill(f.ctx, "deploy", proposed, "add rollback"))
	})
	f.trailers("ctx", "skill.propose", "deploy")
	if p.Status != "pending" || p.ResolvedAt != nil || p.ResolvedBy != "" || p.SkillName != "deploy" {
		t.Fatalf("proposal: %+v", p)
	}
	if !strings.HasPrefix(p.DiffSummary, "@@ -") || !strings.Contains(p.DiffSummary, "\n+4. Roll back on failure\n") || !strings.Contains(p.DiffSummary, "\n 3. Roll out\n") {
		t.Fatalf("diff:\n%s", p.DiffSummary)
	}
	raw := storetest.Show(t, f.dir, "ctx", "skills/deploy/.proposals/"+p.ID+".json")
	for _, w := range []string{`"resolved_at": null`, `"resolved_by": ""`, `"status": "pending"`, `"diff_summary": "@@`} {
		if !strings.Contains(raw, w) {
			t.Fatalf("proposal file lacks %s:\n%s", w, raw)
		}
	}
	f.commits("ctx", 0, func() {
		if _, _, err := f.s.ProposeSkill(f.ctx, "deploy", cur, "same"); err == nil {
			t.Fatal("identical proposal accepted")
		}
		if _, _, err := f.s.ResolveProposal(f.ctx, "deploy", p.ID, "maybe"); err == nil {
			t.Fatal("bad decision accepted")
		}
		var nf *store.NotFoundError
		if _, _, err := f.s.ProposeSkill(f.ctx, "nope", "x", ""); !errors.As(err, &nf) {
			t.Fatalf("missing skill: %v", err)
		}
		if _, err := f.view().ListProposals(f.ctx, "deploy", "weird"); err == nil {
			t.Fatal("bad status accepted")
		}
	})
	p2 := must[store.SkillProposal](t)(f.s.ProposeSkill(f.ctx, "deploy", cur+"extra\n", "other"))
	if l, err := f.view().ListProposals(f.ctx, "deploy", "pending"); err != nil || len(l) != 2 {
		t.Fatalf("pending: %+v %v", l, err)
	}
	// Accepting: SKILL.md replaced and proposal marked in the same commit.
	var acc store.SkillProposal
	f.commits("ctx", 1, func() {
		acc = must[store.SkillProposal](t)(f.s.ResolveProposal(f.ctx, "deploy", p.ID, "accept"))
	})
	f.trailers("ctx", "skill.proposal.accept", "deploy/"+p.ID)
	changed := testenv.Git(t, f.dir, "diff-tree", "--no-commit-id", "--name-only", "-r", "ctx")
	if changed != "skills/deploy/.proposals/"+p.ID+".json\nskills/deploy/SKILL.md" {
		t.Fatalf("accept commit changed:\n%s", changed)
	}
	if got := storetest.Show(t, f.dir, "ctx", "skills/deploy/SKILL.md") + "\n"; got != proposed {
		t.Fatalf("SKILL.md not replaced:\n%s", got)
	}
	if acc.Status != "accepted" || acc.ResolvedAt == nil || acc.ResolvedBy != testenv.Name+" <"+testenv.Email+">" {
		t.Fatalf("accepted: %+v", acc)
	}
	// Resolved once only.
	f.commits("ctx", 0, func() {
		if _, _, err := f.s.ResolveProposal(f.ctx, "deploy", p.ID, "reject"); err == nil {
			t.Fatal("resolved twice")
		}
	})
	f.commits("ctx", 1, func() { must[store.SkillProposal](t)(f.s.ResolveProposal(f.ctx, "deploy", p2.ID, "reject")) })
	if got := storetest.Show(t, f.dir, "ctx", "skills/deploy/SKILL.md") + "\n"; got != proposed {
		t.Fatal("rejecting changed SKILL.md")
	}
	if l, _ := f.view().ListProposals(f.ctx, "deploy", "rejected"); len(l) != 1 || l[0].ID != p2.ID {
		t.Fatalf("rejected: %+v", l)
	}
	if l, _ := f.view().ListProposals(f.ctx, "deploy", ""); len(l) != 2 {
		t.Fatalf("all: %+v", l)
	}
}

func TestRemoveSkill(t *testing.T) {
	f := newFixture(t)
	must[store.Skill](t)(f.s.AddSkill(f.ctx, "x", "X", "do x", ""))
	must[store.SkillFeedback](t)(f.s.RateSkill(f.ctx, "x", 4, ""))
	f.commits("ctx", 1, func() {
		if _, err := f.s.RemoveSkill(f.ctx, "x"); err != nil {
			t.Fatal(err)
		}
	})
	f.trailers("ctx", "skill.rm", "x")
	for p := range storetest.Files(t, f.dir, "ctx") {
		if strings.HasPrefix(p, "skills/") {
			t.Fatalf("left %s", p)
		}
	}
	var nf *store.NotFoundError
	f.commits("ctx", 0, func() {
		if _, err := f.s.RemoveSkill(f.ctx, "x"); !errors.As(err, &nf) {
			t.Fatalf("remove missing: %v", err)
		}
	})
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
	b := strings.Replace(strings.Replace(a, "2\n", "two\n", 1), "18\n", "", 1)
	want := "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -15,6 +15,5 @@\n 15\n 16\n 17\n-18\n 19\n 20\n"
	if got := store.UnifiedDiff(a, b, 3); got != want {
		t.Fatalf("diff:\n%s\nwant\n%s", got, want)
	}
	if got := store.UnifiedDiff("", "x", 3); got != "@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n" {
		t.Fatalf("diff from empty: %q", got)
	}
	if store.UnifiedDiff(a, a, 3) != "" {
		t.Fatal("equal texts")
	}
}

func TestLogLinesOrderedByTimestamp(t *testing.T) {
	f := newFixture(t)
	must[store.Skill](t)(f.s.AddSkill(f.ctx, "s", "S", "x", ""))
	later := `{"id":"zz","session_id":"","agent":"a","timestamp":"2999-01-01T00:00:00Z"}`
	earlier := `{"id":"aa","session_id":"","agent":"a","timestamp":"2000-01-01T00:00:00Z"}`
	if _, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "skills/s/.usage.ndjson", []byte(earlier+"\n"+later+"\n"))
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
	u := must[store.SkillUsage](t)(f.s.ReportSkillUsage(f.ctx, "s", "x"))
	// A sharded store appends to the month file and leaves the flat log as it was; readers read both,
	// in timestamp order.
	if got := storetest.Show(t, f.dir, "ctx", "skills/s/.usage.ndjson"); got != earlier+"\n"+later {
		t.Fatalf("flat log changed: %q", got)
	}
	month := storetest.Show(t, f.dir, "ctx", merge.LogMonthPath("skills/s", "usage", mustMonth(t, u.Timestamp)))
	if !strings.Contains(month, u.ID) || strings.Contains(month, "zz") {
		t.Fatalf("month file: %q", month)
	}
	uses, err := f.view().SkillUsages(f.ctx, "s")
	if err != nil || len(uses) != 3 || uses[0].ID != "aa" || uses[1].ID != u.ID || uses[2].ID != "zz" {
		t.Fatalf("order: %+v %v", uses, err)
	}
}

// TestAddSkillFromWholeFile: instructions that are a whole SKILL.md (front matter and body, as `ctx skill
// add NAME -d D -f SKILL.md` reads them) make one front matter: the file's keys, with the name and
// description given; the body is the file's body. Adding the same file again changes nothing.
func TestAddSkillFromWholeFile(t *testing.T) {
	f := newFixture(t)
	file := "---\nname: other-name\ndescription: the file's own\nallowed-tools: Bash(git:*)\nlicense: MIT\n---\n\n# Review\n\nCheck the tests.\n"
	f.commits("ctx", 1, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "review", "Review a pull request", file, ""))
	})
	got := storetest.Show(t, f.dir, "ctx", "skills/review/SKILL.md") + "\n"
	want := "---\nname: review\ndescription: Review a pull request\nallowed-tools: Bash(git:*)\nlicense: MIT\n---\n\n# Review\n\nCheck the tests.\n"
	if got != want {
		t.Fatalf("SKILL.md:\n%s\nwant\n%s", got, want)
	}
	f.commits("ctx", 0, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "review", "Review a pull request", file, ""))
	})
}

// TestAddSkillFrontMatterDoesNotParse: instructions that begin with a front-matter block that does not
// parse are refused as invalid input, naming the YAML error, and nothing is committed (stored as they
// were, the file had a second block that agents read as instructions). A `---` line later in the body is
// not a front matter and is kept.
func TestAddSkillFrontMatterDoesNotParse(t *testing.T) {
	f := newFixture(t)
	f.commits("ctx", 0, func() {
		_, _, err := f.s.AddSkill(f.ctx, "demo", "a demo", "---\nname: x\ndescription: [unclosed\n---\nBody text\n", "")
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "does not parse") || !strings.Contains(err.Error(), "line") {
			t.Fatalf("err = %v, want ErrInvalid naming the YAML error", err)
		}
	})
	f.commits("ctx", 1, func() {
		must[store.Skill](t)(f.s.AddSkill(f.ctx, "demo", "a demo", "Intro\n\n---\nname: [not front matter\n---\n", ""))
	})
	if got := storetest.Show(t, f.dir, "ctx", "skills/demo/SKILL.md"); !strings.Contains(got, "name: [not front matter") {
		t.Fatalf("body lost:\n%s", got)
	}
}

// TestResolveProposalByPrefix: a proposal is named by its id or by a unique prefix of it (4 hex digits or
// more), as conflict ids are; a prefix several ids start with is refused listing them, and anything
// shorter, or not hex, is not found. Found by a tester: only the 36-character UUID was taken.
func TestResolveProposalByPrefix(t *testing.T) {
	f := newFixture(t)
	must[store.Skill](t)(f.s.AddSkill(f.ctx, "deploy", "Deploy", "1. Build\n", ""))
	p := must[store.SkillProposal](t)(f.s.ProposeSkill(f.ctx, "deploy", "---\nname: deploy\ndescription: Deploy\n---\n1. Build\n2. Test\n", "test"))
	q := must[store.SkillProposal](t)(f.s.ProposeSkill(f.ctx, "deploy", "---\nname: deploy\ndescription: Deploy\n---\n1. Build\n2. Ship\n", "ship"))
	var nf *store.NotFoundError
	for _, bad := range []string{p.ID[:3], "zzzz", p.ID[:8] + "x"} {
		if _, _, err := f.s.ResolveProposal(f.ctx, "deploy", bad, "reject"); !errors.As(err, &nf) {
			t.Errorf("proposal %q: %v, want not found", bad, err)
		}
	}
	got := must[store.SkillProposal](t)(f.s.ResolveProposal(f.ctx, "deploy", p.ID[:8], "reject"))
	if got.ID != p.ID || got.Status != "rejected" {
		t.Fatalf("by prefix: %+v", got)
	}
	// a copy of q whose id shares q's first 8 digits makes that prefix ambiguous
	twin := q.ID[:8] + "-0000-4000-8000-000000000000"
	raw := storetest.Show(t, f.dir, "ctx", "skills/deploy/.proposals/"+q.ID+".json")
	if _, err := f.s.Write(f.ctx, store.Op{Name: "test.twin"}, func(v *store.View) (store.Edits, error) {
		e := store.Edits{}
		e.Put(store.Public, "skills/deploy/.proposals/"+twin+".json", []byte(strings.Replace(raw, q.ID, twin, 1)+"\n"))
		return e, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.s.ResolveProposal(f.ctx, "deploy", q.ID[:8], "accept"); err == nil || !strings.Contains(err.Error(), "ambiguous") ||
		!strings.Contains(err.Error(), q.ID) || !strings.Contains(err.Error(), twin) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if got := must[store.SkillProposal](t)(f.s.ResolveProposal(f.ctx, "deploy", q.ID, "upstream")); got.ID != q.ID {
		t.Errorf("the full id: %+v", got)
	}
}
