package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/merge"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
	"github.com/google/uuid"
)

// mustMonth is the "YYYY/MM" month of a timestamp ctx wrote.
func mustMonth(t testing.TB, ts string) string {
	t.Helper()
	m, ok := merge.Month(ts)
	if !ok {
		t.Fatalf("timestamp %q does not parse", ts)
	}
	return m
}

// flatStore rewrites the store's manifest without "layout", as a ctx before layout 2 made it, and adds
// files at their flat paths (one commit with go-git through the store's writer, not a ctx operation).
func flatStore(t *testing.T, s *store.Store, dir string, files map[string]string) {
	t.Helper()
	m := storetest.Show(t, dir, "ctx", store.ManifestPath)
	flat := strings.Replace(m, ",\n  \"layout\": 2", "", 1)
	if flat == m {
		t.Fatalf("manifest without layout 2:\n%s", m)
	}
	if _, err := s.Write(bg, store.Op{Name: "test", Summary: "flat store"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, store.ManifestPath, []byte(flat+"\n"))
		for p, c := range files {
			ed.Put(store.Public, p, []byte(c))
		}
		return ed, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func sessionRec(id, started, summary string) string {
	return fmt.Sprintf(`{"id": %q, "agent": "a", "user": "u", "machine": "m", "started": %q, "ended": null, "summary": %q, "knowledge_added": [], "decisions_added": [], "skills_used": []}`+"\n", id, started, summary)
}

// TestSessionLayouts: a new store writes history/YYYY/MM/<id>.json; an id ctx makes is a UUIDv7 whose
// month is the record's; a flat store keeps writing flat; ids are found in either layout, an old month
// included; Migrate is one commit, moves flat records and splits logs, and a second run commits nothing.
func TestSessionLayouts(t *testing.T) {
	s, dir := storetest.New(t)
	ss, _, err := s.StartSession(bg, store.SessionUpdate{Summary: "new"})
	if err != nil {
		t.Fatal(err)
	}
	u := uuid.MustParse(ss.ID)
	if u.Version() != 7 {
		t.Errorf("new session id %s is version %d, want 7", ss.ID, u.Version())
	}
	sec, nsec := u.Time().UnixTime()
	if idMonth := time.Unix(sec, nsec).UTC().Format("2006/01"); idMonth != mustMonth(t, ss.Started) {
		t.Errorf("id month %s, started %s", idMonth, ss.Started)
	}
	if !storetest.Files(t, dir, "ctx")[merge.SessionPath(ss.ID, ss.Started, true)] {
		t.Fatalf("new session not at its month:\n%s", testenv.Git(t, dir, "ls-tree", "-r", "--name-only", "ctx"))
	}

	flatStore(t, s, dir, map[string]string{
		"history/old.json":          sessionRec("old", "2024-02-03T04:05:06Z", "old flat"),
		"history/2023/07/deep.json": sessionRec("deep", "2023-07-01T00:00:00Z", "an old month"),
		"history/nodate.json":       sessionRec("nodate", "someday", "no date"),
	})
	if _, _, err := s.StartSession(bg, store.SessionUpdate{ID: "flat-new"}); err != nil {
		t.Fatal(err)
	}
	if !storetest.Files(t, dir, "ctx")["history/flat-new.json"] {
		t.Error("a flat store got a sharded record: teammates' older ctx could not pull it")
	}
	v, err := s.RefView(bg)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"old": "old flat", "deep": "an old month", "nodate": "no date", ss.ID: "new"} {
		if got, err := v.GetSession(bg, id); err != nil || got.Summary != want {
			t.Errorf("GetSession(%s) = %+v, %v", id, got, err)
		}
	}
	if list, err := v.ListSessions(bg); err != nil || len(list) != 5 || list[0].ID != "deep" {
		t.Errorf("ListSessions = %+v, %v", list, err)
	}

	before := testenv.Git(t, dir, "rev-parse", "ctx")
	rep, err := s.Migrate(bg)
	if err != nil || rep.Sessions != 2 || len(rep.Kept) != 1 || !strings.Contains(rep.Kept[0], "history/nodate.json") {
		t.Fatalf("Migrate = %+v, %v", rep, err)
	}
	if n := testenv.Git(t, dir, "rev-list", "--count", before+"..ctx"); n != "1" {
		t.Errorf("migrate made %s commits", n)
	}
	files := storetest.Files(t, dir, "ctx")
	for _, p := range []string{"history/2024/02/old.json", "history/2023/07/deep.json", "history/nodate.json", merge.SessionPath("flat-new", mustStarted(t, s, "flat-new"), true)} {
		if !files[p] {
			t.Errorf("after migrate, no %s", p)
		}
	}
	if files["history/old.json"] || files["history/flat-new.json"] {
		t.Error("migrate left a flat record")
	}
	if !strings.Contains(storetest.Show(t, dir, "ctx", store.ManifestPath), `"layout": 2`) {
		t.Error("manifest not marked layout 2")
	}
	if st, err := s.Status(bg); err != nil || st.Counts["history"] != 5 {
		t.Errorf("status counts %v sessions, want 5 (%v)", st.Counts, err)
	}
	if rep, err := s.Migrate(bg); err != nil || rep.Committed.Changed() {
		t.Errorf("second migrate: %+v %v", rep, err)
	}
	testenv.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

func mustStarted(t *testing.T, s *store.Store, id string) string {
	t.Helper()
	v, err := s.RefView(bg)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := v.GetSession(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return ss.Started
}

// TestShardedLayoutHostileEntries: entries of the new places that ctx does not read — a month folder
// "..", a folder that is no date, month 13, a symbolic link in a month folder, a stray file in a skill's
// .usage/ — are skipped by the readers (the refs and the checked-out tree), listed by TreeProblems (ctx
// doctor), and removed by RemoveProblems.
func TestShardedLayoutHostileEntries(t *testing.T) {
	s, dir := storetest.New(t)
	if _, _, err := s.StartSession(bg, store.SessionUpdate{ID: "good", Summary: "ok"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddSkill(bg, "lint", "Lint", "make lint", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReportSkillUsage(bg, "lint", "good"); err != nil {
		t.Fatal(err)
	}
	month := time.Now().UTC().Format("2006/01")
	y, m, _ := strings.Cut(month, "/")
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	tree := testenv.Git(t, dir, "rev-parse", "ctx^{tree}")
	rec := func(id string) string { return testenv.Blob(t, dir, sessionRec(id, "2026-11-01T00:00:00Z", "hostile")) }
	tree = testenv.WithEntry(t, dir, tree, []string{"history", y, "..", "dots.json"}, "100644", rec("dots"))
	tree = testenv.WithEntry(t, dir, tree, []string{"history", "misc", "11", "misc.json"}, "100644", rec("misc"))
	tree = testenv.WithEntry(t, dir, tree, []string{"history", y, "13", "thirteen.json"}, "100644", rec("thirteen"))
	tree = testenv.WithEntry(t, dir, tree, []string{"history", y, m, "link.json"}, "120000", testenv.Blob(t, dir, "../../../../.git/config"))
	tree = testenv.WithEntry(t, dir, tree, []string{"skills", "lint", ".usage", "notes.txt"}, "100644",
		testenv.Blob(t, dir, `{"id":"x","timestamp":"2026-11-01T00:00:00Z"}`+"\n"))
	bad := testenv.CommitTree(t, dir, tree, tip, "teammate's git")
	// A pull would refuse that commit (the check every fetched tip passes), naming each path.
	var rej *store.RejectedError
	if err := s.CheckIncoming(bg, "origin's ctx branch", gitstore.NewHash(bad), gitstore.NewHash(tip), nil); !errors.As(err, &rej) ||
		len(rej.Problems) != 5 {
		t.Fatalf("CheckIncoming = %v", err)
	}
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", bad)

	rv, err := s.RefView(bg)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := s.CheckoutView(bg)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]*store.View{"refs": rv, "checkout": cv} {
		list, err := v.ListSessions(bg)
		if err != nil || len(list) != 1 || list[0].ID != "good" {
			t.Errorf("%s: ListSessions = %+v, %v", name, list, err)
		}
		for _, id := range []string{"dots", "misc", "thirteen", "link"} {
			var nf *store.NotFoundError
			if _, err := v.GetSession(bg, id); !errors.As(err, &nf) {
				t.Errorf("%s: GetSession(%s) = %v, want not found", name, id, err)
			}
		}
		if uses, err := v.SkillUsages(bg, "lint"); err != nil || len(uses) != 1 {
			t.Errorf("%s: usages %+v %v", name, uses, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, store.CheckoutDir, "history", y, m, "link.json")); err == nil {
		t.Error("the link was checked out")
	}
	ps, err := s.TreeProblems(bg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range ps {
		got[p.Path] = p.Unsafe
	}
	want := map[string]bool{"history/" + y + "/../dots.json": true, "history/misc/11/misc.json": false,
		"history/" + y + "/13/thirteen.json": false, "history/" + month + "/link.json": true, "skills/lint/.usage/notes.txt": false}
	for p, unsafe := range want {
		if u, ok := got[p]; !ok || u != unsafe {
			t.Errorf("problem %s: listed %v, unsafe %v (want %v); all: %+v", p, ok, u, unsafe, ps)
		}
	}
	if _, removed, err := s.RemoveProblems(bg); err != nil || len(removed) != len(want) {
		t.Fatalf("RemoveProblems: %v %v", removed, err)
	}
	tree = testenv.Git(t, dir, "ls-tree", "-r", "--name-only", "ctx")
	for _, p := range []string{"misc.json", "thirteen.json", "link.json", "notes.txt", "dots.json"} {
		if strings.Contains(tree, p) {
			t.Errorf("%s survived the fix:\n%s", p, tree)
		}
	}
	if !strings.Contains(tree, "history/"+month+"/good.json") {
		t.Errorf("the fix removed the good session:\n%s", tree)
	}
}
