package adapters

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userSettings is a Claude Code settings file with the user's own hooks, including a SessionStart one,
// in the user's own layout.
const userSettings = `{
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check.sh"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ]
    }
}
`

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
// user's hooks, install keeps every hook of the user's, is idempotent, and remove restores the file
// byte for byte (or deletes the file install created).
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
			if before == userSettings && (len(hooks["PreToolUse"]) != 1 || len(hooks["SessionStart"]) != 2) {
				t.Fatalf("user hooks lost: %s", after)
			}
			if !strings.Contains(string(after), BriefCommand) {
				t.Fatalf("no ctx hook: %s", after)
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
}

// TestHooksRefuseOddSettings: a file ctx cannot edit safely is left untouched with a clear error.
func TestHooksRefuseOddSettings(t *testing.T) {
	for _, bad := range []string{"[1,2]", `{"hooks": []}`, `{"hooks": {"SessionStart": {}}}`, "{not json"} {
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
	for _, want := range []string{"// the user's theme", "// keep", "./check.sh", GeminiBriefCommand} {
		if !strings.Contains(string(got), want) {
			t.Fatalf("lacks %q:\n%s", want, got)
		}
	}
	if _, act, err := RemoveHooks(opts, "gemini", ""); err != nil || act != HookRestored {
		t.Fatalf("remove: %s %v", act, err)
	}
	if got, _ := os.ReadFile(file); string(got) != before {
		t.Fatalf("not restored:\n%s", got)
	}
}
