package importer

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidKey(t *testing.T) {
	tests := []struct {
		key  string
		ok   bool
		want string // part of the error text
	}{
		{"../x", false, "starts with '.'"},
		{"a/../b", false, `".."`},
		{"a/b", false, "'/'"},
		{`a\b`, false, `'\\'`},
		{"", false, "empty"},
		{"a\x00b", false, "NUL"},
		{"a\tb", false, "control character"},
		{"a b", false, "space"},
		{strings.Repeat("a", 129), false, "129 bytes"},
		{".hidden", false, "starts with '.'"},
		{"-x", false, "starts with '-'"},
		{"x.", false, "ends with '.'"},
		{"a..b", false, `".."`},
		{"ABC", false, "upper-case letter 'A'"},
		{"aBc", false, "upper-case letter 'B'"},
		{"a+b", false, "'+'"},
		{"a:b", false, "':'"},
		{"\xff", false, "UTF-8"},
		{"\u0301a", false, "combining mark"},
		{"架构", true, ""},
		{"ünïcode", true, ""},
		{"a.b_c-d", true, ""},
		{"x", true, ""},
		{"_x", true, ""},
		{"x-", true, ""},
		{"x_", true, ""},
		{"0001", true, ""},
		{"trigger.dev", true, ""},
		{"हिन्दी", true, ""}, // Devanagari vowel signs are combining marks
		{"e\u0301", false, "normal form C"},
		{"\u00e9t\u00e9", true, ""},
		{"nul", false, "reserved"},
		{"con.md", false, "reserved"},
		{strings.Repeat("a", 128), true, ""},
		{strings.Repeat("é", 64), true, ""},
	}
	for _, tt := range tests {
		err := ValidKey(tt.key)
		if tt.ok {
			if err != nil {
				t.Errorf("ValidKey(%q) = %v, want nil", tt.key, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ValidKey(%q) = nil, want an error", tt.key)
			continue
		}
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidKey(%q) = %v, does not wrap ErrInvalidKey", tt.key, err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ValidKey(%q) = %q, want it to mention %q", tt.key, err, tt.want)
		}
	}
}

func TestDeriveKey(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		changed bool
	}{
		{"notes.md", "notes", false},
		{"notes", "notes", false},
		{"CLAUDE.md", "claude", true},
		{"AGENTS.md", "agents", true},
		{".cursorrules", "cursorrules", true},
		{"apps/webapp/CLAUDE.md", "apps-webapp-claude", true},
		{".github/copilot-instructions.md", "github-copilot-instructions", true},
		{".cursor/rules/writing-tasks.mdc", "cursor-rules-writing-tasks", true},
		{"style guide.md", "style-guide", true},
		{"When Stuck - Problem-Solving Dispatch", "when-stuck-problem-solving-dispatch", true},
		{"restic-CONTRIBUTING.md", "restic-contributing", true},
		{"google-styleguide-guide.md", "google-styleguide-guide", false},
		{"架构.md", "架构", false},
		{"Ünïcode Notes.md", "ünïcode-notes", true},
		{"a..b.md", "a.b", true},
		{"a+b=c.md", "abc", true},
		{"-x-.md", "x", true},
		{"trigger.dev", "trigger.dev", false}, // not a document extension: kept
		{"README.MD", "readme", true},
		{"a\x00b", "ab", true},
		{"a\\b", "a-b", true},
	}
	for _, tt := range tests {
		key, changed := DeriveKey(tt.name)
		if key != tt.key || changed != tt.changed {
			t.Errorf("DeriveKey(%q) = %q, %v; want %q, %v", tt.name, key, changed, tt.key, tt.changed)
		}
		if err := ValidKey(key); err != nil {
			t.Errorf("DeriveKey(%q) = %q, which is invalid: %v", tt.name, key, err)
		}
	}

	// Nothing usable: a stable hash key.
	k1, c1 := DeriveKey("???.md")
	k2, _ := DeriveKey("???.md")
	k3, _ := DeriveKey("!!!.md")
	if !c1 || k1 != k2 || k1 == k3 || !strings.HasPrefix(k1, "key-") || ValidKey(k1) != nil {
		t.Errorf("DeriveKey of unusable names: %q %q %q", k1, k2, k3)
	}

	// Long names are cut to 128 bytes on a character boundary.
	long, changed := DeriveKey(strings.Repeat("架", 60) + ".md") // 180 bytes
	if !changed || len(long) > MaxKeyBytes || !utf8.ValidString(long) || ValidKey(long) != nil {
		t.Errorf("DeriveKey(long) = %q (%d bytes), changed %v", long, len(long), changed)
	}
	if long, _ := DeriveKey(strings.Repeat("a", 127) + ".b"); ValidKey(long) != nil {
		t.Errorf("DeriveKey cut at a dot: %q: %v", long, ValidKey(long))
	}
}

func FuzzDeriveKey(f *testing.F) {
	for _, s := range []string{"CLAUDE.md", "apps/webapp/CLAUDE.md", "..", "\u0301x", strings.Repeat("é", 100), ".-.-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		key, _ := DeriveKey(name)
		if err := ValidKey(key); err != nil {
			t.Fatalf("DeriveKey(%q) = %q: %v", name, key, err)
		}
	})
}
