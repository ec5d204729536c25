package store_test

import (
	"errors"
	"github.com/ctx-dev/ctx/merge"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

func TestSessions(t *testing.T) {
	f := newFixture(t)
	var ss store.SessionSummary
	f.commits("ctx", 1, func() {
		ss = must[store.SessionSummary](t)(f.s.AppendSession(f.ctx, store.SessionUpdate{Summary: "set up db",
			KnowledgeAdded: []string{"tech-stack"}}))
	})
	f.trailers("ctx", "session.append", ss.ID)
	if len(ss.ID) != 36 || ss.Ended != nil || ss.User != testenv.Name || ss.Machine != "laptop" || ss.Agent != "test-agent" {
		t.Fatalf("new session: %+v", ss)
	}
	raw := storetest.Show(t, f.dir, "ctx", merge.SessionPath(ss.ID, ss.Started, true))
	for _, w := range []string{`"ended": null`, `"decisions_added": []`, `"skills_used": []`, `"knowledge_added": [`} {
		if !strings.Contains(raw, w) {
			t.Fatalf("history file lacks %s:\n%s", w, raw)
		}
	}
	// Appending: lists without duplicates.
	f.commits("ctx", 1, func() {
		must[store.SessionSummary](t)(f.s.AppendSession(f.ctx, store.SessionUpdate{ID: ss.ID,
			KnowledgeAdded: []string{"tech-stack", "db-schema"}, DecisionsAdded: []string{"3"}}))
	})
	// Nothing new: no commit.
	f.commits("ctx", 0, func() {
		must[store.SessionSummary](t)(f.s.AppendSession(f.ctx, store.SessionUpdate{ID: ss.ID, KnowledgeAdded: []string{"db-schema"}}))
	})
	got, err := f.view().GetSession(f.ctx, ss.ID)
	if err != nil || !reflect.DeepEqual(got.KnowledgeAdded, []string{"tech-stack", "db-schema"}) || !reflect.DeepEqual(got.DecisionsAdded, []string{"3"}) {
		t.Fatalf("get: %+v %v", got, err)
	}
	// Start refuses an existing id; validation writes nothing.
	f.commits("ctx", 0, func() {
		if _, _, err := f.s.StartSession(f.ctx, store.SessionUpdate{ID: ss.ID}); err == nil {
			t.Fatal("StartSession over an existing session")
		}
		if _, _, err := f.s.AppendSession(f.ctx, store.SessionUpdate{ID: "../x"}); !errors.Is(err, store.ErrInvalidKey) {
			t.Fatalf("bad id: %v", err)
		}
	})
	f.commits("ctx", 1, func() {
		must[store.SessionSummary](t)(f.s.StartSession(f.ctx, store.SessionUpdate{ID: "zzz-second"}))
	})
	// End.
	f.commits("ctx", 1, func() {
		ended := must[store.SessionSummary](t)(f.s.EndSession(f.ctx, ss.ID, "done"))
		if ended.Ended == nil || ended.Summary != "done" {
			t.Fatalf("ended: %+v", ended)
		}
	})
	f.trailers("ctx", "session.end", ss.ID)
	f.commits("ctx", 0, func() {
		must[store.SessionSummary](t)(f.s.EndSession(f.ctx, ss.ID, ""))
		var nf *store.NotFoundError
		if _, _, err := f.s.EndSession(f.ctx, "nope", ""); !errors.As(err, &nf) || err.Error() != "Session 'nope' not found" {
			t.Fatalf("missing: %v", err)
		}
	})
	list, err := f.view().ListSessions(f.ctx)
	if err != nil || len(list) != 2 || list[0].ID != ss.ID || list[1].ID != "zzz-second" {
		t.Fatalf("list: %+v %v", list, err)
	}
}

func TestListSessionsOrderedByStarted(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "history/a.json", []byte(`{"id":"a","started":"2025-05-10T14:00:00Z","ended":null}`))
		ed.Put(store.Public, "history/b.json", []byte(`{"id":"b","started":"2025-05-09T14:00:00Z","ended":null}`))
		ed.Put(store.Private, "history/c.json", []byte(`{"id":"c","started":"2025-05-11T14:00:00Z","ended":null}`))
		return ed, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.view().ListSessions(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "b,a,c" || list[2].Scope != store.Private {
		t.Fatalf("order: %v", ids)
	}
}
