package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// HistorySource is an agent-history root configured for one repository (ctx history sources add): the
// directory Path (absolute, clean) holds Provider's transcripts in that provider's format; Root names it
// and Group, when set, groups it with others, both for the MCP search filters source_roots and
// source_groups (docs/history.md "Configured roots"). It lives in the repository's local ctx config,
// never on the context branch.
type HistorySource struct {
	Root     string `json:"root"`
	Provider string `json:"provider"`
	Path     string `json:"path"`
	Group    string `json:"group,omitempty"`
}

// sourceName is the shape of a root or group name: 1 to 64 ASCII letters, digits, '-' or '_' (the
// selector names of the MCP search tool, docs/mcp.md).
var sourceName = lazyre.New(`^[A-Za-z0-9_-]{1,64}$`)

// ValidSourceName reports whether name is a valid configured root or group name.
func ValidSourceName(name string) bool { return sourceName.Get().MatchString(name) }

// maxHistorySources bounds the configured roots of one repository.
const maxHistorySources = 256

// CheckHistorySources validates configured roots: names of the shape above and unique, a provider
// named, an absolute clean path of at most 4096 bytes without control characters, and no path
// configured twice for the same provider. Errors wrap ErrInvalid and never repeat a rejected name or path
// (they may be hostile; the caller knows what it gave).
func CheckHistorySources(hs []HistorySource) error {
	if len(hs) > maxHistorySources {
		return invalidf("more than %d configured history sources", maxHistorySources)
	}
	roots := map[string]bool{}
	paths := map[string]bool{}
	for i, h := range hs {
		if !ValidSourceName(h.Root) {
			return invalidf("history source %d: the root name is not 1 to 64 ASCII letters, digits, '-' or '_'", i+1)
		}
		if h.Group != "" && !ValidSourceName(h.Group) {
			return invalidf("history source %s: the group name is not 1 to 64 ASCII letters, digits, '-' or '_'", h.Root)
		}
		if roots[h.Root] {
			return invalidf("history source root %s is configured twice", h.Root)
		}
		roots[h.Root] = true
		if h.Provider == "" || !ValidSourceName(h.Provider) {
			return invalidf("history source %s: no valid provider", h.Root)
		}
		if err := checkSourcePath(h.Path); err != nil {
			return invalidf("history source %s: %v", h.Root, err)
		}
		k := h.Provider + "\x00" + h.Path
		if paths[k] {
			return invalidf("history source %s: the same %s directory is configured twice", h.Root, h.Provider)
		}
		paths[k] = true
	}
	return nil
}

type pathErr string

func (e pathErr) Error() string { return string(e) }

// checkSourcePath accepts an absolute, clean path without control characters (a newline or NUL in a path
// would be another record in any line-oriented output) of at most 4096 bytes, that is not the file
// system root.
func checkSourcePath(p string) error {
	switch {
	case p == "" || len(p) > 4096:
		return pathErr("the path is empty or longer than 4096 bytes")
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return pathErr("the path holds a control character")
	case !filepath.IsAbs(p) || filepath.Clean(p) != p:
		return pathErr("the path is not absolute and clean")
	case filepath.Dir(p) == p:
		return pathErr("the path is the file system root")
	}
	return nil
}

// HistorySources reads the configured agent-history roots from the repository's ctx config as it is on
// disk now (a long-running server sees roots added after it started). A config that does not parse or
// holds invalid roots is an error.
func (s *Store) HistorySources() ([]HistorySource, error) {
	b, err := os.ReadFile(s.configPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ctx config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("ctx config %s: %w", s.configPath(), err)
	}
	if err := CheckHistorySources(c.HistorySources); err != nil {
		return nil, fmt.Errorf("ctx config %s: %w", s.configPath(), err)
	}
	return c.HistorySources, nil
}
