package history

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DiscoveryError is a root whose walk failed in the last import that walked it (a bound hit, an unreadable
// directory): its sources, new or grown, were not imported (docs/history.md "Discovery").
type DiscoveryError struct {
	Provider Provider `json:"provider"`
	Root     string   `json:"root"`
	Error    string   `json:"error"`
}

// discoveryKey is the meta row that keeps the discovery errors (a JSON array of DiscoveryError).
const discoveryKey = "discovery_errors"

// DiscoveryErrors returns the discovery errors the imports recorded (RecordDiscovery), in root order;
// none when the index has none or cannot be read.
func (ix *Index) DiscoveryErrors(ctx context.Context) []DiscoveryError {
	var v string
	if err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key=?`, discoveryKey).Scan(&v); err != nil {
		return nil
	}
	var out []DiscoveryError
	if unmarshal([]byte(v), &out) != nil {
		return nil
	}
	return out
}

// RecordDiscovery replaces the recorded discovery errors of the roots an import walked (walked, those
// that succeeded, and failed) with failed; the others' stay, unless every is set: the import walked every
// root the index is kept for (no --provider, this repository's index), and the errors of roots it did not
// walk (a configured root since removed, a root gone) are forgotten with them, as the directory cache's
// listings are (DirCache.ForgetOtherRoots; a removed root's discovery_failed stayed in
// sources for ever). It writes only when the list changes, so a refresh with nothing new writes nothing.
func (ix *Index) RecordDiscovery(ctx context.Context, walked []string, failed []DiscoveryError, every bool) error {
	old := ix.DiscoveryErrors(ctx)
	var next []DiscoveryError
	for _, d := range old {
		if every || slices.Contains(walked, d.Root) || slices.ContainsFunc(failed, func(f DiscoveryError) bool { return f.Root == d.Root }) {
			continue
		}
		next = append(next, d)
	}
	next = append(next, failed...)
	slices.SortFunc(next, func(a, b DiscoveryError) int {
		if c := strings.Compare(a.Root, b.Root); c != 0 {
			return c
		}
		return strings.Compare(string(a.Provider), string(b.Provider))
	})
	if slices.Equal(old, next) {
		return nil
	}
	var err error
	if len(next) == 0 {
		_, err = ix.db.ExecContext(ctx, `DELETE FROM meta WHERE key=?`, discoveryKey)
	} else {
		b, _ := json.Marshal(next)
		_, err = ix.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`,
			discoveryKey, string(b))
	}
	if err != nil {
		return fmt.Errorf("record discovery errors: %w", err)
	}
	return nil
}
