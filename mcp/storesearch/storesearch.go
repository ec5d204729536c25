// Package storesearch is the context store's part of the search (provider ctx: docs/mcp.md "search",
// docs/history.md "The store's search copy") without the MCP library, go-git or the store: the
// documents the search ranks (entries and commits), the read side of the store's search copy
// (store-search.db: its rows, the counts of the query's words, the bodies of the hits), the BM25
// ranking with snippets, and the merge with the index's hits. Package mcp's search tool and ctx-search,
// the program that answers `ctx search` without the full CLI (docs/architecture.md "The search
// program"), both rank here, so the two print the same bytes. Package mcp writes the copy (ctx_index.go)
// with this package's schema and words. It imports mcp/searchpage, the SQLite driver and the standard
// library only.
package storesearch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/mcp/searchpage"
	_ "modernc.org/sqlite" // the copy's SQLite engine (the history index's)
)

// Provider is the provider of the context store's results; IDPrefix prefixes its commit and session ids.
const (
	Provider = "ctx"
	IDPrefix = "ctx:"
)

// Kinds is the order of kinds in search results of equal rank (and the copy's cls of each entry).
var Kinds = []string{"knowledge", "convention", "decision", "skill", "session"}

// File is the copy's file name in the agent history index's directory.
const File = "store-search.db"

// Version is the copy's PRAGMA user_version. A file of another version is rebuilt (an older one) or left
// alone, the store read directly (a newer one).
const Version = 3

// Schema is the copy's tables (version 3).
const Schema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
	cls INTEGER NOT NULL, name TEXT NOT NULL, ord INTEGER NOT NULL, id TEXT NOT NULL UNIQUE,
	kind TEXT NOT NULL, key TEXT NOT NULL, title TEXT NOT NULL, uri TEXT NOT NULL, sess TEXT NOT NULL,
	event TEXT NOT NULL, at TEXT NOT NULL, path TEXT NOT NULL, nw INTEGER NOT NULL,
	PRIMARY KEY (cls, name, ord)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bodies(id TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS terms(term TEXT NOT NULL, id TEXT NOT NULL, tf INTEGER NOT NULL,
	PRIMARY KEY (term, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS terms_by_id ON terms(id);
`

// The docs rows are small (no text: a search reads them all, in the search's order cls, name, ord, in
// one pass of the table); id (e:<kind>/<key>, c:<commit>) names a row for an update. terms holds each
// document's words (Words, of at most MaxText bytes of its text) with their counts: a search reads the
// rows of its query's words only, and the bodies (for the snippets) of its hits only.

// ClassCommit is the cls of a commit; entries have their kind's position in Kinds.
const ClassCommit = 5

// MaxText bounds what the search reads of one entry of the context store (docs/mcp.md "search",
// docs/limits.md): the first 64 KiB of its title, key and body are tokenised and ranked, and its snippet
// is cut from the first 64 KiB of its body. A word further in a larger entry is not found by search
// (`ctx knowledge get KEY | grep WORD` finds it). Tokenising a 4 MB entry cost about 0.6 s of CPU, and a
// base64 blob's camelCase fragments matched common words.
const MaxText = 64 << 10

// BoundText returns the first MaxText bytes of s, cut at a rune's start.
func BoundText(s string) string {
	if len(s) <= MaxText {
		return s
	}
	end := MaxText
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end]
}

// Doc is an entry or a commit of the context store as the search sees it.
type Doc struct {
	Res    searchpage.Result
	Text   string // what is searched
	Body   string // what the snippet is cut from
	Weight float64
	Paths  []string
	// of a commit: its time and Ctx-Session (the since, until and ctx_session_id filters)
	Commit  bool
	When    time.Time
	Session string
	// of a document of the store's search copy: its id, number of words, the counts of the query's words
	// in it (Text is empty), and the copy its body is loaded from (Body is empty)
	ID string
	NW int
	TF map[string]int
	DB *sql.DB
}

// CommitDoc is the search's document of a commit.
func CommitDoc(commit, key, summary, op, agent, session string, when time.Time) Doc {
	r := searchpage.Result{Provider: Provider, CtxEventID: IDPrefix + commit, EventType: "summary",
		Kind: "commit", Key: key, At: when.UTC().Format(searchpage.AtFormat), Title: summary}
	if session != "" {
		r.CtxSessionID = IDPrefix + session
	}
	return Doc{Res: r, Text: strings.Join([]string{summary, op, key, agent}, "\n"), Body: summary, Weight: 0.9,
		Commit: true, When: when, Session: session}
}

// Words splits text into lower-case tokens of letters and digits (with the parts of camelCase words),
// the way the index tokenises (docs/history.md "Search").
func Words(text string) []string {
	var out []string
	f := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range f {
		out = append(out, strings.ToLower(w))
		start := 0
		rs := []rune(w)
		for i := 1; i < len(rs); i++ {
			if unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1]) {
				out = append(out, strings.ToLower(string(rs[start:i])))
				start = i
			}
		}
		if start > 0 {
			out = append(out, strings.ToLower(string(rs[start:])))
		}
	}
	return out
}

// Terms is the query's words a search ranks by: Words, without a word repeating the one before it.
func Terms(query string) []string {
	ws := Words(query)
	out := ws[:0]
	for i, x := range ws {
		if i == 0 || x != ws[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// Rank ranks docs for query (terms: Terms(query)) with BM25 (k1 1.2, b 0.75) times each document's
// weight: the documents with every term, else (more than one term, none had all) those with any; each
// hit gets its score (searchpage.Round), its snippet (its body loaded from the copy when it is a copy's
// document) and Rep. Hits come best first, ties in docs' order. The error is the copy's or ctx's.
func Rank(ctx context.Context, docs []Doc, query string, terms []string) ([]searchpage.Result, error) {
	return rank(ctx, docs, -1, 0, query, terms, -1)
}

// rank is Rank over docs, which are all the documents (count < 0) or, when count >= 0, those of count
// documents whose words total words that hold one of terms (the others cannot be hits, and a BM25 score
// needs only their number and their length), each with its TF. Only the first snippets hits (in the
// returned order; every hit when snippets < 0) get their snippet, and only their bodies are loaded.
func rank(ctx context.Context, docs []Doc, count, words int, query string, terms []string, snippets int) ([]searchpage.Result, error) {
	if len(docs) == 0 || len(terms) == 0 {
		return nil, nil
	}
	toks := make([]map[string]int, len(docs))
	lens := make([]int, len(docs))
	total := 0
	df := map[string]int{}
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d.TF != nil { // counted when the copy was made
			toks[i], lens[i] = d.TF, d.NW
		} else {
			toks[i] = map[string]int{}
			ws := Words(BoundText(d.Text))
			lens[i] = len(ws)
			for _, w := range ws {
				toks[i][w]++
			}
		}
		total += lens[i]
		for _, t := range terms {
			if toks[i][t] > 0 {
				df[t]++
			}
		}
	}
	nd := len(docs)
	if count >= 0 {
		nd, total = count, words
	}
	avg := float64(total) / float64(nd)
	n := float64(nd)
	score := func(i int, all bool) (float64, bool) {
		sc := 0.0
		for _, t := range terms {
			tf := float64(toks[i][t])
			if tf == 0 {
				if all {
					return 0, false
				}
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			sc += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(lens[i])/avg))
		}
		return sc, sc > 0
	}
	var out []searchpage.Result
	var of []*Doc // the document of each hit in out
	for _, all := range []bool{true, false} {
		for i := range docs {
			d := &docs[i]
			sc, ok := score(i, all)
			if !ok {
				continue
			}
			r := d.Res
			r.Score = searchpage.Round(sc * d.Weight)
			r.Rep = true
			out = append(out, r)
			of = append(of, d)
		}
		if len(out) > 0 || len(terms) == 1 {
			break
		}
	}
	// The snippets after the order (which they do not change): a hit past the page the caller prints
	// never loads its body (a common word's holders are most of the copy's documents).
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return out[idx[i]].Score > out[idx[j]].Score })
	shown := len(idx)
	if snippets >= 0 {
		shown = min(shown, snippets)
	}
	ds := make([]*Doc, shown)
	for k := range shown {
		ds[k] = of[idx[k]]
	}
	bodies, err := loadBodies(ctx, ds)
	if err != nil {
		return nil, err
	}
	sorted := make([]searchpage.Result, len(out))
	for k, i := range idx {
		sorted[k] = out[i]
		if k < shown {
			sorted[k].Snippet = Snippet(bodies[k], strings.ToLower(bodies[k]), strings.ToLower(query), terms)
		}
	}
	if out == nil {
		return nil, nil
	}
	return sorted, nil
}

// MergeHits merges the context store's hits (each its own group) into the index's: the groups'
// representatives first, by score, then the other hits in their order.
func MergeHits(ix, ctxHits []searchpage.Result) []searchpage.Result {
	var reps, rest []searchpage.Result
	for _, h := range ix {
		if h.Rep {
			reps = append(reps, h)
		} else {
			rest = append(rest, h)
		}
	}
	reps = append(reps, ctxHits...)
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].Score > reps[j].Score })
	return append(reps, rest...)
}

// Snippet is about 200 bytes of the body around the first hit of the phrase (else of a term), on rune
// boundaries, with whitespace collapsed. lower is the body lower-cased (the same length for ASCII; for
// other text the offset is only used when it is a rune boundary of the original).
func Snippet(orig, lower, q string, terms []string) string {
	at := strings.Index(lower, q)
	for _, t := range terms {
		if at >= 0 {
			break
		}
		at = strings.Index(lower, t)
	}
	if at < 0 || len(lower) != len(orig) {
		at = 0
	}
	start, end := max(0, at-60), min(len(orig), at+140)
	for start > 0 && !utf8.RuneStart(orig[start]) {
		start--
	}
	for end < len(orig) && !utf8.RuneStart(orig[end]) {
		end++
	}
	out := strings.Join(strings.Fields(orig[start:end]), " ")
	if start > 0 {
		out = "…" + out
	}
	if end < len(orig) {
		out += "…"
	}
	return out
}

// --- the copy's read side ---

// OpenRead opens the copy in dir for reading only, as ctx-search reads it: the file must exist, be a
// regular file, be SQLite and be of Version (anything else is an error: the caller leaves the search to
// ctx-full, which builds, rebuilds or leaves the copy alone). It creates nothing of its own; SQLite may
// open the write-ahead log's shared-memory file beside it, as any reader of the copy does.
func OpenRead(ctx context.Context, dir string) (*sql.DB, error) {
	path := filepath.Join(dir, File)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store search copy: %s is not a regular file", path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	db.SetMaxOpenConns(1)
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	if v != Version {
		db.Close()
		return nil, fmt.Errorf("store search copy: version %d, not %d", v, Version)
	}
	return db, nil
}

// ReadFP returns the fingerprint of the context refs' tips the copy was made at (meta.fp), "" when it
// has none yet.
func ReadFP(ctx context.Context, db *sql.DB) (string, error) {
	var fp string
	err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='fp'`).Scan(&fp)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store search copy: %w", err)
	}
	return fp, nil
}

// ReadDocs reads every document's row of the copy in the search's order (no text: small rows); an empty
// copy is an empty, non-nil list.
func ReadDocs(ctx context.Context, db *sql.DB) ([]Doc, error) {
	return readDocs(ctx, db, "", nil)
}

// readDocs is ReadDocs of the rows that pass where (an SQL condition with args; "" for every row).
func readDocs(ctx context.Context, db *sql.DB, where string, args []any) ([]Doc, error) {
	q := `SELECT cls, id, kind, key, title, uri, sess, event, at, path, nw FROM docs`
	if where != "" {
		q += ` WHERE ` + where
	}
	rows, err := db.QueryContext(ctx, q+` ORDER BY cls, name, ord`, args...)
	if err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	defer rows.Close()
	var docs []Doc
	for rows.Next() {
		var cls, nw int
		var id, kind, key, title, uri, sess, event, at, path string
		if err := rows.Scan(&cls, &id, &kind, &key, &title, &uri, &sess, &event, &at, &path, &nw); err != nil {
			return nil, fmt.Errorf("store search copy: %w", err)
		}
		DocsRead.Add(1)
		if cls == ClassCommit {
			when, err := time.Parse(time.RFC3339, at)
			if err != nil {
				return nil, fmt.Errorf("store search copy: commit %s: %w", event, err)
			}
			d := CommitDoc(event, key, title, "", "", sess, when)
			d.Text, d.ID, d.NW = "", id, nw
			docs = append(docs, d)
			continue
		}
		r := searchpage.Result{Provider: Provider, EventType: "message", Kind: kind, Key: key, Title: title, URI: uri}
		if sess != "" {
			r.CtxSessionID = IDPrefix + sess
		}
		docs = append(docs, Doc{Res: r, ID: id, NW: nw, Weight: 1.0, Paths: []string{path}})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	if docs == nil {
		docs = []Doc{} // cached: an empty store is not "not read"
	}
	return docs, nil
}

// TermsRead counts the rows of terms searches read (tests: a search reads its words' rows only).
var TermsRead atomic.Int64

// DocsRead counts the docs rows searches read (tests: a one-shot search reads its words' holders only).
var DocsRead atomic.Int64

// BodiesRead counts the bodies searches loaded from the copy (tests: the hits' only).
var BodiesRead atomic.Int64

// ReadTerms reads the counts of terms in the copy's documents: id -> term -> count, for the documents
// holding one of terms.
func ReadTerms(ctx context.Context, db *sql.DB, terms []string) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	for _, t := range terms {
		rows, err := db.QueryContext(ctx, `SELECT id, tf FROM terms WHERE term = ?`, t)
		if err != nil {
			return nil, fmt.Errorf("store search copy: %w", err)
		}
		for rows.Next() {
			var id string
			var tf int
			if err := rows.Scan(&id, &tf); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store search copy: %w", err)
			}
			TermsRead.Add(1)
			if out[id] == nil {
				out[id] = map[string]int{}
			}
			out[id][t] = tf
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store search copy: %w", err)
		}
	}
	return out, nil
}

// WithTerms returns copies of docs (ReadDocs's) that rank from tfs (ReadTerms's) and load their bodies
// from db.
func WithTerms(docs []Doc, tfs map[string]map[string]int, db *sql.DB) []Doc {
	out := make([]Doc, len(docs))
	for i, d := range docs {
		d.TF = tfs[d.ID]
		if d.TF == nil {
			d.TF = map[string]int{}
		}
		d.Body = ""
		d.DB = db
		out[i] = d
	}
	return out
}

// loadBodies is the body of each of ds (its own, or the copy's bodies row), those of the copy's documents read with one
// statement per copy rather than one each ("" for a row another process removed meanwhile).
func loadBodies(ctx context.Context, ds []*Doc) ([]string, error) {
	out := make([]string, len(ds))
	byDB := map[*sql.DB][]int{}
	for i, d := range ds {
		if d.DB == nil {
			out[i] = d.Body
			continue
		}
		byDB[d.DB] = append(byDB[d.DB], i)
	}
	for db, is := range byDB {
		at := make(map[string][]int, len(is))
		args := make([]any, 0, len(is))
		for _, i := range is {
			if at[ds[i].ID] == nil {
				args = append(args, ds[i].ID)
			}
			at[ds[i].ID] = append(at[ds[i].ID], i)
		}
		// At most MaxHits ids (a page), well under SQLite's bound on parameters (32,766).
		rows, err := db.QueryContext(ctx, `SELECT id, body FROM bodies WHERE id IN (?`+strings.Repeat(`, ?`, len(args)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("store search copy: %w", err)
		}
		for rows.Next() {
			var id, body string
			if err := rows.Scan(&id, &body); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store search copy: %w", err)
			}
			BodiesRead.Add(1)
			for _, i := range at[id] {
				out[i] = body
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store search copy: %w", err)
		}
	}
	return out, nil
}

// Search ranks the copy db's documents for query (the search's provider ctx with no filter: every entry
// and the copy's commits), as package mcp's search tool ranks them from the same copy. A one-shot
// reader, it reads the rows of the query's words first, then only the documents holding one of them
// (with the number of documents and their total length, which BM25 needs): a query none of whose words
// is in the copy reads no document. Only the first snippets hits (every hit when snippets < 0) get
// their snippet and have their bodies read: a caller that prints at most n results of the merge
// (MergeHits keeps the store's hits in this order) passes n.
func Search(ctx context.Context, db *sql.DB, query string, snippets int) ([]searchpage.Result, error) {
	terms := Terms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	tfs, err := ReadTerms(ctx, db, terms)
	if err != nil {
		return nil, err
	}
	if len(tfs) == 0 {
		return nil, nil // no document holds a word: no hit (what Rank finds)
	}
	var count, words int
	if err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(nw), 0) FROM docs`).Scan(&count, &words); err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	args := make([]any, len(terms))
	for i, t := range terms {
		args[i] = t
	}
	docs, err := readDocs(ctx, db, `id IN (SELECT id FROM terms WHERE term IN (?`+strings.Repeat(`, ?`, len(terms)-1)+`))`, args)
	if err != nil {
		return nil, err
	}
	return rank(ctx, WithTerms(docs, tfs, db), count, words, query, terms, snippets)
}
