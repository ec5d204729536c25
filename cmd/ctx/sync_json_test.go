package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
)

// decodeStrict decodes out, which must be one JSON value and nothing else, into v; unknown fields fail.
func decodeStrict(t *testing.T, what, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: not the documented JSON: %v\n%s", what, err, out)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON value on stdout:\n%s", what, out)
	}
}

// TestSyncJSON: ctx pull, push and sync --json print one JSON object each on stdout (docs/sync.md "JSON
// output"): the pull's action and tips, its conflicts with the ids ctx conflicts lists, the hand edits
// recorded first; the push's machine ref and tip as git sees them on the remote; sync's both. Lists are
// [] rather than null, and a refused pull prints no JSON.
func TestSyncJSON(t *testing.T) {
	remote := testenv.BareRemote(t)
	a := testenv.Clone(t, remote, "a")
	b := testenv.Clone(t, remote, "b")
	run(t, a, 0, "init", "--no-hooks")

	var push store.PushReport
	decodeStrict(t, "push --json", run(t, a, 0, "push", "--json"), &push)
	if push.Remote != "origin" || push.MachineRef == "" || push.Shared != string(store.SharedUpdated) || push.Pulls == nil || push.Warnings == nil {
		t.Fatalf("push --json = %+v", push)
	}
	if got := testenv.Git(t, remote, "rev-parse", push.MachineRef); got != push.Tip {
		t.Fatalf("push --json tip %s, the remote's %s is at %s", push.Tip, push.MachineRef, got)
	}

	var pull store.PullReport
	decodeStrict(t, "first pull --json", run(t, b, 0, "pull", "--json"), &pull)
	if !pull.Found || pull.Action != string(store.PullAdopted) || pull.New != push.Tip || pull.Conflicts == nil || pull.HandEdits == nil {
		t.Fatalf("first pull --json = %+v, want adopted at %s", pull, push.Tip)
	}

	// A conflict: both write the same entry; b also edits another entry by hand before its pull.
	run(t, a, 0, "knowledge", "set", "arch", "A: Postgres")
	run(t, a, 0, "push")
	run(t, b, 0, "knowledge", "set", "arch", "B: SQLite")
	run(t, b, 0, "knowledge", "set", "notes", "first")
	notes := filepath.Join(b, ".context", "knowledge", "notes.md")
	data, err := os.ReadFile(notes)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, notes, strings.Replace(string(data), "first", "edited by hand", 1))
	pull = store.PullReport{}
	decodeStrict(t, "merging pull --json", run(t, b, 0, "pull", "--json"), &pull)
	if pull.Action != string(store.PullMerged) || len(pull.Conflicts) != 1 || pull.Conflicts[0].Path != "knowledge/arch.md" {
		t.Fatalf("merging pull --json = %+v, want a merge with one conflict on knowledge/arch.md", pull)
	}
	if len(pull.HandEdits) != 1 || pull.HandEdits[0].Path != "knowledge/notes.md" {
		t.Fatalf("merging pull --json hand_edits = %+v, want knowledge/notes.md", pull.HandEdits)
	}
	if head := testenv.Git(t, b, "rev-parse", "refs/heads/ctx"); pull.New != head {
		t.Fatalf("pull --json new = %s, the branch is at %s", pull.New, head)
	}
	var listed []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(run(t, b, 0, "conflicts", "--json")), &listed); err != nil || len(listed) != 1 || listed[0].ID != pull.Conflicts[0].ID {
		t.Fatalf("ctx conflicts --json lists %+v (%v), the pull reported %s", listed, err, pull.Conflicts[0].ID)
	}

	var both struct {
		Pull *store.PullReport `json:"pull"`
		Push *store.PushReport `json:"push"`
	}
	decodeStrict(t, "sync --json", run(t, b, 0, "sync", "--json"), &both)
	if both.Pull == nil || both.Push == nil || both.Pull.Action != string(store.PullUpToDate) || both.Push.Tip != pull.New {
		t.Fatalf("sync --json = pull %+v push %+v", both.Pull, both.Push)
	}

	// A refused pull (a file deleted by hand) prints its error and no JSON.
	run(t, a, 0, "pull")
	if err := os.Remove(filepath.Join(a, ".context", "knowledge", "arch.md")); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCode(a, "", "pull", "--json")
	if code == 0 || strings.TrimSpace(stdout) != "" || !strings.Contains(stderr, "ctx restore") {
		t.Fatalf("refused pull --json: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
