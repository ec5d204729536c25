package main_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestAdaptersEnableManifest: `ctx adapters enable|disable` records the project's setting in manifest.json
// on the context branch (adapters.<client>.enabled, the client's name with '_' for '-'), one commit when it
// changes and none when it does not, and context://manifest serves it as docs/format.md "Records" shows it:
// {"adapters": {"claude_code": {"enabled": true}}}. The server was started before the writes (another
// process moves the branch under it).
func TestAdaptersEnableManifest(t *testing.T) {
	dir := testenv.NewRepo(t)
	mustCtx(t, dir, nil, 0, "init", "--no-hooks")
	s := serveStdio(t, dir)
	adaptersOf := func() any {
		t.Helper()
		var m map[string]any
		text := s.read(t, "context://manifest")
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatalf("context://manifest: %v\n%s", err, text)
		}
		return m["adapters"]
	}
	want := func(what string, w map[string]any) {
		t.Helper()
		if got := adaptersOf(); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: context://manifest adapters = %v, want %v", what, got, w)
		}
	}
	want("after init", map[string]any{})

	out := mustCtx(t, dir, nil, 0, "adapters", "enable", "claude-code").stdout
	if !strings.Contains(out, "enabled: claude-code") || !strings.Contains(out, "manifest adapters claude_code: committed") {
		t.Errorf("ctx adapters enable claude-code said:\n%s", out)
	}
	want("enabled", map[string]any{"claude_code": map[string]any{"enabled": true}})
	var branch map[string]any
	if err := json.Unmarshal([]byte(testenv.Git(t, dir, "show", "ctx:manifest.json")), &branch); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(branch["adapters"], map[string]any{"claude_code": map[string]any{"enabled": true}}) {
		t.Errorf("manifest.json on the branch: adapters %v", branch["adapters"])
	}

	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	out = mustCtx(t, dir, nil, 0, "adapters", "enable", "claude-code").stdout
	if !strings.Contains(out, "unchanged, no commit") || testenv.Git(t, dir, "rev-parse", "ctx") != tip {
		t.Errorf("enabling again committed:\n%s", out)
	}

	mustCtx(t, dir, nil, 0, "adapters", "enable", "cursor")
	mustCtx(t, dir, nil, 0, "adapters", "disable", "claude-code")
	want("cursor enabled, claude-code disabled", map[string]any{
		"claude_code": map[string]any{"enabled": false},
		"cursor":      map[string]any{"enabled": true},
	})
	mustCtx(t, dir, nil, 0, "doctor")
}

// TestAdaptersEnableDisableMerge is two clones of one bare remote at the same tip, adapters.copilot absent:
// a1 `ctx adapters enable copilot; ctx sync`, a2 (a minute later) `ctx adapters disable copilot; ctx sync`.
// The two settings conflict (docs/merge.md "Created on both sides"): the sync reports one conflict on
// adapters.copilot.enabled, the later write (a2's disable) is on the branch and the enable is the
// record's other version, listed by `ctx conflicts`; `ctx resolve manifest.json --theirs` takes the enable
// back. Before: "merged (0 conflicts)", copilot enabled, the acknowledged disable gone without a trace.
func TestAdaptersEnableDisableMerge(t *testing.T) {
	remote := testenv.BareRemote(t)
	a1 := testenv.Clone(t, remote, "a1")
	a2 := testenv.Clone(t, remote, "a2")
	mustCtx(t, a1, nil, 0, "init", "--no-hooks")
	mustCtx(t, a1, nil, 0, "push")
	mustCtx(t, a2, nil, 0, "init", "--no-hooks")
	at := func(sec int) []string { return []string{"CTX_TEST_NOW=" + strconv.Itoa(1_796_000_000+sec)} }
	mustCtx(t, a1, at(0), 0, "adapters", "enable", "copilot")
	mustCtx(t, a1, at(1), 0, "sync")
	mustCtx(t, a2, at(60), 0, "adapters", "disable", "copilot")
	out := mustCtx(t, a2, at(61), 0, "sync").stdout
	if !strings.Contains(out, "(1 conflict)") || !strings.Contains(out, "manifest.json adapters.copilot.enabled") {
		t.Errorf("a2's sync did not report the conflict:\n%s", out)
	}
	copilot := func(dir string) any {
		t.Helper()
		var m struct{ Adapters map[string]any }
		if err := json.Unmarshal([]byte(testenv.Git(t, dir, "show", "ctx:manifest.json")), &m); err != nil {
			t.Fatal(err)
		}
		return m.Adapters["copilot"]
	}
	if got := copilot(a2); !reflect.DeepEqual(got, map[string]any{"enabled": false}) {
		t.Errorf("the later disable lost: adapters.copilot = %v", got)
	}
	var recs []struct{ Path, Field, Ours, Theirs string }
	if err := json.Unmarshal([]byte(mustCtx(t, a2, nil, 0, "conflicts", "--json").stdout), &recs); err != nil || len(recs) != 1 {
		t.Fatalf("ctx conflicts --json: %v %+v", err, recs)
	}
	if r := recs[0]; r.Path != "manifest.json" || r.Field != "adapters.copilot.enabled" ||
		!strings.Contains(r.Ours, `"enabled": false`) || !strings.Contains(r.Theirs, `"enabled": true`) {
		t.Errorf("conflict record: %+v", r)
	}
	mustCtx(t, a2, at(62), 0, "resolve", "manifest.json", "--theirs")
	if got := copilot(a2); !reflect.DeepEqual(got, map[string]any{"enabled": true}) {
		t.Errorf("after resolve --theirs: adapters.copilot = %v", got)
	}
	mustCtx(t, a2, nil, 0, "doctor")
}
