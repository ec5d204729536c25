package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestDecisionNumberAfterTheLargest: with a decision numbered MaxDecisionID, a new decision (ctx decision
// add, an import batch) gets the lowest free number instead of "no decision number left"; otherwise one
// more than the largest (docs/format.md "Decisions").
func TestDecisionNumberAfterTheLargest(t *testing.T) {
	ctx := context.Background()
	s, _ := storetest.New(t)
	for _, n := range []int{1, 2, 4, store.MaxDecisionID} {
		d, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Taken", Number: n})
		if err != nil || d.ID != n {
			t.Fatalf("add decision %d: %+v, %v", n, d, err)
		}
	}
	d, _, err := s.AddDecision(ctx, store.NewDecision{Title: "Next"})
	if err != nil || d.ID != 3 {
		t.Fatalf("a decision after %d: %+v, %v; want number 3", store.MaxDecisionID, d, err)
	}
	_, ds, err := s.Apply(ctx, store.Op{Name: "import"}, store.Batch{Decisions: []store.NewDecision{
		{Title: "Imported one", Source: "docs/adr/x.md"}, {Title: "Imported two", Source: "docs/adr/y.md"}}})
	if err != nil || len(ds) != 2 || ds[0].ID != 5 || ds[1].ID != 6 {
		t.Fatalf("an import after %d: %+v, %v; want numbers 5 and 6", store.MaxDecisionID, ds, err)
	}

	s2, _ := storetest.New(t)
	if _, _, err := s2.AddDecision(ctx, store.NewDecision{Title: "Seven", Number: 7}); err != nil {
		t.Fatal(err)
	}
	if d, _, err := s2.AddDecision(ctx, store.NewDecision{Title: "Eight"}); err != nil || d.ID != 8 {
		t.Fatalf("a decision after 7: %+v, %v; want number 8", d, err)
	}
}

// TestDecisionKeyIsItsNumber: a write to a decision named by its title (ctx decision set-status TITLE,
// ctx decision scope TITLE) records the decision's number as its Ctx-Key, as decision.add does: the title
// goes stale when the decision is renamed (an ADR retitled and imported again), the number does not
// (docs/architecture.md "Commits").
func TestDecisionKeyIsItsNumber(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	for _, title := range []string{"Use Go", "Use Postgres"} {
		if _, _, err := s.AddDecision(ctx, store.NewDecision{Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.SetDecisionStatus(ctx, "Use Postgres", "accepted", 0); err != nil {
		t.Fatal(err)
	}
	msg := storetest.LastMessage(t, dir, "refs/heads/ctx")
	if !strings.Contains(msg, "Ctx-Op: decision.status\n") || !strings.Contains(msg, "\nCtx-Key: 2\n") {
		t.Errorf("set-status by title: the commit's message is\n%s\nwant Ctx-Key: 2", msg)
	}
	if _, err := s.SetScope(ctx, "decision", "Use Postgres", store.Private); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"refs/heads/ctx", store.RefPrivate} {
		if msg := storetest.LastMessage(t, dir, ref); !strings.Contains(msg, "\nCtx-Key: 2\n") || strings.Contains(msg, "Ctx-Key: Use") {
			t.Errorf("scope by title: the commit of %s is\n%s\nwant Ctx-Key: 2", ref, msg)
		}
	}
}

// TestRenumberedDecisionsInMergeCommit: a decision renumbered by a merge (both sides added decision 1)
// keeps its old number in the Ctx-Key of the commit that added it; the merge commit records the mapping
// in its Ctx-Renumbered trailer and the file's old path in Ctx-Renamed, and Log reads both back. Its
// message lists the merge's conflicts and notes in a body before the trailers, as git's own merge commits
// list "Conflicts:", which git itself reads back (git log, git interpret-trailers).
func TestRenumberedDecisionsInMergeCommit(t *testing.T) {
	ctx := context.Background()
	sa, sb, a, _ := pair(t)
	mustSet(t, sa, "k", "base")
	if _, err := sa.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Pull(ctx, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sa.AddDecision(ctx, store.NewDecision{Title: "A's decision"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.AddDecision(ctx, store.NewDecision{Title: "B's decision"}); err != nil {
		t.Fatal(err)
	}
	// Each side's session names its decision by the number it had on that side; the merge rewrites the
	// renumbered one's (docs/merge.md "Decisions numbered twice").
	for who, s := range map[string]*store.Store{"A": sa, "B": sb} {
		if _, _, err := s.StartSession(ctx, store.SessionUpdate{ID: "sess-" + strings.ToLower(who), Agent: "a", Summary: who,
			DecisionsAdded: []string{"1"}}); err != nil {
			t.Fatal(err)
		}
	}
	mustSet(t, sa, "k", "A's version")
	mustSet(t, sb, "k", "B's version")
	if _, err := sb.Push(ctx, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := sa.Pull(ctx, store.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 {
		t.Fatalf("the merge's conflicts: %+v, want one on knowledge/k.md", res.Conflicts)
	}
	files := storetest.Files(t, a, "ctx")
	var moved string // the renumbered decision's new path
	for p := range files {
		if strings.HasPrefix(p, "decisions/0002-") {
			moved = p
		}
	}
	if moved == "" {
		t.Fatalf("no decision 2 after the merge: %v", files)
	}
	old := "decisions/0001-" + strings.TrimPrefix(moved, "decisions/0002-")
	msg := storetest.LastMessage(t, a, "refs/heads/ctx")
	if !strings.Contains(msg, "Ctx-Op: merge\n") || !strings.Contains(msg+"\n", "\nCtx-Renumbered: 1 -> 2\n") {
		t.Fatalf("the merge commit's message:\n%s\nwant Ctx-Renumbered: 1 -> 2", msg)
	}
	// The body, as `git log` shows it: the conflict with its id (for ctx resolve), the renumbering.
	for _, want := range []string{"\n\nConflicts:\n\tknowledge/k.md (body; conflict " + res.Conflicts[0].ID + ")\n",
		"\nNotes:\n", "decision 1 was added on both sides: " + old + " renumbered to 2 (" + moved + ")"} {
		if !strings.Contains(msg, want) {
			t.Errorf("git log of the merge commit lacks %q:\n%s", want, msg)
		}
	}
	// git reads the trailers after the body: the body is a paragraph of its own.
	trailers := storetest.GitRef(t, a, "refs/heads/ctx", "log", "-1", "--format=%(trailers:key=Ctx-Renamed,valueonly)%(trailers:key=Ctx-Conflicts)", "refs/heads/ctx")
	if want := old + " -> " + moved + "\nCtx-Conflicts: 1"; strings.TrimSpace(trailers) != want {
		t.Errorf("git's trailers of the merge commit: %q, want %q", trailers, want)
	}
	v, err := sa.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"A", "B"} {
		ss, err := v.GetSession(ctx, "sess-"+strings.ToLower(who))
		if err != nil || len(ss.DecisionsAdded) != 1 {
			t.Fatalf("session of %s: %+v, %v", who, ss, err)
		}
		d, err := v.FindDecision(ctx, ss.DecisionsAdded[0])
		if err != nil || d.Title != who+"'s decision" {
			t.Errorf("session of %s names decision %s: %+v, %v; want %s's decision", who, ss.DecisionsAdded[0], d, err, who)
		}
	}
	log, err := sa.Log(ctx, 1, "")
	if err != nil || len(log) != 1 || log[0].Renumbered != "1 -> 2" || len(log[0].Renamed) != 1 || log[0].Renamed[0] != old+" -> "+moved {
		t.Errorf("Log: %+v, %v; want the merge with Renumbered 1 -> 2 and Renamed %s -> %s", log, err, old, moved)
	}
}

// TestPublicOnlyDecisionNumbers: a public-only caller (an MCP request over HTTP) that records a decision or
// imports a batch gets numbers none of this machine's private or ephemeral decisions hold, which it cannot
// see (docs/mcp.md "context_record_decision over HTTP"); it sees only the numbers it got.
func TestPublicOnlyDecisionNumbers(t *testing.T) {
	ctx := context.Background()
	s, _ := storetest.New(t)
	for _, sc := range []store.Scope{store.Public, store.Private, store.Ephemeral} {
		if _, _, err := s.AddDecision(ctx, store.NewDecision{Title: "In " + string(sc), Scope: sc}); err != nil {
			t.Fatal(err)
		}
	}
	pub := store.WithPublicOnly(ctx)
	d, _, err := s.AddDecision(pub, store.NewDecision{Title: "Over HTTP"})
	if err != nil || d.ID != 4 {
		t.Fatalf("a public-only decision after public 1, private 2, ephemeral 3: %+v, %v; want number 4", d, err)
	}
	_, ds, err := s.Apply(pub, store.Op{Name: "import"}, store.Batch{Decisions: []store.NewDecision{
		{Title: "Imported", Source: "docs/adr/0002-imported.md", Number: 2}}})
	if err != nil || len(ds) != 1 || ds[0].ID != 5 {
		t.Fatalf("a public-only import of ADR 2 (2 is private): %+v, %v; want number 5", ds, err)
	}
}

// TestDecisionFieldsReadBack: a decision written from its three fields reads them back as given; a field
// holding a line that the body's reader takes as a heading (a "## Decision" inside the context, which was
// then served as the decision; a "### Decision Outcome:"; a level-2 heading that would cut the field short)
// is refused with an error naming the field and the line, and nothing is written (docs/format.md
// "Decisions"). Headings the reader leaves inside the field (level 3 or deeper, other titles) are kept, and
// so are lines in a fenced code block ("# install the tools first" in a ```sh block was refused before);
// a fence left open is refused.
func TestDecisionFieldsReadBack(t *testing.T) {
	ctx := context.Background()
	s, _ := storetest.New(t)
	for _, tc := range []struct {
		in    store.NewDecision
		field string
	}{
		{store.NewDecision{Title: "Inj", Context: "ctx text\n\n## Decision\n\nFAKE decision\n\n## Consequences\n\nFAKE cons",
			Decision: "REAL decision", Consequences: "REAL cons"}, "context"},
		{store.NewDecision{Title: "Inj2", Context: "We need a DB.\n\n### Decision Outcome:\nnothing decided yet",
			Decision: "Use SQLite", Consequences: "Small ops"}, "context"},
		{store.NewDecision{Title: "Inj3", Context: "c", Decision: "d\n## Notes\nmore", Consequences: "q"}, "decision"},
		{store.NewDecision{Title: "Inj4", Context: "c", Decision: "d", Consequences: "q\r\n# 2. Context\r\nx"}, "consequences"},
		// A heading after a fence of the field closed by a shorter or other fence is outside any block.
		{store.NewDecision{Title: "Inj5", Context: "c\n````sh\nls\n```\n````\n## Decision\nFAKE", Decision: "d", Consequences: "q"}, "context"},
		// A fence left open hides the sections after it.
		{store.NewDecision{Title: "Inj6", Context: "c\n~~~\n# a comment", Decision: "d", Consequences: "q"}, "context"},
	} {
		_, _, err := s.AddDecision(ctx, tc.in)
		if !errors.Is(err, store.ErrInvalid) || !strings.HasPrefix(err.Error(), tc.field+": ") {
			t.Errorf("%s: %v; want an invalid-input error naming the field %s", tc.in.Title, err, tc.field)
		}
		_, _, err = s.Apply(ctx, store.Op{Name: "import"}, store.Batch{Decisions: []store.NewDecision{tc.in}})
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s in a batch: %v; want an invalid-input error", tc.in.Title, err)
		}
	}
	v, err := s.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ds, err := v.ListDecisions(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("refused writes left decisions: %+v, %v", ds, err)
	}
	for _, in := range []store.NewDecision{
		{Title: "Kept", Context: "We need a DB.\n\n### Options\n\n- SQLite\n- Postgres",
			Decision: "Use SQLite", Consequences: "Small ops\n\n#### Risks\n\nnone"},
		// Lines in a fenced code block are not headings: a shell comment, a markdown example of a body.
		{Title: "Fenced", Context: "Set up first:\n\n```sh\n# install the tools first\nmake tools\n```",
			Decision:     "Use a template:\n\n  ~~~~markdown\n## Decision\n\nWhat we chose.\n~~~\n## Consequences\n  ~~~~",
			Consequences: "q"},
	} {
		if _, _, err := s.AddDecision(ctx, in); err != nil {
			t.Fatalf("%s: %v", in.Title, err)
		}
		if v, err = s.RefView(ctx); err != nil {
			t.Fatal(err)
		}
		d, err := v.FindDecision(ctx, in.Title)
		if err != nil || d.Context != in.Context || d.Decision != in.Decision || d.Consequences != in.Consequences {
			t.Fatalf("read back: %+v, %v; want the fields as written", d, err)
		}
	}
}
