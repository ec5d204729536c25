package store_test

import (
	"context"
	"strings"
	"testing"

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

	bl, err := a.BlameFile(ctx, tips, "knowledge/x.md", 2000)
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
	if by["one"] != "test-agent" || by["2"] != "codex" || by["three"] != "test-agent" || by["four"] != "codex" || bl.LimitReached {
		t.Errorf("blame = %+v", bl)
	}
	bl, err = a.BlameFile(ctx, tips, "knowledge/x.md", 1)
	if err != nil || !bl.LimitReached || bl.CommitsWalked != 1 {
		t.Fatalf("blame with a 1-commit walk = %+v, %v", bl, err)
	}
	for _, l := range bl.Lines {
		older := l.Text == "one" || l.Text == "three" // written before the last commit: not reached
		newer := l.Text == "2" || l.Text == "four"
		if (older && l.Commit != "") || (newer && l.Commit == "") {
			t.Errorf("1-commit blame line %q = %q", l.Text, l.Commit)
		}
	}
	if _, err := a.BlameFile(ctx, tips, "knowledge/none.md", 10); err == nil {
		t.Error("blame of a missing file: no error")
	}
}
