package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// RecordProblem on hostile records of each kind (docs/format.md "Records"): wrong types, giant numbers,
// deep nesting, repeated keys, invalid UTF-8, no object; and the records ctx writes read.
func TestRecordProblem(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []struct {
		path, rec, want string // want: a part of the reason, "" for none
	}{
		{"state.json", `{"current_task":"x","blockers":["a"],"progress":{"auth":"50%"},"last_agent":"a","last_machine":"m","updated_at":"2026-11-29T23:00:00Z"}`, ""},
		{"state.json", `{"blockers":null,"progress":null,"extra":{"kept":[1,2,{"x":1e999999}]}}`, ""},
		{"state.json", `{}`, ""},
		{"state.json", `{"blockers":"oops"}`, "at '/blockers': got string, want null or array"},
		{"state.json", `{"blockers":[1]}`, "at '/blockers/0': got number, want string"},
		{"state.json", `{"progress":{"a":5}}`, "at '/progress/a'"},
		{"state.json", `{"current_task":1e999999}`, "at '/current_task': got number, want string"},
		{"state.json", `{"current_task":123456789012345678901234567890}`, "at '/current_task'"},
		{"state.json", `{"current_task":"a","current_task":"b"}`, `at '/current_task': the key "current_task" appears twice`},
		{"state.json", `{"progress":{"a":"1","a":"2"}}`, `at '/progress/a': the key "a" appears twice`},
		{"state.json", `{"x":` + deep(65) + `}`, "nested more than 64 levels deep"},
		{"state.json", `{"x":` + deep(20000) + `}`, "nested more than 64 levels deep"},
		{"state.json", "{\"current_task\":\"a\xff\"}", "not UTF-8 text"},
		{"state.json", `[]`, "not a JSON object"},
		{"state.json", `{} {}`, "more than one JSON value"},
		{"state.json", ``, "not a JSON object"},
		{"state.json", `{"a":`, "not JSON"},
		{"history/2026/11/s1.json", `{"id":"s1","started":"2026-11-29T23:00:00Z","ended":null,"knowledge_added":[],"decisions_added":["3"],"skills_used":[]}`, ""},
		{"history/s1.json", `{"id":"s1","ended":5}`, "at '/ended'"},
		{"history/2026/11/s1.json", `{"decisions_added":[3]}`, "at '/decisions_added/0': got number, want string"},
		{"history/.private/s1.json", `{"id":"s1","skills_used":{"a":1}}`, "at '/skills_used'"},
		{"activity/alice/cc--laptop.json", `{"member":"alice","files":["a"],"task_id":null,"intent":{"kind":"change","paths":["x"],"areas":[],"expires_at":"2026-11-30T01:00:00Z"}}`, ""},
		{"activity/alice/cc--laptop.json", `{"intent":{"paths":"x"}}`, "at '/intent/paths'"},
		{"activity/alice/cc--laptop.json", `{"run_failure":[]}`, "at '/run_failure'"},
		{"skills/deploy/.proposals/p1.json", `{"id":"p1","status":"pending","resolved_at":null}`, ""},
		{"skills/deploy/.proposals/p1.json", `{"resolved_at":false}`, "at '/resolved_at'"},
		// Not records RecordProblem checks: the manifest and conflict records have checks of their own.
		{"manifest.json", `{"project":5}`, ""},
		{"knowledge/k.md", `{"x":`, ""},
	}
	for _, c := range cases {
		got := store.RecordProblem(c.path, []byte(c.rec))
		short := c.rec
		if len(short) > 60 {
			short = short[:60] + "..."
		}
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("RecordProblem(%s, %q) = %q, want %q", c.path, short, got, c.want)
		}
	}
}

// The embedded record schemas are valid JSON Schemas (checked against their metaschema).
func TestRecordSchemasCompile(t *testing.T) {
	for _, name := range []string{"state.json", "session.json", "private_names.json", "activity.json", "proposal.json"} {
		if err := store.CompileRecordSchemaChecked(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// breakOnBranch commits, with git plumbing on top of ref's tip in dir, path holding data, and moves ref
// there (a plain-git edit of the branch); it returns the commit.
func breakOnBranch(t *testing.T, dir, ref, path, data string) string {
	t.Helper()
	blob := testenv.Blob(t, dir, data)
	tree := testenv.WithEntry(t, dir, testenv.Git(t, dir, "rev-parse", ref+"^{tree}"), strings.Split(path, "/"), "100644", blob)
	c := testenv.CommitTree(t, dir, tree, testenv.Git(t, dir, "rev-parse", ref), "plain git: "+path)
	testenv.Git(t, dir, "update-ref", "refs/heads/"+ref, c)
	return c
}

// A teammate's commit (plain git) that breaks state.json or a session record is refused by a pull with
// an error naming the path and the commit, nothing written; ctx push of such a local commit is refused
// the same way (before: pulled, then every reader of the state failed and ctx doctor said ok).
func TestPullRefusesMalformedRecords(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, a := teamClone(t, remote, "a")
	mustSet(t, sa, "k", "a\n")
	if _, _, err := sa.UpdateState(bg, store.StatePatch{CurrentTask: ptr("task")}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, sa, "a")
	sb, b := teamClone(t, remote, "b")
	mustPull(t, sb, "b")

	for _, c := range []struct{ path, data, reason string }{
		{"state.json", `{"current_task":"x","blockers":"waiting"}` + "\n", "at '/blockers': got string, want null or array"},
		{"history/2026/11/s1.json", `{"id":"s1","ended":17}` + "\n", "at '/ended'"},
		{"state.json", `{"current_task":"x","current_task":"y"}` + "\n", "appears twice"},
	} {
		bad := breakOnBranch(t, b, "ctx", c.path, c.data)
		_, err := sb.Push(bg, store.PushOptions{})
		if !errors.Is(err, store.ErrRejected) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.reason) ||
			!strings.Contains(err.Error(), bad[:12]) || !strings.Contains(err.Error(), "ctx state set") {
			t.Fatalf("push of a malformed %s: %v", c.path, err)
		}
		// The teammate's plain git pushes it anyway.
		testenv.Git(t, b, "push", "-q", "origin", "ctx")
		before := testenv.Git(t, a, "rev-parse", "ctx")
		snap := testenv.Take(t, filepath.Join(a, ".context"))
		_, err = sa.Pull(bg, store.PullOptions{})
		if !errors.Is(err, store.ErrRejected) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.reason) ||
			!strings.Contains(err.Error(), bad[:12]) || !strings.Contains(err.Error(), "malformed records") {
			t.Fatalf("pull of a malformed %s: %v", c.path, err)
		}
		if got := testenv.Git(t, a, "rev-parse", "ctx"); got != before {
			t.Fatalf("a refused pull moved ctx")
		}
		snap.Same(t, filepath.Join(a, ".context"))
		if st, err := sa.RefView(bg); err != nil {
			t.Fatal(err)
		} else if _, err := st.GetState(bg); err != nil {
			t.Fatalf("the state after a refused pull: %v", err)
		}
		// Repaired where it was written: the record written again, pushed.
		if _, _, err := sb.UpdateState(bg, store.StatePatch{CurrentTask: ptr("fixed")}); err != nil && c.path == "state.json" {
			t.Fatalf("state set over a malformed state.json: %v", err)
		}
		if c.path != "state.json" {
			breakOnBranch(t, b, "ctx", c.path, `{"id":"s1","ended":null}`+"\n")
		}
		if _, err := sb.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		mustPush(t, sb, "b")
		mustPull(t, sa, "a")
	}
}

// A malformed state.json on the branch (plain git): readers fail with an error that names it and the
// repair, ctx doctor reports it (before: ok), and ctx state set and ctx state clear write over it
// (before: both failed reading the old one).
func TestStateSetOverwritesMalformedState(t *testing.T) {
	s, dir := storetest.New(t)
	if _, _, err := s.UpdateState(bg, store.StatePatch{CurrentTask: ptr("t")}); err != nil {
		t.Fatal(err)
	}
	bad := breakOnBranch(t, dir, "ctx", "state.json", `{"current_task":"x","blockers":[1,2]}`+"\n")
	v, err := s.RefView(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.GetState(bg); err == nil || !strings.Contains(err.Error(), "state.json (public scope) is malformed") || !strings.Contains(err.Error(), "ctx state set") {
		t.Fatalf("reading a malformed state: %v", err)
	}
	d, err := s.Doctor(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Records) != 1 || d.Records[0].Path != "state.json" || d.Records[0].Commit != bad || !strings.Contains(d.Records[0].Reason, "at '/blockers/0'") {
		t.Fatalf("doctor's malformed records: %+v", d.Records)
	}
	st, c, err := s.UpdateState(bg, store.StatePatch{Blockers: &[]string{"spec"}})
	if err != nil || c == nil || len(st.Blockers) != 1 {
		t.Fatalf("state set over a malformed state.json: %+v, %v, %v", st, c, err)
	}
	if got := storetest.Show(t, dir, "ctx", "state.json"); store.RecordProblem("state.json", []byte(got)) != "" || !strings.Contains(got, `"spec"`) {
		t.Fatalf("state.json after the write: %s", got)
	}
	if d, err := s.Doctor(bg); err != nil || len(d.Records) != 0 {
		t.Fatalf("doctor after the repair: %+v, %v", d, err)
	}
	breakOnBranch(t, dir, "ctx", "state.json", `{"progress":[]}`+"\n")
	if _, err := s.ClearState(bg); err != nil {
		t.Fatalf("state clear over a malformed state.json: %v", err)
	}
	if got := storetest.Show(t, dir, "ctx", "state.json"); store.RecordProblem("state.json", []byte(got)) != "" {
		t.Fatalf("state.json after clear: %s", got)
	}
}

// A hand edit of .context/ that breaks a record is refused by ctx commit with an error naming the file
// and the field; the file stays as the user wrote it and nothing is committed.
func TestCommitRefusesMalformedRecord(t *testing.T) {
	s, dir := storetest.New(t)
	if _, _, err := s.UpdateState(bg, store.StatePatch{CurrentTask: ptr("t")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".context", "state.json")
	edit := []byte(`{"current_task": "t", "progress": {"auth": 50}}` + "\n")
	if err := os.WriteFile(p, edit, 0o644); err != nil {
		t.Fatal(err)
	}
	before := testenv.Git(t, dir, "rev-parse", "ctx")
	_, _, err := s.CommitHandEdits(bg, "")
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "state.json") || !strings.Contains(err.Error(), "at '/progress/auth'") {
		t.Fatalf("commit of a malformed state.json: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != string(edit) {
		t.Fatalf("the refused file was changed: %q", got)
	}
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != before {
		t.Fatal("a refused commit moved ctx")
	}
}

// A check-in writes over this agent's malformed activity entry (before: it failed reading the old one);
// a check-out of it still says what is wrong.
func TestCheckInOverwritesMalformedActivity(t *testing.T) {
	s, dir := storetest.New(t)
	e, _, err := s.CheckIn(bg, store.CheckIn{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	p := store.ActivityPath(e.Member, e.Agent, e.Machine)
	breakOnBranch(t, dir, "ctx", p, `{"member":"x","files":"a.go"}`+"\n")
	if _, _, err := s.CheckOut(bg); err == nil || !strings.Contains(err.Error(), "is malformed") || !strings.Contains(err.Error(), "ctx activity check-in") {
		t.Fatalf("check-out of a malformed entry: %v", err)
	}
	if _, c, err := s.CheckIn(bg, store.CheckIn{Task: "again"}); err != nil || c == nil {
		t.Fatalf("check-in over a malformed entry: %v, %v", c, err)
	}
	if got := storetest.Show(t, dir, "ctx", p); store.RecordProblem(p, []byte(got)) != "" || !strings.Contains(got, `"again"`) {
		t.Fatalf("the entry after check-in: %s", got)
	}
}
