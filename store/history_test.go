package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

func TestHistoryEventsAndBlame(t *testing.T) {
	ctx := context.Background()
	a, dir := storetest.New(t)
	b := storetest.Open(t, dir, store.Actor{Agent: "codex", Session: "s2"})
	set := func(s *store.Store, key, content string, sc store.Scope) {
		t.Helper()
		if _, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: key, Content: content, Scope: sc}); err != nil {
			t.Fatal(err)
		}
	}
	set(a, "x", "one\ntwo\nthree\n", store.Public)
	set(b, "x", "one\n2\nthree\nfour", store.Public)
	set(a, "secret", "private fact\n", store.Private)
	if _, err := b.RemoveEntry(ctx, store.KnowledgeKind, "secret"); err != nil {
		t.Fatal(err)
	}

	tips, fp, err := a.HistoryTips(ctx)
	if err != nil || len(fp) != 24 {
		t.Fatalf("HistoryTips: %q %v", fp, err)
	}
	evs, err := a.History(ctx, tips)
	if err != nil {
		t.Fatal(err)
	}
	scopes := map[store.Scope]int{}
	for _, e := range evs {
		scopes[e.Scope]++
	}
	if scopes[store.Public] != 3 || scopes[store.Private] != 2 { // init + 2 sets; set + remove
		t.Fatalf("History scopes = %v", scopes)
	}
	var rm *store.HistoryEvent
	for i := range evs {
		if evs[i].Op == "knowledge.rm" {
			rm = &evs[i]
		}
	}
	if rm == nil || rm.Agent != "codex" || rm.Scope != store.Private {
		t.Fatalf("remove event = %+v", rm)
	}
	files, err := a.EventFiles(ctx, rm, true)
	if err != nil || len(files) != 1 || files[0].Path != "knowledge/secret.md" || files[0].Change != "deleted" ||
		!strings.Contains(files[0].Diff, "-private fact\n") {
		t.Fatalf("EventFiles = %+v, %v", files, err)
	}

	bl, err := a.BlameFile(ctx, tips, "knowledge/x.md")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]string{}
	for _, l := range bl.Lines {
		by[l.Text] = l.Agent
		if l.Commit == "" {
			t.Errorf("line %d not attributed", l.Line)
		}
	}
	if by["one"] != "test-agent" || by["2"] != "codex" || by["three"] != "test-agent" || by["four"] != "codex" {
		t.Errorf("blame = %+v", bl)
	}
	if _, err := a.BlameFile(ctx, tips, "knowledge/none.md"); err == nil {
		t.Error("blame of a missing file: no error")
	}
}

// TestBlameFilePastOldCap blames a store file whose lines were written 2,500 and more commits before the
// tip (the walk used to stop after 2,000 commits and leave them unattributed): every line is attributed to
// the commit that wrote it. The history is made by git fast-import on top of the store's public ref.
func TestBlameFilePastOldCap(t *testing.T) {
	ctx := context.Background()
	a, dir := storetest.New(t)
	if _, err := a.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "seed", Content: "seed\n", Scope: store.Public}); err != nil {
		t.Fatal(err)
	}
	ref := a.RefOf(store.Public)
	var in strings.Builder
	n := 0
	commit := func(agent, path, content string) {
		n++
		msg := fmt.Sprintf("commit %d\n\nCtx-Op: knowledge.set\nCtx-Agent: %s\n", n, agent)
		fmt.Fprintf(&in, "commit %s\ncommitter T <t@example.com> %d +0000\ndata %d\n%s", ref, 1700000000+n, len(msg), msg)
		if n == 1 {
			fmt.Fprintf(&in, "from %s^0\n", ref)
		}
		fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
	}
	commit("oldest", "knowledge/deep.md", "alpha\nbeta\n")
	commit("second", "knowledge/deep.md", "alpha\nbeta\ngamma\n")
	for i := range 2500 {
		commit("churn", "knowledge/churn.md", fmt.Sprintf("churn %d\n", i))
	}
	commit("newest", "knowledge/deep.md", "alpha\nBETA\ngamma\n")
	for i := range 10 {
		commit("churn", "knowledge/churn.md", fmt.Sprintf("late %d\n", i))
	}
	testenv.GitIn(t, dir, in.String(), "fast-import", "--quiet")

	tips, _, err := a.HistoryTips(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bl, err := a.BlameFile(ctx, tips, "knowledge/deep.md")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range bl.Lines {
		got[l.Text] = l.Agent
	}
	want := map[string]string{"alpha": "oldest", "BETA": "newest", "gamma": "second"}
	for text, agent := range want {
		if got[text] != agent {
			t.Errorf("line %q = %q, want %q", text, got[text], agent)
		}
	}
	if bl.CommitsWalked < 2510 {
		t.Errorf("commits walked = %d, want past the old cap of 2,000", bl.CommitsWalked)
	}
}
