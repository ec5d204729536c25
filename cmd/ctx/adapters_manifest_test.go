package main_test

import (
	"encoding/json"
	"reflect"
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
