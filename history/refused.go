package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"
)

// Refused sources (docs/limits.md "What the agent history import reads"): a .jsonl.zst refused as a
// decompression bomb is not recorded in sources (it failed), so every import would decompress it again up
// to its bound. Its refusal is remembered instead, under the source's key with its fingerprint (the
// names, sizes and mtimes fingerprintFiles hashes, as an unchanged source is told): while the file keeps
// that fingerprint, an import skips it with the same error, without reading it. A file that changes is
// read again. The refusals are one JSON value of the index's meta table (key "refused"), so the schema
// does not change.

// maxRefused bounds the refusals remembered; beyond it the oldest are forgotten (and read again once).
const maxRefused = 1000

// refusal is one remembered refusal.
type refusal struct {
	Fingerprint string `json:"fingerprint"`
	Err         string `json:"error"`
	At          int64  `json:"at"` // unix milliseconds of the refusal
}

// refusals are the remembered refusals by source key, as an import read them (nil: none).
type refusals map[string]refusal

// refusedNow holds the refusals of the import running (set under the import lock before its sources are
// prepared, read by the parsing goroutines).
type refusedNow = atomic.Pointer[refusals]

// loadRefused reads the remembered refusals; an unreadable value is none (the sources are read again).
func (ix *Index) loadRefused(ctx context.Context) (refusals, error) {
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='refused'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read refused sources: %w", err)
	}
	var out refusals
	if unmarshal([]byte(v), &out) != nil {
		return nil, nil
	}
	return out, nil
}

// startImport starts an import (Import, ImportSource): it takes the import lock, ends a first import
// killed after its last commit (finishFirstImport), then loads the refusals
// and makes them the ones prepareFrom reads. done forgets them and releases the lock.
func (ix *Index) startImport(ctx context.Context) (old refusals, done func(), err error) {
	unlock, err := ix.LockImport(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err = ix.finishFirstImport(ctx); err != nil {
		unlock()
		return nil, nil, err
	}
	if old, err = ix.loadRefused(ctx); err != nil {
		unlock()
		return nil, nil, err
	}
	ix.refused.Store(&old)
	return old, func() {
		ix.refused.Store(nil)
		unlock()
	}, nil
}

// refusedAs returns the remembered refusal of the source key when its fingerprint is still fp.
func (ix *Index) refusedAs(key, fp string) (refusal, bool) {
	m := ix.refused.Load()
	if m == nil {
		return refusal{}, false
	}
	r, ok := (*m)[key]
	return r, ok && r.Fingerprint == fp
}

// saveRefused writes the refusals after an import (under its lock): old as loaded, updated with the
// results: a source refused now (SourceResult.refused) is remembered, any other source of results is
// forgotten (it was read, or it changed and failed otherwise). Nothing is written when nothing changed.
func (ix *Index) saveRefused(ctx context.Context, old refusals, results []SourceResult) error {
	ix.refused.Store(nil)
	if len(old) == 0 && !anyRefused(results) {
		return nil // nothing was or is refused: no key to compute for every source of a refresh
	}
	next := refusals{}
	for k, r := range old {
		next[k] = r
	}
	changed := false
	now := time.Now().UnixMilli()
	for i := range results {
		r := &results[i]
		key := r.Source.key()
		prev, had := next[key]
		switch {
		case r.refused != nil:
			if !had || prev.Fingerprint != r.refused.Fingerprint || prev.Err != r.refused.Err {
				rf := *r.refused
				if rf.At == 0 {
					rf.At = now
				}
				next[key] = rf
				changed = true
			}
		case had:
			delete(next, key)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if len(next) > maxRefused {
		keys := make([]string, 0, len(next))
		for k := range next {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return next[keys[i]].At < next[keys[j]].At })
		for _, k := range keys[:len(next)-maxRefused] {
			delete(next, k)
		}
	}
	var err error
	if len(next) == 0 {
		_, err = ix.db.ExecContext(ctx, `DELETE FROM meta WHERE key='refused'`)
	} else {
		b, _ := json.Marshal(next)
		_, err = ix.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('refused', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, string(b))
	}
	if err != nil {
		return fmt.Errorf("record refused sources: %w", err)
	}
	return nil
}

// anyRefused reports whether a source of results was refused by this import.
func anyRefused(results []SourceResult) bool {
	for i := range results {
		if results[i].refused != nil {
			return true
		}
	}
	return false
}
