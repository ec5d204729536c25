package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
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

// commitManifest commits manifest.json with content on the context branch of dir with plain git (a
// worktree of the branch) and pushes it to origin: a manifest ctx did not write.
func commitManifest(t *testing.T, dir, content string) {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, dir, "worktree", "add", "-q", wt, "ctx")
	if err := os.WriteFile(filepath.Join(wt, "manifest.json"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, wt, "commit", "-qam", "hand-written manifest")
	testenv.Git(t, wt, "push", "-q", "origin", "ctx")
	testenv.Git(t, dir, "worktree", "remove", "--force", wt)
}

// enabledIn is the clients `ctx adapters list --json` says are enabled in the work tree dir.
func enabledIn(t *testing.T, dir string) []string {
	t.Helper()
	var rows []struct {
		Name    string
		Enabled bool
	}
	if err := json.Unmarshal([]byte(mustCtx(t, dir, nil, 0, "adapters", "list", "--json").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	var on []string
	for _, r := range rows {
		if r.Enabled {
			on = append(on, r.Name)
		}
	}
	return on
}

// TestAdaptersManifestHostile: a manifest.json ctx did not write, on the context branch.
//   - Its adapters does not decode ([1,2]): `ctx adapters enable codex` and `disable` stop before they
//     change anything (exit 1, "nothing changed"), the work tree's record as it was (before: "enabled:
//     codex" printed and recorded, then exit 1 on the manifest step).
//   - Its adapters has keys that are no client name ("../../x\u0000y", "<script>"): a pull of a clone
//     refuses the tip (exit 5, nothing moves), ctx doctor reports it (exit 1) and context://manifest does
//     not serve it (before: pulled, served and "ok").
func TestAdaptersManifestHostile(t *testing.T) {
	remote := testenv.BareRemote(t)
	a := testenv.Clone(t, remote, "a")
	b := testenv.Clone(t, remote, "b")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "push")
	mustCtx(t, b, nil, 0, "init", "--no-hooks")
	var m map[string]any
	if err := json.Unmarshal([]byte(testenv.Git(t, a, "show", "ctx:manifest.json")), &m); err != nil {
		t.Fatal(err)
	}
	with := func(adapters string) string {
		m["adapters"] = json.RawMessage(adapters)
		out, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(out) + "\n"
	}

	commitManifest(t, a, with(`[1,2]`))
	for _, verb := range []string{"enable", "disable"} {
		tip := testenv.Git(t, a, "rev-parse", "ctx")
		r := mustCtx(t, a, nil, 1, "adapters", verb, "codex")
		if strings.Contains(r.stdout, "enabled:") || !strings.Contains(r.stderr, "nothing changed") {
			t.Errorf("adapters %s on a manifest that does not decode:\nstdout:\n%s\nstderr:\n%s", verb, r.stdout, r.stderr)
		}
		if got := enabledIn(t, a); len(got) != 0 || testenv.Git(t, a, "rev-parse", "ctx") != tip {
			t.Errorf("adapters %s changed something: enabled %v", verb, got)
		}
	}

	hostile := with(`{"../../x\u0000y": {"enabled": true}, "<script>": {"enabled": true}, "codex": {"enabled": true}}`)
	commitManifest(t, a, hostile)
	tipB := testenv.Git(t, b, "rev-parse", "ctx")
	r := mustCtx(t, b, nil, 5, "pull")
	if !strings.Contains(r.stderr, `adapters key "../../x\x00y" is not a client name`) || testenv.Git(t, b, "rev-parse", "ctx") != tipB {
		t.Errorf("pull of a manifest with hostile adapters keys:\n%s", r.stderr)
	}
	r = mustCtx(t, a, nil, 1, "doctor")
	if !strings.Contains(r.stdout, `adapters key "../../x\x00y" is not a client name`) {
		t.Errorf("doctor:\n%s\n%s", r.stdout, r.stderr)
	}
	s := serveStdio(t, a)
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = "context://manifest"
	if res, err := s.c.ReadResource(context.Background(), req); err == nil {
		t.Errorf("context://manifest served a manifest with hostile adapters keys: %+v", res.Contents)
	}
	mustCtx(t, a, nil, 0, "doctor", "--fix")
	if got := testenv.Git(t, a, "show", "ctx:manifest.json"); strings.Contains(got, "script") {
		t.Errorf("doctor --fix kept the hostile keys:\n%s", got)
	}
}
