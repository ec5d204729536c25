package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

func TestCheckInOut(t *testing.T) {
	f := newFixture(t)
	path := "activity/ada-lovelace/test-agent--laptop.json"
	f.commits("ctx", 1, func() {
		e := must[store.ActivityEntry](t)(f.s.CheckIn(f.ctx, store.CheckIn{Task: "Fixing DRC violations", IssueRef: "#42",
			Branch: ptr("fix/drc"), Files: []string{"drc.go"}, TaskID: ptr("T-42")}))
		if e.Member != "ada-lovelace" || e.Status != "active" || e.Availability != "working" || *e.Branch != "fix/drc" {
			t.Fatalf("entry: %+v", e)
		}
	})
	f.trailers("ctx", "activity.checkin", "ada-lovelace/test-agent--laptop")
	raw := storetest.Show(t, f.dir, "ctx", path)
	for _, w := range []string{`"member": "ada-lovelace"`, `"issue_ref": "#42"`, `"status": "active"`, `"last_decision": null`, `"task_id": "T-42"`, `"files": [`} {
		if !strings.Contains(raw, w) {
			t.Fatalf("%s lacks %s:\n%s", path, w, raw)
		}
	}
	// Unchanged check-in of a fresh entry: no commit.
	f.commits("ctx", 0, func() {
		must[store.ActivityEntry](t)(f.s.CheckIn(f.ctx, store.CheckIn{Task: "Fixing DRC violations", IssueRef: "#42"}))
	})
	f.commits("ctx", 1, func() { must[store.ActivityEntry](t)(f.s.CheckOut(f.ctx)) })
	f.trailers("ctx", "activity.checkout", "ada-lovelace/test-agent--laptop")
	f.commits("ctx", 0, func() { must[store.ActivityEntry](t)(f.s.CheckOut(f.ctx)) })
	list, err := f.view().ListActivity(f.ctx)
	if err != nil || len(list) != 1 || list[0].Status != "checked_out" || list[0].Availability != "offline" || list[0].Stale || list[0].Task != "Fixing DRC violations" {
		t.Fatalf("list: %+v %v", list, err)
	}
}

func TestCheckOutMissing(t *testing.T) {
	f := newFixture(t)
	var nf *store.NotFoundError
	f.commits("ctx", 0, func() {
		if _, _, err := f.s.CheckOut(f.ctx); !errors.As(err, &nf) {
			t.Fatalf("check out without check in: %v", err)
		}
	})
}

func TestActivityValidation(t *testing.T) {
	f := newFixture(t)
	long := func(n int) string { return strings.Repeat("é", n) }
	many := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	cases := []struct {
		field string
		in    store.CheckIn
	}{
		{"availability", store.CheckIn{Availability: "busy"}},
		{"doing", store.CheckIn{Doing: long(201)}},
		{"task_id", store.CheckIn{TaskID: ptr("has space")}},
		{"task_id", store.CheckIn{TaskID: ptr(strings.Repeat("a", 65))}},
		{"branch", store.CheckIn{Branch: ptr(long(201))}},
		{"files", store.CheckIn{Files: many(51, "a")}},
		{"files[0]", store.CheckIn{Files: []string{long(301)}}},
		// The error names the field, not the whole task before it.
		{"files[0]", store.CheckIn{Task: "TASK" + long(3000), Files: []string{long(604)}}},
		{"last_decision", store.CheckIn{LastDecision: ptr(long(501))}},
		{"run_failure.class", store.CheckIn{RunFailure: &store.RunFailure{Class: "oops", Step: "cli_crashed"}}},
		{"run_failure.step", store.CheckIn{RunFailure: &store.RunFailure{Class: "runtime", Step: "oops"}}},
		{"intent.kind", store.CheckIn{Intent: &store.Intent{Kind: "destroy", ExpiresAt: "2026-01-01T00:00:00Z"}}},
		{"intent.paths", store.CheckIn{Intent: &store.Intent{Kind: "add", Paths: many(21, "a"), ExpiresAt: "2026-01-01T00:00:00Z"}}},
		{"intent.paths[0]", store.CheckIn{Intent: &store.Intent{Kind: "add", Paths: []string{""}, ExpiresAt: "2026-01-01T00:00:00Z"}}},
		{"intent.areas", store.CheckIn{Intent: &store.Intent{Kind: "add", Areas: many(11, "a"), ExpiresAt: "2026-01-01T00:00:00Z"}}},
		{"intent.areas[0]", store.CheckIn{Intent: &store.Intent{Kind: "add", Areas: []string{long(41)}, ExpiresAt: "2026-01-01T00:00:00Z"}}},
		{"intent.expires_at", store.CheckIn{Intent: &store.Intent{Kind: "add", ExpiresAt: "2025-02-29T00:00:00Z"}}},
		{"intent.expires_at", store.CheckIn{Intent: &store.Intent{Kind: "add", ExpiresAt: "tomorrow"}}},
	}
	f.commits("ctx", 0, func() {
		for _, c := range cases {
			_, _, err := f.s.CheckIn(f.ctx, c.in)
			if err == nil || !strings.Contains(err.Error(), c.field+" ") || strings.Contains(err.Error(), "TASK") {
				t.Errorf("%s: %.300v", c.field, err)
			}
		}
		if _, _, err := f.s.SetIntent(f.ctx, store.Intent{Kind: "add", ExpiresAt: "2024-13-01T00:00:00Z"}); err == nil {
			t.Error("bad expires_at accepted by SetIntent")
		}
	})
	// At the limits: accepted.
	f.commits("ctx", 1, func() {
		must[store.ActivityEntry](t)(f.s.CheckIn(f.ctx, store.CheckIn{Doing: long(200), TaskID: ptr(strings.Repeat("a", 64)),
			Files: many(50, long(300)), LastDecision: ptr(long(500)), RunFailure: &store.RunFailure{Class: "timeout", Step: "task_time_limit"}}))
	})
	f.commits("ctx", 1, func() {
		e := must[store.ActivityEntry](t)(f.s.SetIntent(f.ctx, store.Intent{Kind: "change", Paths: many(20, long(300)), Areas: many(10, long(40)), ExpiresAt: "2024-02-29T10:00:00.5+02:00"}))
		if e.Intent == nil || e.Intent.Kind != "change" || e.RunFailure == nil {
			t.Fatalf("intent: %+v", e)
		}
	})
	f.trailers("ctx", "activity.intent", "ada-lovelace/test-agent--laptop")
	raw := storetest.Show(t, f.dir, "ctx", "activity/ada-lovelace/test-agent--laptop.json")
	if !strings.Contains(raw, `"intent": {`) || !strings.Contains(raw, `"run_failure": {`) {
		t.Fatalf("pulse fields:\n%s", raw)
	}
}

func TestTwoAgentsTwoMachines(t *testing.T) {
	dir := storetest.Repo(t)
	ctx := context.Background()
	a := storetest.Open(t, dir, store.Actor{Agent: "claude-code", Machine: "laptop"})
	b := storetest.Open(t, dir, store.Actor{Agent: "cursor", Machine: "desktop"})
	must[store.ActivityEntry](t)(a.CheckIn(ctx, store.CheckIn{Task: "one"}))
	must[store.ActivityEntry](t)(b.CheckIn(ctx, store.CheckIn{Task: "two"}))
	must[store.ActivityEntry](t)(a.CheckOut(ctx))
	files := storetest.Files(t, dir, "ctx")
	for _, p := range []string{"activity/ada-lovelace/claude-code--laptop.json", "activity/ada-lovelace/cursor--desktop.json"} {
		if !files[p] {
			t.Fatalf("missing %s in %v", p, files)
		}
	}
	v, _ := a.RefView(ctx)
	list, err := v.ListActivity(ctx)
	if err != nil || len(list) != 2 || list[0].Status != "checked_out" || list[1].Status != "active" || list[1].Task != "two" {
		t.Fatalf("list: %+v %v", list, err)
	}
	// An explicit member.
	must[store.ActivityEntry](t)(b.CheckIn(ctx, store.CheckIn{Member: "grace", Task: "three"}))
	if !storetest.Files(t, dir, "ctx")["activity/grace/cursor--desktop.json"] {
		t.Fatal("explicit member not used")
	}
	if _, _, err := b.CheckIn(ctx, store.CheckIn{Member: "Grace Hopper"}); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("bad member: %v", err)
	}
}

func TestActivityStale(t *testing.T) {
	f := newFixture(t)
	old := time.Now().UTC().Add(-store.StaleAfter - time.Minute).Format(time.RFC3339)
	recent := time.Now().UTC().Add(-store.StaleAfter + time.Minute).Format(time.RFC3339)
	_, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "activity/bob/claude-code--pc.json", []byte(`{"member":"bob","agent":"claude-code","machine":"pc","status":"active","updated_at":"`+old+`"}`))
		ed.Put(store.Public, "activity/carol/claude-code--pc.json", []byte(`{"member":"carol","agent":"claude-code","machine":"pc","status":"active","updated_at":"`+recent+`"}`))
		return ed, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.view().ListActivity(f.ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if !list[0].Stale || list[0].Member != "bob" || list[1].Stale {
		t.Fatalf("stale flags: %+v", list)
	}
	if list[0].Files == nil {
		t.Fatal("files must list as []")
	}
	now := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	if store.IsStale("2026-01-01T00:00:00Z", now) || !store.IsStale("2025-12-31T23:59:59Z", now) || !store.IsStale("garbage", now) {
		t.Fatal("IsStale at 48h")
	}
}

func TestMemberKey(t *testing.T) {
	for in, want := range map[string]string{"Ada Lovelace": "ada-lovelace", "  J.R. Doe_3 ": "j-r-doe-3", "Zoë": "zo", "": ""} {
		if got := store.MemberKey(in); got != want {
			t.Errorf("MemberKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckInRenewsOldEntry(t *testing.T) {
	f := newFixture(t)
	old := time.Now().UTC().Add(-2 * store.ActivityRefresh).Format(time.RFC3339)
	_, err := f.s.Write(f.ctx, store.Op{Name: "test", Summary: "seed"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, "activity/ada-lovelace/test-agent--laptop.json", []byte(`{"member":"ada-lovelace","agent":"test-agent",`+
			`"machine":"laptop","task":"t","issue_ref":"","status":"active","updated_at":"`+old+`","availability":"working","doing":"",`+
			`"task_id":null,"branch":null,"files":[],"last_decision":null,"x-custom":1}`))
		return ed, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Same content, but older than ActivityRefresh: the check-in renews updated_at.
	f.commits("ctx", 1, func() { must[store.ActivityEntry](t)(f.s.CheckIn(f.ctx, store.CheckIn{Task: "t"})) })
	raw := storetest.Show(t, f.dir, "ctx", "activity/ada-lovelace/test-agent--laptop.json")
	if strings.Contains(raw, old) || !strings.Contains(raw, `"x-custom": 1`) {
		t.Fatalf("not renewed or unknown field lost:\n%s", raw)
	}
}
