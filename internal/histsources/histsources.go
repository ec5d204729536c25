// Package histsources holds the shape and the validation of the agent-history roots configured for a
// repository (ctx history sources add; the "history.sources" key of <git common dir>/ctx/config.json,
// docs/history.md "Configured roots"). It is standard library only, so that the lean front (cmd/ctx-front)
// accepts a config holding configured roots exactly when ctx-full does (docs/architecture.md "The lean
// front"); package store re-exports it.
package histsources

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// Source is an agent-history root configured for one repository: the directory Path (absolute, clean)
// holds Provider's transcripts in that provider's format; Root names it and Group, when set, groups it
// with others, both for the MCP search filters source_roots and source_groups (docs/history.md
// "Configured roots"). It lives in the repository's local ctx config, never on the context branch.
type Source struct {
	Root     string `json:"root"`
	Provider string `json:"provider"`
	Path     string `json:"path"`
	Group    string `json:"group,omitempty"`
}

// Max bounds the configured roots of one repository.
const Max = 256

// Providers are the names of the providers a root may be configured for, as package history names them
// (history.Providers, in its order; docs/history.md "Providers and discovery").
var Providers = []string{"claude-code", "codex", "gemini-cli", "opencode", "cursor", "copilot-cli"}

// ValidName reports whether name has the shape of a root, group or provider name: 1 to 64 ASCII
// letters, digits, '-' or '_' (the selector names of the MCP search tool, docs/mcp.md).
func ValidName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Check validates configured roots: at most Max, names of the shape of ValidName and unique, one of
// Providers, an absolute clean path of at most 4096 bytes without control characters that is not the file
// system root, and no path configured twice for the same provider. Its errors never repeat a rejected
// name or path (they may be hostile; the caller knows what it gave).
func Check(hs []Source) error {
	if len(hs) > Max {
		return fmt.Errorf("more than %d configured history sources", Max)
	}
	roots := make(map[string]bool, len(hs))
	paths := make(map[string]bool, len(hs))
	for i, h := range hs {
		if !ValidName(h.Root) {
			return fmt.Errorf("history source %d: the root name is not 1 to 64 ASCII letters, digits, '-' or '_'", i+1)
		}
		if h.Group != "" && !ValidName(h.Group) {
			return fmt.Errorf("history source %s: the group name is not 1 to 64 ASCII letters, digits, '-' or '_'", h.Root)
		}
		if roots[h.Root] {
			return fmt.Errorf("history source root %s is configured twice", h.Root)
		}
		roots[h.Root] = true
		if !slices.Contains(Providers, h.Provider) {
			return fmt.Errorf("history source %s: the provider is not one of %s", h.Root, strings.Join(Providers, ", "))
		}
		if msg := checkPath(h.Path); msg != "" {
			return fmt.Errorf("history source %s: %s", h.Root, msg)
		}
		k := h.Provider + "\x00" + h.Path
		if paths[k] {
			return fmt.Errorf("history source %s: the same %s directory is configured twice", h.Root, h.Provider)
		}
		paths[k] = true
	}
	return nil
}

// checkPath accepts an absolute, clean path without control characters (a newline or NUL in a path
// would be another record in any line-oriented output) of at most 4096 bytes, that is not the file
// system root; otherwise it says why.
func checkPath(p string) string {
	switch {
	case p == "" || len(p) > 4096:
		return "the path is empty or longer than 4096 bytes"
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return "the path holds a control character"
	case !filepath.IsAbs(p) || filepath.Clean(p) != p:
		return "the path is not absolute and clean"
	case filepath.Dir(p) == p:
		return "the path is the file system root"
	}
	return ""
}
