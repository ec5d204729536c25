package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestWritesNeverMoveEntries: no writer moves or removes an entry it was not asked to. A batch whose key
// is held by another scope with other content is refused whole; with the same content the entry stays
// where it is and the item says so. AddSkill refuses another scope too.
func TestWritesNeverMoveEntries(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "claude", Content: "shared"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddSkill(bg, "deploy", "Deploys", "Run make deploy.", ""); err != nil {
		t.Fatal(err)
	}
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	batch := store.Batch{
		Entries: []store.BatchEntry{
			{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{Key: "claude", Content: "private notes", Scope: store.Private}},
			{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{Key: "fresh", Content: "new", Scope: store.Private}},
		},
		Skills: []store.NewSkill{{Name: "deploy", Content: []byte("---\nname: deploy\ndescription: other\n---\n"), Scope: store.Private}},
	}
	_, err := s.ApplyReport(bg, store.Op{Name: "import", Summary: "x"}, batch)
	if !errors.Is(err, store.ErrScopeClash) || !strings.Contains(err.Error(), "knowledge claude is public") || !strings.Contains(err.Error(), "skill deploy is public") {
		t.Fatalf("clash: %v", err)
	}
	if testenv.Git(t, dir, "rev-parse", "ctx") != tip || storetest.Count(t, dir, store.RefPrivate) != 0 {
		t.Fatal("a refused batch wrote something")
	}
	if got := storetest.Show(t, dir, "ctx", "knowledge/claude.md"); !strings.HasSuffix(got, "shared") {
		t.Fatalf("public entry changed: %q", got)
	}

	// The same content into another scope: nothing moves, the item says why.
	same := store.Batch{Entries: []store.BatchEntry{{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{Key: "claude", Content: "shared", Scope: store.Private}}}}
	res, err := s.ApplyReport(bg, store.Op{Name: "import", Summary: "x"}, same)
	if err != nil || res.Changed() || len(res.Items) != 1 || res.Items[0].Action != store.ActionUnchanged || !strings.Contains(res.Items[0].Note, "already public") {
		t.Fatalf("same content: %+v %v", res, err)
	}

	// AddSkill into another scope is refused; the scope command moves.
	if _, _, err := s.AddSkill(bg, "deploy", "Deploys", "Run make deploy.", store.Private); !errors.Is(err, store.ErrScopeClash) {
		t.Fatalf("AddSkill in another scope: %v", err)
	}
	if _, err := s.SetScope(bg, "skill", "deploy", store.Private); err != nil {
		t.Fatal(err)
	}
}

// TestBatchUpdatesDecisionsBySource: an ADR imported again with other content updates its decision (same
// id and uid) and lists what changed; an unchanged one is left alone; "superseded by" links both sides.
func TestBatchUpdatesDecisionsBySource(t *testing.T) {
	s, _ := storetest.New(t)
	body := func(s string) *string { return &s }
	b1 := store.Batch{Decisions: []store.NewDecision{
		{Title: "Use MySQL", Status: "accepted", Source: "docs/adr/0001-mysql.md", Number: 1, Body: body("# 1. Use MySQL\n")},
		{Title: "Use Postgres", Status: "proposed", Source: "docs/adr/0002-pg.md", Number: 2, Body: body("# 2. Use Postgres\n")},
	}}
	res, err := s.ApplyReport(bg, store.Op{Name: "import", Summary: "x"}, b1)
	if err != nil || len(res.Decisions) != 2 {
		t.Fatal(res, err)
	}
	uid := res.Decisions[1].UID
	b2 := store.Batch{Decisions: []store.NewDecision{
		{Title: "Use MySQL", Status: "superseded", Source: "docs/adr/0001-mysql.md", Number: 1, Body: body("# 1. Use MySQL\n\nSuperseded by ADR-0002\n"),
			SupersededByRef: store.DecisionRef{Number: 2}},
		{Title: "Use Postgres 16", Status: "accepted", Source: "docs/adr/0002-pg.md", Number: 2, Body: body("# 2. Use Postgres 16\n")},
	}}
	res, err = s.ApplyReport(bg, store.Op{Name: "import", Summary: "x"}, b2)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.RefView(bg)
	all, _ := v.ListDecisions(bg)
	if len(all) != 2 {
		t.Fatalf("%d decisions, want 2", len(all))
	}
	d1, d2 := all[0], all[1]
	if d1.Status != "superseded" || d1.SupersededBy != 2 || len(d2.Supersedes) != 1 || d2.Supersedes[0] != 1 {
		t.Errorf("links: %+v / %+v", d1, d2)
	}
	if d2.Title != "Use Postgres 16" || d2.Status != "accepted" || d2.UID != uid || d2.ID != 2 {
		t.Errorf("updated decision: %+v", d2)
	}
	var changes string
	for _, it := range res.Items {
		if it.Key == "2" {
			changes = strings.Join(it.Changes, ", ")
			if it.Action != store.ActionUpdated {
				t.Errorf("item 2: %+v", it)
			}
		}
	}
	if !strings.Contains(changes, `title "Use Postgres" -> "Use Postgres 16"`) || !strings.Contains(changes, `status "proposed" -> "accepted"`) || !strings.Contains(changes, "body") {
		t.Errorf("changes of decision 2: %s", changes)
	}
	res, err = s.ApplyReport(bg, store.Op{Name: "import", Summary: "x"}, b2)
	if err != nil || res.Changed() {
		t.Errorf("a third import changed something: %+v %v", res.Items, err)
	}
}

// TestBatchFollowsRenamedADR: an ADR whose file was renamed (and retitled) is the decision imported from
// its old name, as long as the old file is gone: same id and uid, source and title follow the file. The
// same number in a new file while the old one is still in the work tree is another decision.
func TestBatchFollowsRenamedADR(t *testing.T) {
	s, dir := storetest.New(t)
	body := func(s string) *string { return &s }
	op := store.Op{Name: "import", Summary: "x"}
	if err := os.MkdirAll(filepath.Join(dir, "docs", "adr"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"0001-mysql.md", "0002-pg.md"} {
		if err := os.WriteFile(filepath.Join(dir, "docs", "adr", n), []byte("x\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{
		{Title: "Use MySQL", Status: "accepted", Source: "docs/adr/0001-mysql.md", Number: 1, Body: body("# 1. Use MySQL\n")},
		{Title: "Use Postgres", Status: "proposed", Source: "docs/adr/0002-pg.md", Number: 2, Body: body("# 2. Use Postgres\n")},
	}})
	if err != nil || len(res.Decisions) != 2 {
		t.Fatal(res, err)
	}
	uid := res.Decisions[1].UID
	rename := store.NewDecision{Title: "Use Postgres 16", Status: "accepted", Source: "docs/adr/0002-use-postgres.md", Number: 2, Body: body("# 2. Use Postgres 16\n")}
	// The old file is still there: a second ADR numbered 2 (a copy), not a rename.
	if err := os.WriteFile(filepath.Join(dir, "docs", "adr", "0002-pg-copy.md"), []byte("x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	cp := rename
	cp.Source = "docs/adr/0002-pg-copy.md"
	res, err = s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{cp}})
	if err != nil || len(res.Items) != 1 || res.Items[0].Action != store.ActionAdded || res.Decisions[0].ID != 3 {
		t.Fatalf("copy while the old file is there: %+v %v", res.Items, err)
	}
	// git mv: the old file is gone.
	if err := os.Remove(filepath.Join(dir, "docs", "adr", "0002-pg.md")); err != nil {
		t.Fatal(err)
	}
	res, err = s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{rename}})
	if err != nil || len(res.Items) != 1 || res.Items[0].Action != store.ActionUpdated || res.Items[0].Key != "2" {
		t.Fatalf("rename: %+v %v", res.Items, err)
	}
	if ch := strings.Join(res.Items[0].Changes, ", "); !strings.Contains(ch, `title "Use Postgres" -> "Use Postgres 16"`) || !strings.Contains(ch, "source") {
		t.Errorf("changes: %s", ch)
	}
	v, _ := s.RefView(bg)
	all, _ := v.ListDecisions(bg)
	if len(all) != 3 || all[1].UID != uid || all[1].Source != "docs/adr/0002-use-postgres.md" || all[1].Title != "Use Postgres 16" {
		t.Fatalf("after the rename: %+v", all)
	}
	// Another folder's ADR 1 is not ADR 1 of docs/adr renamed, even with docs/adr/0001-mysql.md gone.
	if err := os.Remove(filepath.Join(dir, "docs", "adr", "0001-mysql.md")); err != nil {
		t.Fatal(err)
	}
	res, err = s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{
		{Title: "Use gRPC", Status: "accepted", Source: "services/api/adr/0001-grpc.md", Number: 1, Body: body("# 1. Use gRPC\n")}}})
	if err != nil || res.Items[0].Action != store.ActionAdded {
		t.Fatalf("another folder: %+v %v", res.Items, err)
	}
}

// TestBatchFollowsRenumberedADR: an ADR renumbered (git mv 0003-x.md 0007-x.md, heading too) and imported
// again is the decision it was, found by title and body (at least half alike), or by body alone when
// retitled too (at least 80% alike); it keeps its id. A new ADR whose title matches a gone one but whose
// body does not, or whose body is unlike, adds a decision.
func TestBatchFollowsRenumberedADR(t *testing.T) {
	s, dir := storetest.New(t)
	body := func(s string) *string { return &s }
	op := store.Op{Name: "import", Summary: "x"}
	adr := filepath.Join(dir, "docs", "adr")
	if err := os.MkdirAll(adr, 0o777); err != nil {
		t.Fatal(err)
	}
	cacheBody := "## Context\n\nThe API is slow under load.\nReads dominate.\nData changes hourly.\n\n## Decision\n\nPut a cache in front of the API.\n"
	queueBody := "## Context\n\nJobs pile up at night.\nWorkers crash.\nRetries are manual.\n\n## Decision\n\nUse a queue with retries.\n"
	res, err := s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{
		{Title: "Use a cache", Status: "accepted", Source: "docs/adr/0003-cache.md", Number: 3, Body: body(cacheBody)},
		{Title: "Use a queue", Status: "accepted", Source: "docs/adr/0004-queue.md", Number: 4, Body: body(queueBody)},
	}})
	if err != nil || len(res.Decisions) != 2 || res.Decisions[0].ID != 3 {
		t.Fatal(res, err)
	}
	uid := res.Decisions[0].UID
	// Renumbered, same title, a line edited: decision 3.
	res, err = s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{
		{Title: "Use a cache", Status: "accepted", Source: "docs/adr/0007-cache.md", Number: 7, Body: body(strings.Replace(cacheBody, "hourly", "daily", 1))}}})
	if err != nil || len(res.Items) != 1 || res.Items[0].Action != store.ActionUpdated || res.Items[0].Key != "3" || res.Decisions[0].UID != uid {
		t.Fatalf("renumbered: %+v %+v %v", res.Items, res.Decisions, err)
	}
	// Renumbered and retitled, the body as it was: decision 4.
	res, err = s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{
		{Title: "Queue the jobs", Status: "accepted", Source: "docs/adr/0009-jobs.md", Number: 9, Body: body(queueBody)}}})
	if err != nil || len(res.Items) != 1 || res.Items[0].Action != store.ActionUpdated || res.Items[0].Key != "4" {
		t.Fatalf("renumbered and retitled: %+v %v", res.Items, err)
	}
	v, _ := s.RefView(bg)
	if all, _ := v.ListDecisions(bg); len(all) != 2 {
		t.Fatalf("after the renumbers: %+v", all)
	}
	// Gone again (0007 and 0009 are not files of the work tree either): a new ADR with decision 3's title
	// but another body, and one with another title and body, are new decisions.
	res, err = s.ApplyReport(bg, op, store.Batch{Decisions: []store.NewDecision{
		{Title: "Use a cache", Status: "proposed", Source: "docs/adr/0010-cache.md", Number: 10, Body: body("## Context\n\nPages render slowly.\nUsers leave.\n\n## Decision\n\nA CDN in front of the site.\n")},
		{Title: "Use Rust", Status: "proposed", Source: "docs/adr/0011-rust.md", Number: 11, Body: body("## Context\n\nSpeed.\n")},
	}})
	if err != nil || len(res.Items) != 2 || res.Items[0].Action != store.ActionAdded || res.Items[1].Action != store.ActionAdded {
		t.Fatalf("new ADRs: %+v %v", res.Items, err)
	}
}

// TestRejectedAndSupersede: rejected is a status; SetDecisionStatus superseded records supersedes on the
// replacing decision; a decision cannot supersede itself.
func TestRejectedAndSupersede(t *testing.T) {
	s, _ := storetest.New(t)
	if _, _, err := s.AddDecision(bg, store.NewDecision{Title: "Use Mongo", Status: "rejected"}); err != nil {
		t.Fatal(err)
	}
	d2, _, _ := s.AddDecision(bg, store.NewDecision{Title: "Use PG"})
	d3, _, _ := s.AddDecision(bg, store.NewDecision{Title: "Use PG 16"})
	if _, _, err := s.SetDecisionStatus(bg, "2", "superseded", d3.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SetDecisionStatus(bg, "3", "superseded", 3); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("self-supersede: %v", err)
	}
	v, _ := s.RefView(bg)
	got2, _ := v.FindDecision(bg, "2")
	got3, _ := v.FindDecision(bg, "3")
	got1, _ := v.FindDecision(bg, "1")
	if got1.Status != "rejected" || got2.SupersededBy != 3 || len(got3.Supersedes) != 1 || got3.Supersedes[0] != d2.ID {
		t.Errorf("1 %+v\n2 %+v\n3 %+v", got1, got2, got3)
	}
}

// TestSkillFrontMatterOneRule: ParseSkill reads the description the user sees in every shape that used to
// lose it, and ctx commit's validation accepts such a SKILL.md (LintFile says what was read) while a
// knowledge file whose front matter does not parse is refused with its line.
func TestSkillFrontMatterOneRule(t *testing.T) {
	for in, want := range map[string]string{
		"\ufeff---\nname: x\ndescription: With a BOM\n---\n":      "With a BOM",
		"---\nname: x\ndescription: a: b\n---\n":                  "a: b",
		"---\nname: x\ndescription: one\ndescription: two\n---\n": "one",
	} {
		if got := store.ParseSkill("x", store.Public, []byte(in)).Description; got != want {
			t.Errorf("ParseSkill(%q).Description = %q, want %q", in, got, want)
		}
		if err := store.ValidateFile("skills/x/SKILL.md", []byte(in)); err != nil {
			t.Errorf("ValidateFile(%q): %v", in, err)
		}
	}
	if w := store.LintFile("skills/x/SKILL.md", []byte("---\nname: x\ndescription: a: b\n---\n")); len(w) != 1 || !strings.Contains(w[0], "line 3") {
		t.Errorf("LintFile: %q", w)
	}
	err := store.ValidateFile("knowledge/k.md", []byte("---\nauthor: a\nauthor: b\n---\nbody\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("knowledge with a repeated key: %v", err)
	}
}

// TestKeyNormalisationAndReservedNames: NFD keys name the NFC entry; "stats" is no skill name.
func TestKeyNormalisationAndReservedNames(t *testing.T) {
	if k, err := store.NormalizeKey("cafe\u0301"); err != nil || k != "caf\u00e9" {
		t.Errorf("NormalizeKey = %q, %v", k, err)
	}
	if err := store.ValidKey("cafe\u0301"); err == nil {
		t.Error("ValidKey accepts a stored NFD name")
	}
	if _, err := store.ValidSkillName("stats"); !errors.Is(err, store.ErrReservedName) || !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "context://skills/stats") {
		t.Errorf("ValidSkillName(stats) = %v", err)
	}
	if err := store.ValidateFile("skills/stats/SKILL.md", []byte("---\nname: stats\ndescription: d\n---\n")); err == nil {
		t.Error("ctx commit of skills/stats accepted")
	}
	s, _ := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "cafe\u0301", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	v, _ := s.RefView(bg)
	if e, err := v.GetEntry(bg, store.KnowledgeKind, "caf\u00e9"); err != nil || e.Key != "caf\u00e9" {
		t.Errorf("stored under %q, %v", e.Key, err)
	}
}

// TestBatchNumbersNeverTakeAClaimedOne: two ADR folders numbered from 1, imported at once. An ADR whose
// number is taken gets a number beyond every number the batch's ADRs bring, so no later ADR of the same
// import loses its own number to it (the corpus: madr's 0001 became 23, then phodal's 0023 became 30).
func TestBatchNumbersNeverTakeAClaimedOne(t *testing.T) {
	s, _ := storetest.New(t)
	body := func(s string) *string { return &s }
	b := store.Batch{Decisions: []store.NewDecision{
		{Title: "A one", Source: "a/0001-one.md", Number: 1, Body: body("a1\n")},
		{Title: "A two", Source: "a/0002-two.md", Number: 2, Body: body("a2\n")},
		{Title: "B one", Source: "b/0001-one.md", Number: 1, Body: body("b1\n")},
		{Title: "B three", Source: "b/0003-three.md", Number: 3, Body: body("b3\n")},
		{Title: "No number", Source: "c/adr.md", Body: body("c\n")},
	}}
	res, err := s.ApplyReport(bg, store.Op{Name: "import", Summary: "x"}, b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, d := range res.Decisions {
		got[d.Source] = d.ID
	}
	want := map[string]int{"a/0001-one.md": 1, "a/0002-two.md": 2, "b/0003-three.md": 3, "b/0001-one.md": 4, "c/adr.md": 5}
	for src, id := range want {
		if got[src] != id {
			t.Errorf("%s: decision %d, want %d (all: %v)", src, got[src], id, got)
		}
	}
}

// TestSupersedeNoCycleAndLinksInStep: a decision cannot supersede one that replaces it, directly or down a
// chain; moving a decision to another replacement or another status takes it off the old replacement's
// supersedes list and drops its superseded_by.
func TestSupersedeNoCycleAndLinksInStep(t *testing.T) {
	s, _ := storetest.New(t)
	for _, title := range []string{"One", "Two", "Three", "Four"} {
		if _, _, err := s.AddDecision(bg, store.NewDecision{Title: title, Status: "accepted"}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(id int) store.Decision {
		t.Helper()
		v, err := s.RefView(bg)
		if err != nil {
			t.Fatal(err)
		}
		d, err := v.FindDecision(bg, strconv.Itoa(id))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	must := func(ref string, status string, by int) {
		t.Helper()
		if _, _, err := s.SetDecisionStatus(bg, ref, status, by); err != nil {
			t.Fatal(err)
		}
	}
	must("1", "superseded", 2)
	if _, _, err := s.SetDecisionStatus(bg, "2", "superseded", 1); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "already superseded by") {
		t.Errorf("2 superseded by 1 after 1 by 2: %v", err)
	}
	must("2", "superseded", 3)
	if _, _, err := s.SetDecisionStatus(bg, "3", "superseded", 1); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("3 superseded by 1 closes 1 → 2 → 3: %v", err)
	}
	if d := get(3); d.Status != "accepted" || d.SupersededBy != 0 {
		t.Errorf("a refused supersede changed 3: %+v", d)
	}
	// 1 moves from 2 to 4: 2 no longer lists it.
	must("1", "superseded", 4)
	if d2, d4 := get(2), get(4); slices.Contains(d2.Supersedes, 1) || !slices.Contains(d4.Supersedes, 1) || get(1).SupersededBy != 4 {
		t.Errorf("after moving 1 to 4: 2 supersedes %v, 4 supersedes %v", d2.Supersedes, d4.Supersedes)
	}
	// 1 accepted again: no superseded_by, 4 no longer lists it.
	must("1", "accepted", 0)
	if d1, d4 := get(1), get(4); d1.SupersededBy != 0 || slices.Contains(d4.Supersedes, 1) {
		t.Errorf("after accepting 1: %+v, 4 supersedes %v", d1, d4.Supersedes)
	}
	// Now 4 may be superseded by 1 (no cycle left).
	must("4", "superseded", 1)
}

// TestSetStatusSupersededByOnlyWithSuperseded: a replacement goes with status superseded only, and is a
// decision number (as the MCP tool's schema says); nothing is written otherwise.
func TestSetStatusSupersededByOnlyWithSuperseded(t *testing.T) {
	s, dir := storetest.New(t)
	for _, title := range []string{"A", "B"} {
		if _, _, err := s.AddDecision(bg, store.NewDecision{Title: title, Status: "accepted"}); err != nil {
			t.Fatal(err)
		}
	}
	n := storetest.Count(t, dir, "ctx")
	for _, c := range []struct {
		status string
		by     int
	}{{"accepted", 2}, {"proposed", -5}, {"superseded", -1}} {
		if _, _, err := s.SetDecisionStatus(bg, "1", c.status, c.by); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("set-status 1 %s --superseded-by %d: %v", c.status, c.by, err)
		}
	}
	if storetest.Count(t, dir, "ctx") != n {
		t.Error("a refused status change committed")
	}
}
