package adapters

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// userSettings is a Claude Code settings file with the user's own hooks, including a SessionStart and a
// SessionEnd one, in the user's own layout.
const userSettings = `{
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check.sh"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ],
        "SessionEnd": [
            {"hooks": [{"type": "command", "command": "./scripts/bye.sh"}]}
        ]
    }
}
`

// hookIn says whether one of entries (a hooks.<event> array) runs command.
func hookIn(t *testing.T, entries []any, command string) bool {
	t.Helper()
	b, _ := json.Marshal(entries)
	var es []struct {
		Hooks []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatalf("hook entries: %v: %s", err, b)
	}
	for _, e := range es {
		for _, h := range e.Hooks {
			if h.Command == command && h.Type == "command" {
				return true
			}
		}
	}
	return false
}

func settingsHooks(t *testing.T, b []byte) map[string][]any {
	t.Helper()
	var v struct {
		Hooks map[string][]any `json:"hooks"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("settings are not valid JSON: %v\n%s", err, b)
	}
	return v.Hooks
}

// TestHooksInstallRemoveByteForByte: for a missing file, an empty hooks-less file, and one with the
// user's hooks, install adds ctx's SessionStart and SessionEnd hooks, keeps every hook of the user's, is
// idempotent, and remove restores the file byte for byte (or deletes the file install created).
func TestHooksInstallRemoveByteForByte(t *testing.T) {
	for name, before := range map[string]string{"missing": "", "no hooks": "{\n  \"model\": \"opus\"\n}\n",
		"user hooks": userSettings, "CRLF, no final newline": strings.ReplaceAll(strings.TrimSpace(userSettings), "\n", "\r\n")} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			opts := Options{Root: root, StateDir: t.TempDir()}
			file := filepath.Join(root, ".claude", "settings.json")
			if before != "" {
				if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, act, err := InstallHooks(opts, "claude-code", HookProject); err != nil || act != HookAdded {
				t.Fatalf("install: %s %v", act, err)
			}
			after, _ := os.ReadFile(file)
			hooks := settingsHooks(t, after)
			if before == userSettings && (len(hooks["PreToolUse"]) != 1 || len(hooks["SessionStart"]) != 2 || len(hooks["SessionEnd"]) != 2) {
				t.Fatalf("user hooks lost: %s", after)
			}
			if !strings.Contains(string(after), BriefCommand) {
				t.Fatalf("no ctx hook: %s", after)
			}
			if !hookIn(t, hooks["SessionStart"], BriefCommand) || !hookIn(t, hooks["SessionEnd"], EndCommand) {
				t.Fatalf("ctx's hooks are not under SessionStart and SessionEnd: %s", after)
			}
			if strings.Contains(before, "\r\n") && strings.Count(string(after), "\n") != strings.Count(string(after), "\r\n") {
				t.Fatalf("a line ending other than the file's CRLF: %q", after)
			}
			if _, act, _ := InstallHooks(opts, "claude-code", HookProject); act != HookUnchanged {
				t.Fatalf("second install: %s", act)
			}
			if again, _ := os.ReadFile(file); string(again) != string(after) {
				t.Fatal("second install changed the file")
			}
			if _, act, _ := HookStatus(opts, "claude-code", HookProject); act != HookInstalled {
				t.Fatalf("status: %s", act)
			}
			if _, _, ev, err := HookEvents(opts, "claude-code", HookProject); err != nil || len(ev) != 2 ||
				ev[0] != (HookEventState{EventSessionStart, true}) || ev[1] != (HookEventState{EventSessionEnd, true}) {
				t.Fatalf("events: %+v %v", ev, err)
			}
			if _, act, err := RemoveHooks(opts, "claude-code", HookProject); err != nil || act != HookRestored {
				t.Fatalf("remove: %s %v", act, err)
			}
			got, err := os.ReadFile(file)
			if before == "" {
				if err == nil {
					t.Fatalf("the file install created is still there: %s", got)
				}
				return
			}
			if string(got) != before {
				t.Fatalf("remove did not restore the file:\n%q\n%q", got, before)
			}
		})
	}
}

// TestHooksRemoveAfterUserEdit: a settings file the user changed after install loses only ctx's hook.
func TestHooksRemoveAfterUserEdit(t *testing.T) {
	root := t.TempDir()
	opts := Options{Root: root, StateDir: t.TempDir()}
	file := filepath.Join(root, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := InstallHooks(opts, "claude-code", HookProject); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	edited := strings.Replace(string(b), `"allow": ["Bash(make test)"]`, `"allow": ["Bash(make test)", "Bash(go vet)"]`, 1)
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, act, err := RemoveHooks(opts, "claude-code", HookProject); err != nil || act != HookRemoved {
		t.Fatalf("remove: %s %v", act, err)
	}
	got, _ := os.ReadFile(file)
	if strings.Contains(string(got), BriefCommand) || !strings.Contains(string(got), "go vet") || !strings.Contains(string(got), "echo hello") {
		t.Fatalf("after remove:\n%s", got)
	}
	if hooks := settingsHooks(t, got); len(hooks["SessionStart"]) != 1 || len(hooks["PreToolUse"]) != 1 {
		t.Fatalf("user hooks changed: %s", got)
	}
	if strings.Contains(string(got), EndCommand) || !strings.Contains(string(got), "./scripts/bye.sh") || len(settingsHooks(t, got)["SessionEnd"]) != 1 {
		t.Fatalf("SessionEnd after remove:\n%s", got)
	}
}

// TestHooksRefuseOddSettings: a file ctx cannot edit safely is left untouched with a clear error.
func TestHooksRefuseOddSettings(t *testing.T) {
	for _, bad := range []string{"[1,2]", `{"hooks": []}`, `{"hooks": {"SessionStart": {}}}`, `{"hooks": {"SessionEnd": "x"}}`, "{not json"} {
		root := t.TempDir()
		opts := Options{Root: root, StateDir: t.TempDir()}
		file := filepath.Join(root, ".claude", "settings.local.json")
		if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := InstallHooks(opts, "claude-code", HookLocal); !errors.Is(err, ErrHookSettings) {
			t.Fatalf("%s: install = %v", bad, err)
		}
		if got, _ := os.ReadFile(file); string(got) != bad {
			t.Fatalf("%s: file changed", bad)
		}
	}
	if _, _, err := InstallHooks(Options{Root: t.TempDir(), StateDir: t.TempDir()}, "cursor", HookLocal); err == nil {
		t.Fatal("cursor hooks accepted")
	}
}

// TestGeminiHooksJSONC: Gemini CLI's settings (JSON with comments) keep their comments and the user's
// hooks through install, and remove restores them byte for byte.
func TestGeminiHooksJSONC(t *testing.T) {
	before := `{
  // the user's theme
  "ui": {"theme": "GitHub"},
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./check.sh"}]}, // keep
    ],
  },
}
`
	root := t.TempDir()
	opts := Options{Root: root, StateDir: t.TempDir()}
	file := filepath.Join(root, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := InstallHooks(opts, "gemini", HookLocal); err == nil {
		t.Fatal("gemini has no local settings file; accepted")
	}
	p, act, err := InstallHooks(opts, "gemini", "")
	if err != nil || act != HookAdded || p != ".gemini/settings.json" {
		t.Fatalf("install: %s %s %v", p, act, err)
	}
	got, _ := os.ReadFile(file)
	for _, want := range []string{"// the user's theme", "// keep", "./check.sh", GeminiBriefCommand, GeminiEndCommand} {
		if !strings.Contains(string(got), want) {
			t.Fatalf("lacks %q:\n%s", want, got)
		}
	}
	std, err := hujson.Standardize(got)
	if err != nil {
		t.Fatalf("not JSONC: %v\n%s", err, got)
	}
	if hooks := settingsHooks(t, std); !hookIn(t, hooks["SessionStart"], GeminiBriefCommand) || !hookIn(t, hooks["SessionEnd"], GeminiEndCommand) || len(hooks["BeforeTool"]) != 1 {
		t.Fatalf("hooks after install:\n%s", got)
	}
	if _, act, err := InstallHooks(opts, "gemini", ""); err != nil || act != HookUnchanged {
		t.Fatalf("second install: %s %v", act, err)
	}
	if _, act, err := RemoveHooks(opts, "gemini", ""); err != nil || act != HookRestored {
		t.Fatalf("remove: %s %v", act, err)
	}
	if got, _ := os.ReadFile(file); string(got) != before {
		t.Fatalf("not restored:\n%s", got)
	}
}

// TestHooksUpgradeOlderInstall: a settings file holding only ctx's SessionStart hook (an install by an
// older ctx, which knew only that event) is partial; install adds the SessionEnd hook beside it and
// nothing else, and remove still gives back the file as it was before the first install.
func TestHooksUpgradeOlderInstall(t *testing.T) {
	root := t.TempDir()
	opts := Options{Root: root, StateDir: t.TempDir()}
	file := filepath.Join(root, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	// The older install: ctx's SessionStart hook only, with its receipt.
	current := hookClients["claude-code"]
	older := current
	older.hooks = current.hooks[:1]
	hookClients["claude-code"] = older
	_, _, err := InstallHooks(opts, "claude-code", HookProject)
	hookClients["claude-code"] = current
	if err != nil {
		t.Fatal(err)
	}
	if _, act, ev, err := HookEvents(opts, "claude-code", HookProject); err != nil || act != HookPartial || !ev[0].Installed || ev[1].Installed {
		t.Fatalf("status of an older install: %s %+v %v", act, ev, err)
	}
	olderBytes, _ := os.ReadFile(file)
	if _, act, err := InstallHooks(opts, "claude-code", HookProject); err != nil || act != HookAdded {
		t.Fatalf("install over an older one: %s %v", act, err)
	}
	got, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(got), string(olderBytes[:strings.Index(string(olderBytes), `"SessionEnd"`)])) {
		t.Fatalf("install over an older one changed more than SessionEnd:\n%s\nwas\n%s", got, olderBytes)
	}
	if hooks := settingsHooks(t, got); !hookIn(t, hooks["SessionEnd"], EndCommand) || len(hooks["SessionEnd"]) != 2 || len(hooks["SessionStart"]) != 2 {
		t.Fatalf("after the upgrade:\n%s", got)
	}
	if _, act, err := RemoveHooks(opts, "claude-code", HookProject); err != nil || act != HookRestored {
		t.Fatalf("remove: %s %v", act, err)
	}
	if got, _ := os.ReadFile(file); string(got) != userSettings {
		t.Fatalf("not restored:\n%s", got)
	}
}
