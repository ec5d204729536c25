package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ctx-dev/ctx/internal/histsources"
)

// HistorySource is an agent-history root configured for one repository (ctx history sources add): the
// directory Path (absolute, clean) holds Provider's transcripts in that provider's format; Root names it
// and Group, when set, groups it with others, both for the MCP search filters source_roots and
// source_groups (docs/history.md "Configured roots"). It lives in the repository's local ctx config,
// never on the context branch. The lean front reads it too (internal/histsources).
type HistorySource = histsources.Source

// ValidSourceName reports whether name is a valid configured root or group name: 1 to 64 ASCII letters,
// digits, '-' or '_' (the selector names of the MCP search tool, docs/mcp.md).
func ValidSourceName(name string) bool { return histsources.ValidName(name) }

// CheckHistorySources validates configured roots (histsources.Check: names of the shape above and
// unique, a provider named, an absolute clean path of at most 4096 bytes without control characters, and
// no path configured twice for the same provider). Errors wrap ErrInvalid and never repeat a rejected name
// or path (they may be hostile; the caller knows what it gave).
func CheckHistorySources(hs []HistorySource) error {
	if err := histsources.Check(hs); err != nil {
		return invalidf("%v", err)
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
		return nil, fmt.Errorf("ctx config %s: %w", s.configPath(), historySourcesType(err))
	}
	if err := CheckHistorySources(c.HistorySources); err != nil {
		return nil, fmt.Errorf("ctx config %s: %w", s.configPath(), err)
	}
	return c.HistorySources, nil
}

// historySourcesType returns err, the decoding error of a ctx config, as an invalid-input error (ErrInvalid)
// when "history.sources" or one of its fields has the wrong JSON type (an object, a number): the invalid
// configured roots of docs/history.md "Configured roots", which every reader refuses with exit 2.
func historySourcesType(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && (te.Field == "history.sources" || strings.HasPrefix(te.Field, "history.sources.")) {
		return invalidf("history.sources is not a list of {root, provider, path, group} strings: %v", err)
	}
	return err
}
