package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// fixture is a store on a real repository, with the user's side snapshotted after init.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	s    *store.Store
	dir  string
	snap testenv.Snapshot
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s, dir := storetest.New(t)
	return &fixture{t: t, ctx: context.Background(), s: s, dir: dir, snap: testenv.Take(t, dir)}
}

func (f *fixture) view() *store.View {
	f.t.Helper()
	v, err := f.s.RefView(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) count(ref string) int { return storetest.Count(f.t, f.dir, ref) }

// commits runs fn and checks that it made n commits on ref and left the user's repository alone.
func (f *fixture) commits(ref string, n int, fn func()) {
	f.t.Helper()
	before := f.count(ref)
	fn()
	if got := f.count(ref) - before; got != n {
		f.t.Fatalf("%s: %d commits, want %d", ref, got, n)
	}
	f.snap.Same(f.t, f.dir)
}

// trailers checks the last commit message of ref has op and key and the actor's trailers.
func (f *fixture) trailers(ref, op, key string) {
	f.t.Helper()
	msg := storetest.LastMessage(f.t, f.dir, ref)
	want := []string{"ctx: ", "Ctx-Op: " + op, "Ctx-Agent: " + f.s.Actor.Agent, "Ctx-Machine: " + f.s.Actor.Machine, "Ctx-Session: " + f.s.Actor.Session}
	if key != "" {
		want = append(want, "Ctx-Key: "+key)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			f.t.Fatalf("commit message lacks %q:\n%s", w, msg)
		}
	}
}

func must[T any](t *testing.T) func(T, *store.Committed, error) T {
	return func(x T, _ *store.Committed, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
}

func ptr[T any](x T) *T { return &x }

func TestState(t *testing.T) {
	f := newFixture(t)
	st, err := f.view().GetState(f.ctx)
	if err != nil || st.CurrentTask != "" || st.Blockers == nil || st.Progress == nil {
		t.Fatalf("empty state: %+v %v", st, err)
	}
	f.commits("ctx", 1, func() {
		must[store.ActiveState](t)(f.s.UpdateState(f.ctx, store.StatePatch{CurrentTask: ptr("auth middleware"),
			Blockers: &[]string{"Waiting for API spec"}, Progress: &map[string]string{"auth": "50%"}}))
	})
	f.trailers("ctx", "state.update", "")
	raw := storetest.Show(t, f.dir, "ctx", "state.json")
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"current_task", "blockers", "progress", "last_agent", "last_machine", "updated_at"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("state.json lacks %s: %s", k, raw)
		}
	}
	if m["last_agent"] != "test-agent" || m["last_machine"] != "laptop" {
		t.Fatalf("last_agent/last_machine: %s", raw)
	}

	// Same values: no commit.
	f.commits("ctx", 0, func() {
		must[store.ActiveState](t)(f.s.UpdateState(f.ctx, store.StatePatch{CurrentTask: ptr("auth middleware")}))
	})
	// An omitted field is left alone; an empty list clears.
	f.commits("ctx", 1, func() {
		must[store.ActiveState](t)(f.s.UpdateState(f.ctx, store.StatePatch{Blockers: &[]string{}}))
	})
	st, _ = f.view().GetState(f.ctx)
	if st.CurrentTask != "auth middleware" || len(st.Blockers) != 0 || !reflect.DeepEqual(st.Progress, map[string]string{"auth": "50%"}) {
		t.Fatalf("after patch: %+v", st)
	}
	if !strings.Contains(storetest.Show(t, f.dir, "ctx", "state.json"), `"blockers": []`) {
		t.Fatal("cleared blockers not written as []")
	}
	// Validation: nothing written.
	f.commits("ctx", 0, func() {
		if _, _, err := f.s.UpdateState(f.ctx, store.StatePatch{Blockers: &[]string{" "}}); err == nil {
			t.Fatal("blank blocker accepted")
		}
	})
}

func TestStateKeepsUnknownFields(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "state.json", []byte(`{"current_task": "x", "extra": {"a": 1}}`+"\n"))
		return ed, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	must[store.ActiveState](t)(f.s.UpdateState(f.ctx, store.StatePatch{CurrentTask: ptr("y")}))
	raw := storetest.Show(t, f.dir, "ctx", "state.json")
	if !strings.Contains(raw, `"extra": {`) || !strings.Contains(raw, `"current_task": "y"`) {
		t.Fatalf("unknown field lost: %s", raw)
	}
}

func TestClearState(t *testing.T) {
	f := newFixture(t)
	must[store.ActiveState](t)(f.s.UpdateState(f.ctx, store.StatePatch{CurrentTask: ptr("t"), Blockers: &[]string{"b"}}))
	must[store.Entry](t)(func() (store.Entry, *store.Committed, error) {
		c, err := f.s.SetEntry(f.ctx, store.KnowledgeKind, store.SetEntry{Key: "scratch", Content: "tmp\n", Scope: store.Ephemeral})
		return store.Entry{}, c, err
	}())
	must[store.Entry](t)(func() (store.Entry, *store.Committed, error) {
		c, err := f.s.SetEntry(f.ctx, store.KnowledgeKind, store.SetEntry{Key: "notes", Content: "n\n", Scope: store.Ephemeral})
		return store.Entry{}, c, err
	}())
	if n := len(storetest.Files(t, f.dir, store.RefEphemeral)); n != 2 {
		t.Fatalf("ephemeral has %d files", n)
	}
	eph := f.count(store.RefEphemeral)
	f.commits("ctx", 1, func() {
		if _, err := f.s.ClearState(f.ctx); err != nil {
			t.Fatal(err)
		}
	})
	if got := f.count(store.RefEphemeral) - eph; got != 1 {
		t.Fatalf("ephemeral: %d commits, want 1", got)
	}
	if n := len(storetest.Files(t, f.dir, store.RefEphemeral)); n != 0 {
		t.Fatalf("ephemeral still has %d files", n)
	}
	st, _ := f.view().GetState(f.ctx)
	if st.CurrentTask != "" || len(st.Blockers) != 0 {
		t.Fatalf("state not cleared: %+v", st)
	}
	// Already clear: nothing to commit anywhere.
	f.commits("ctx", 0, func() {
		if _, err := f.s.ClearState(f.ctx); err != nil {
			t.Fatal(err)
		}
	})
	if got := f.count(store.RefEphemeral) - eph; got != 1 {
		t.Fatalf("ephemeral: %d commits after second clear", got)
	}
	var nf *store.NotFoundError
	if _, err := f.view().GetEntry(f.ctx, store.KnowledgeKind, "scratch"); !errors.As(err, &nf) {
		t.Fatalf("ephemeral entry survived: %v", err)
	}
}
