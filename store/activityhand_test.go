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

// TestActivityHandEditValidated: the team pulse fields are validated on every write (docs/format.md
// "Activity"), a hand edit's too: ctx commit refuses an activity record with an availability, task_id or
// intent.kind outside their rules, naming the file and the field, nothing committed; a record of a ctx
// before the pulse (no availability) is taken. One that reached the branch otherwise (plain git) is listed
// by ctx doctor as a malformed record.
func TestActivityHandEditValidated(t *testing.T) {
	const good = `{"member":"zed","agent":"bad-agent","machine":"m","task":"t","issue_ref":"","status":"active",` +
		`"updated_at":"2026-12-02T10:00:00Z","availability":"working","doing":"","task_id":null,"branch":null,"files":[],"last_decision":null}`
	for _, tc := range []struct{ field, from, to string }{
		{"availability", `"availability":"working"`, `"availability":"sleeping"`},
		{"task_id", `"task_id":null`, `"task_id":"bad id with spaces!"`},
		{"intent.kind", `"last_decision":null`, `"last_decision":null,"intent":{"kind":"destroy","paths":[],"areas":[],"expires_at":"2026-12-03T00:00:00Z"}`},
		{"intent.expires_at", `"last_decision":null`, `"last_decision":null,"intent":{"kind":"change","paths":[],"areas":[],"expires_at":"never"}`},
	} {
		bad := strings.Replace(good, tc.from, tc.to, 1)
		err := store.ValidateFile("activity/zed/bad-agent--m.json", []byte(bad))
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "invalid activity: "+tc.field+" ") {
			t.Errorf("%s: %v; want an error naming the field", tc.field, err)
		}
	}
	old := `{"member":"zed","agent":"a","machine":"m","task":"t","updated_at":"2026-01-01T00:00:00Z"}`
	for _, ok := range []string{good, old} {
		if err := store.ValidateFile("activity/zed/bad-agent--m.json", []byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}

	s, dir := storetest.New(t)
	p := filepath.Join(dir, store.CheckoutDir, "activity", "zed", "bad-agent--m.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(good, `"availability":"working"`, `"availability":"sleeping"`, 1)
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	n := storetest.Count(t, dir, "ctx")
	if _, _, err := s.CommitHandEdits(bg, ""); !errors.Is(err, store.ErrInvalid) ||
		!strings.Contains(err.Error(), "activity/zed/bad-agent--m.json") || !strings.Contains(err.Error(), "availability") {
		t.Fatalf("commit of the hand edit: %v; want a refusal naming the file and the field", err)
	}
	if storetest.Count(t, dir, "ctx") != n {
		t.Fatalf("a refused hand edit was committed")
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}

	// The same record written with plain git: ctx doctor lists it.
	blob := testenv.Blob(t, dir, bad)
	tree := testenv.WithEntry(t, dir, testenv.Git(t, dir, "rev-parse", "ctx^{tree}"), []string{"activity", "zed", "bad-agent--m.json"}, "100644", blob)
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", testenv.CommitTree(t, dir, tree, testenv.Git(t, dir, "rev-parse", "ctx"), "plain git"))
	rs, err := s.MalformedRecords(bg)
	if err != nil || len(rs) != 1 || rs[0].Path != "activity/zed/bad-agent--m.json" || !strings.Contains(rs[0].Reason, "availability") {
		t.Fatalf("doctor's malformed records: %+v, %v; want the activity record", rs, err)
	}
}
