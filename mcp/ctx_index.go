package mcp

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/mcp/storesearch"
	"github.com/ctx-dev/ctx/store"
)

// The search's copy of the context store (docs/mcp.md "search", docs/history.md "The store's search
// copy"): the documents the search ranks for provider ctx — the entries of every searched kind and the
// newest ctxSearchCommits commits — kept in a small SQLite file beside the agent history index
// (ctxIndexFile in history.DefaultDir: inside the git common dir, never pushed), keyed by the context
// refs' tips. A search reads the refs, compares their fingerprint with the one the copy was made at, and
// reads the documents from the file instead of reading every entry's blob and 200 commits. When the refs
// moved (a set, a pull, `ctx knowledge rm`, another clone's push fetched), the first search updates the
// copy in one transaction: the knowledge entries and conventions whose files changed between the old and
// the new tips' trees (store.ChangedPaths) are read again, the other kinds (decisions, skills, session
// summaries: small) are read again when any of their files changed, and the commits are read again.
// Any failure of the copy (no writable directory, a file another ctx made newer) falls back to reading
// the store as before: the copy is a cache, never the truth.

// The copy's file, version, schema and class of commits, and its read side: package storesearch's.
const (
	ctxIndexFile    = storesearch.File
	ctxIndexVersion = storesearch.Version
	ctxIndexSchema  = storesearch.Schema
	ctxClassCommit  = storesearch.ClassCommit
)

// ctxIndexDisabled makes every search read the store directly (the tests' reference).
var ctxIndexDisabled bool

// ctxIndexStats counts what the copy did (tests): searches served from it, full builds, updates.
var ctxIndexStats struct{ served, built, updated, fallback atomic.Int64 }

// ctxIndex is a server's open copy.
type ctxIndex struct {
	semOnce sync.Once
	sem     chan struct{} // held while the copy is used or updated (lock, unlock)
	db      *sql.DB
	failed  bool // opening failed: the store is read directly
	// the documents last read and the tips' fingerprint they are of (a server's next search with the
	// refs unmoved reads no row)
	fp   string
	docs []ctxDoc
}

func (c *ctxIndex) close() {
	_ = c.lock(context.Background())
	defer c.unlock()
	if c.db != nil {
		_ = c.db.Close()
		c.db = nil
	}
	c.failed = false
	c.fp, c.docs = "", nil
}

// open opens (creating when missing) the copy in dir.
func (c *ctxIndex) open(ctx context.Context, dir string) (*sql.DB, error) {
	if c.db != nil || c.failed {
		if c.failed {
			return nil, errors.New("store search copy: unavailable")
		}
		return c.db, nil
	}
	db, err := openCtxIndex(ctx, dir)
	if err != nil {
		c.failed = true
		return nil, err
	}
	c.db = db
	return db, nil
}

func openCtxIndex(ctx context.Context, dir string) (*sql.DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	path := filepath.Join(dir, ctxIndexFile)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store search copy: %s is not a regular file", path)
	}
	// The entries' text, private ones included: readable by the user only (as the history index).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	f.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	db.SetMaxOpenConns(1)
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	if v == ctxIndexVersion {
		return db, nil
	}
	if v > ctxIndexVersion {
		db.Close()
		return nil, fmt.Errorf("store search copy: made by a newer ctx (version %d)", v)
	}
	// Persistent: set once. WAL lets searches read while another process updates the copy.
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode=WAL`); err != nil {
		db.Close()
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS bodies; DROP TABLE IF EXISTS terms;`+ctxIndexSchema+
		fmt.Sprintf(`PRAGMA user_version = %d`, ctxIndexVersion)); err != nil {
		db.Close()
		return nil, fmt.Errorf("store search copy: create: %w", err)
	}
	if v != 0 {
		// An older copy's pages are free now (version 2 held every entry's text: 144 MB for 25 entries of
		// 4 MB): give them back.
		if _, err := db.ExecContext(ctx, `VACUUM`); err != nil {
			db.Close()
			return nil, fmt.Errorf("store search copy: vacuum: %w", err)
		}
	}
	return db, nil
}

// ctxDocs returns the context store's documents the search ranks: the entries (withEntries) and the
// newest commits (withCommits; with their changed paths when withPaths), entries first in searchKinds
// order and by file name, then commits newest first — from the copy when it can serve, else read from
// the store.
//
// Documents from the copy carry their counts of terms (the query's words) and their number of words, not
// their text, and load their body (for the snippet) on demand; documents read from the store carry their
// text, of at most maxSearchText bytes.
func (s *srv) ctxDocs(ctx context.Context, terms []string, withEntries, withCommits, withPaths bool) ([]ctxDoc, error) {
	if !withEntries && !withCommits {
		return nil, nil
	}
	// A public-only caller (HTTP token holder) sees the public scope only: not what the copy holds.
	if !ctxIndexDisabled && !store.PublicOnly(ctx) && (withEntries || !withPaths) {
		docs, err := s.cachedCtxDocs(ctx, terms)
		if err == nil {
			ctxIndexStats.served.Add(1)
			out := docs[:0]
			for _, d := range docs {
				if (d.Commit && withCommits && !withPaths) || (!d.Commit && withEntries) {
					out = append(out, d)
				}
			}
			if withCommits && withPaths {
				cs, err := s.liveCommitDocs(ctx, true)
				if err != nil {
					return nil, err
				}
				out = append(out, cs...)
			}
			return out, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ctxIndexStats.fallback.Add(1)
	}
	var docs []ctxDoc
	if withEntries {
		v, err := s.view(ctx)
		if err != nil {
			return nil, err
		}
		es, err := entryDocs(ctx, v, nil)
		if err != nil {
			return nil, err
		}
		docs = es
	}
	if withCommits {
		cs, err := s.liveCommitDocs(ctx, withPaths)
		if err != nil {
			return nil, err
		}
		docs = append(docs, cs...)
	}
	return docs, nil
}

// entryDocs reads the entries of every searched kind from v (keep as for searchDocs).
func entryDocs(ctx context.Context, v *store.View, keep func(kind, key string) bool) ([]ctxDoc, error) {
	kinds := map[string]bool{}
	for _, k := range searchKinds {
		kinds[k] = true
	}
	ds, err := searchDocs(ctx, v, kinds, keep)
	if err != nil {
		return nil, err
	}
	docs := make([]ctxDoc, 0, len(ds))
	for _, d := range ds {
		p := strings.TrimPrefix(d.uri, scheme)
		if d.kind == "knowledge" || d.kind == "convention" {
			p += ".md"
		}
		r := searchResult{Provider: ctxProvider, EventType: string(history.Message), Kind: d.kind, Key: d.key,
			Title: d.title, URI: d.uri}
		if d.kind == "session" {
			r.CtxSessionID = ctxIDPrefix + d.key // show_session lists its commits
		}
		docs = append(docs, ctxDoc{Res: r, Text: boundText(d.title + "\n" + d.key + "\n" + d.body), Body: boundText(d.body),
			Weight: 1.0, Paths: []string{p}})
	}
	return docs, nil
}

// liveCommitDocs reads the newest ctxSearchCommits commits across the scopes' refs (with the paths each
// changed when withPaths).
func (s *srv) liveCommitDocs(ctx context.Context, withPaths bool) ([]ctxDoc, error) {
	st := s.store(ctx)
	tips, _, err := st.HistoryTips(ctx)
	if err != nil {
		return nil, err
	}
	all, err := st.HistoryRecent(ctx, tips, ctxSearchCommits)
	if err != nil {
		return nil, err
	}
	docs := make([]ctxDoc, 0, len(all))
	for i := range all {
		e := &all[i]
		d := commitDoc(e.Commit, e.Key, e.Summary, e.Op, e.Agent, e.Session, e.When())
		if withPaths {
			if d.Paths, err = st.EventPaths(ctx, e); err != nil {
				return nil, err
			}
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// commitDoc is the search's document of a commit.
func commitDoc(commit, key, summary, op, agent, session string, when time.Time) ctxDoc {
	return storesearch.CommitDoc(commit, key, summary, op, agent, session, when)
}

// cachedCtxDocs reads the documents from the copy, updating it first when the refs moved: their rows
// (kept in memory while the refs do not move) and the counts of terms in each (read per search: the rows
// of terms only).
func (s *srv) cachedCtxDocs(ctx context.Context, terms []string) ([]ctxDoc, error) {
	tips, fp, err := s.st.HistoryTips(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.ctxIx.lock(ctx); err != nil {
		return nil, err
	}
	unlock := s.ctxIx.unlock
	defer func() { unlock() }()
	db, err := s.ctxIx.open(ctx, s.historyDir())
	if err != nil {
		return nil, err
	}
	if s.ctxIx.docs == nil || s.ctxIx.fp != fp {
		have, err := storesearch.ReadFP(ctx, db)
		if err != nil {
			return nil, err
		}
		if have != fp {
			want := map[store.Scope]string{}
			for sc, h := range tips {
				if !h.IsZero() {
					want[sc] = h.String()
				}
			}
			// The update is not cut short by a tool call's own deadline (toolCallTimeout), only by the
			// caller going away: a first build of a large store that takes longer than one call is finished
			// for the next call rather than rolled back on every call. Past the deadline, this call answers
			// and the update goes on, holding the copy's lock until it ends.
			uctx, stop := untimed(ctx)
			done := make(chan error, 1)
			go func() { defer stop(); done <- s.updateCtxIndex(uctx, db, fp, want) }()
			select {
			case err := <-done:
				if err != nil {
					return nil, err
				}
			case <-ctx.Done():
				unlock = func() {}
				go func() {
					if err := <-done; err != nil {
						s.log.Printf("search: the store's search copy was not updated: %v (the next search retries)", err)
					}
					s.ctxIx.unlock()
				}()
				return nil, ctx.Err()
			}
		}
		docs, err := storesearch.ReadDocs(ctx, db)
		if err != nil {
			return nil, err
		}
		s.ctxIx.fp, s.ctxIx.docs = fp, docs
	}
	tfs, err := storesearch.ReadTerms(ctx, db, terms)
	if err != nil {
		return nil, err
	}
	return storesearch.WithTerms(s.ctxIx.docs, tfs, db), nil
}

// updateCtxIndex brings the copy to the tips want (fingerprint fp) in one transaction: only what changed
// since the tips it was made at, or everything when those are unknown or unreadable.
func (s *srv) updateCtxIndex(ctx context.Context, db *sql.DB, fp string, want map[store.Scope]string) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): one updater at a time
	if err != nil {
		return fmt.Errorf("store search copy: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	var have, oldJSON string
	_ = tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='fp'`).Scan(&have)
	if have == fp { // another process updated it meanwhile
		return tx.Commit()
	}
	_ = tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='tips'`).Scan(&oldJSON)
	v, err := s.st.RefView(ctx)
	if err != nil {
		return fmt.Errorf("store search copy: %w", err)
	}
	v = v.WithMaxRead(maxFileRead)
	full := true
	var changedKeys map[string]map[string]bool // kind -> keys of knowledge and conventions
	others := false                            // a file of another kind changed
	var old map[store.Scope]string
	if oldJSON != "" && json.Unmarshal([]byte(oldJSON), &old) == nil && have != "" {
		if paths, err := s.st.ChangedPaths(ctx, old, want); err == nil {
			full = false
			changedKeys = map[string]map[string]bool{}
			for _, p := range paths {
				dir, name, _ := strings.Cut(p, "/")
				key, isMD := strings.CutSuffix(name, ".md")
				kind := map[string]string{store.KnowledgeKind.Dir: "knowledge", store.ConventionKind.Dir: "convention"}[dir]
				if kind != "" && isMD && !strings.Contains(name, "/") {
					if changedKeys[kind] == nil {
						changedKeys[kind] = map[string]bool{}
					}
					changedKeys[kind][key] = true
				} else if kind == "" {
					others = true
				}
			}
		}
	}
	ins, err := newCtxInserter(ctx, tx)
	if err != nil {
		return err
	}
	defer ins.close()
	cls := map[string]int{}
	for i, k := range searchKinds {
		cls[k] = i
	}
	var docs []ctxDoc
	switch {
	case full:
		if _, err := tx.ExecContext(ctx, `DELETE FROM docs; DELETE FROM bodies; DELETE FROM terms;`); err != nil {
			return fmt.Errorf("store search copy: %w", err)
		}
		if docs, err = entryDocs(ctx, v, nil); err != nil {
			return err
		}
		ctxIndexStats.built.Add(1)
	default:
		// The knowledge entries and conventions whose files changed; every decision, skill and session
		// summary when one of theirs did (store.View reads those whole).
		for kind, keys := range changedKeys {
			for key := range keys {
				if err := deleteCtxDocs(ctx, tx, `id = ?`, "e:"+kind+"/"+key); err != nil {
					return err
				}
			}
		}
		if others {
			if err := deleteCtxDocs(ctx, tx, `cls IN (?, ?, ?)`, cls["decision"], cls["skill"], cls["session"]); err != nil {
				return err
			}
		}
		if len(changedKeys) > 0 || others {
			keep := func(kind, key string) bool { return changedKeys[kind][key] }
			if docs, err = entryDocs(ctx, v, keep); err != nil {
				return err
			}
			if !others {
				kept := docs[:0]
				for _, d := range docs {
					if d.Res.Kind == "knowledge" || d.Res.Kind == "convention" {
						kept = append(kept, d)
					}
				}
				docs = kept
			}
		}
		ctxIndexStats.updated.Add(1)
	}
	for i, d := range docs {
		name, ord := "", i
		if d.Res.Kind == "knowledge" || d.Res.Kind == "convention" {
			name, ord = d.Res.Key+".md", 0
		}
		sess := strings.TrimPrefix(d.Res.CtxSessionID, ctxIDPrefix)
		if err := ins.add(ctx, "e:"+d.Res.Kind+"/"+d.Res.Key, cls[d.Res.Kind], name, ord, d.Res.Kind, d.Res.Key,
			d.Res.Title, d.Res.URI, sess, "", "", d.Text, d.Body, d.Paths[0]); err != nil {
			return err
		}
	}
	// The commits: the newest ctxSearchCommits again (bounded, whatever moved).
	if err := deleteCtxDocs(ctx, tx, `cls = ?`, ctxClassCommit); err != nil {
		return err
	}
	cs, err := s.liveCommitDocs(ctx, false)
	if err != nil {
		return err
	}
	for i, d := range cs {
		commit := strings.TrimPrefix(d.Res.CtxEventID, ctxIDPrefix)
		if err := ins.add(ctx, "c:"+commit, ctxClassCommit, "", i, "commit", d.Res.Key, d.Res.Title, "",
			d.Session, commit, d.Res.At, d.Text, d.Body, ""); err != nil {
			return err
		}
	}
	// The refs may have moved while this read them: then what was read is of no single state.
	if _, fp2, err := s.st.HistoryTips(ctx); err != nil || fp2 != fp {
		return fmt.Errorf("store search copy: the context refs moved during the update")
	}
	tj, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("store search copy: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('fp', ?), ('tips', ?)`, fp, string(tj)); err != nil {
		return fmt.Errorf("store search copy: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store search copy: %w", err)
	}
	return nil
}
