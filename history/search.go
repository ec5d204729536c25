package history

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/history/internal/ftsrank"
	"github.com/ctx-dev/ctx/history/internal/textproc"
)

// Content scopes of a search (docs/history.md "Search").
const (
	ScopeAll        = "all"
	ScopeTranscript = "transcript"
	ScopeCalls      = "calls"
	ScopeOutputs    = "outputs"
)

// Query is a search request. Text is required; every other field narrows the result (AND).
type Query struct {
	Text      string
	Providers []Provider
	Since     time.Time // events at or after (events without a time never match a time bound)
	Until     time.Time // events before
	File      string    // a touched path: exact, or a prefix when it ends in "/"
	SessionID string    // one session (ctx id)
	Repo      string    // sessions whose cwd is this directory or inside it
	// SourceDirs keeps the sessions of one of these roots: of its provider, the source file inside its
	// directory (the configured roots a search selects, docs/history.md "Configured roots"); empty: every
	// source.
	SourceDirs []SourceDir
	Scope      string    // all (default), transcript, calls, outputs
	EventType  EventType // one event type; conflicts with a Scope other than all
	// PrimaryOnly drops subagent sessions.
	PrimaryOnly bool
	// Dense returns event hits in score order without the one-hit-per-root grouping.
	Dense bool
	Limit int // default 20, at most 500
}

// Hit is one search result.
type Hit struct {
	Event   Event   `json:"event"`
	Session Session `json:"session"`
	Score   float64 `json:"score"`   // BM25 × class weight; higher is better
	Snippet string  `json:"snippet"` // a short excerpt around the first matched term
	// More counts further matching events in the same root group that are not shown.
	More int `json:"more_in_group"`
}

// Result is a search answer.
type Result struct {
	Hits  []Hit  `json:"hits"`
	Scope string `json:"content_scope"` // the resolved scope
	// Relaxed is true when no event had every term and the hits match any term instead.
	Relaxed bool `json:"relaxed,omitempty"`
	// MoreAvailable is true when more hits than Limit matched.
	MoreAvailable bool `json:"more_available"`
	// Window is set (to rankWindow) when more events matched than a search ranks: the hits are the best
	// of the Window most recently imported matching events (docs/history.md "Search").
	Window int `json:"ranked_window,omitempty"`
}

// ErrBadQuery is wrapped by Search errors about the request itself.
var ErrBadQuery = errors.New("invalid search request")

// primaryTolerance: inside a root group, the best primary-session hit is shown when it scores at least
// this fraction of the group's best hit.
const primaryTolerance = 0.95

// maxCandidates bounds the hits ranked before grouping.
const maxCandidates = 2000

// rankWindow bounds the matching events a search scores: the most recently imported ones (the highest
// rowids). Scoring costs FTS5 a BM25 computation and a document-length read per event (a statement of
// its own on the docsize table), about 1.5 µs each on a quiet machine, and nothing outside FTS5 can
// make it cheaper (the contentless index gives no term frequencies to a query; bench/README.md "Third
// round"), so a term found in most events would otherwise cost hundreds of milliseconds at 300,000
// events. It stays at 20,000: at 5,000 a common word's search costs about 0.6 of the CPU, but words such
// as README and error (11,600 and 25,800 matches at 300,000 events) lose their whole top 20
// (docs/history.md "Rank window"). A variable for the tests.
var rankWindow = 20000

// MaxQueryWords is the most words a search query may have (docs/history.md "Limits"); a longer query is
// refused with ErrBadQuery.
const MaxQueryWords = 32

// ftsQuery turns free text into an FTS5 query: each word (separated by white space or NUL) becomes a quoted phrase
// (so no user text is ever FTS5 syntax), joined by AND, or by OR when any is true. It returns the number
// of words, counting at most MaxQueryWords+1.
func ftsQuery(text string, any bool) (string, int) {
	var phrases []string
	// NUL separates words too: FTS5's query parser reads a phrase as a C string, so a NUL inside one
	// ended it early ("unterminated string", an internal error instead of a search).
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == 0 || unicode.IsSpace(r) }) {
		hasWord := strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
		if !hasWord {
			continue
		}
		// A run of CJK characters is indexed as one token per character (textproc.SplitCJK): the word is
		// the phrase of its characters.
		phrases = append(phrases, `"`+strings.ReplaceAll(textproc.SplitCJK(w), `"`, `""`)+`"`)
		if len(phrases) > MaxQueryWords {
			break // Search refuses the query: the count only needs to pass the bound
		}
	}
	sep := " AND "
	if any {
		sep = " OR "
	}
	return strings.Join(phrases, sep), len(phrases)
}

// Search ranks events by BM25 × class weight (messages 1.0, summaries 0.9, tool calls 0.8, outputs 0.6),
// then returns the best hit of each root session group before any group repeats (docs/history.md
// "Search"). It scores at most the rankWindow most recently imported matching events (Result.Window says
// when more matched). Errors wrap ErrBadQuery for a malformed request.
func (ix *Index) Search(ctx context.Context, q Query) (_ Result, err error) {
	defer ix.noteDamaged(&err)
	scope := q.Scope
	if scope == "" {
		scope = ScopeAll
	}
	res := Result{Scope: scope}
	switch scope {
	case ScopeAll, ScopeTranscript, ScopeCalls, ScopeOutputs:
	default:
		return res, fmt.Errorf("%w: content_scope must be all, transcript, calls or outputs", ErrBadQuery)
	}
	if q.EventType != "" && scope != ScopeAll {
		return res, fmt.Errorf("%w: event_type conflicts with content_scope", ErrBadQuery)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	if limit > 500 {
		return res, fmt.Errorf("%w: limit must be at most 500", ErrBadQuery)
	}
	match, n := ftsQuery(q.Text, false)
	if n == 0 {
		return res, fmt.Errorf("%w: the query has no words", ErrBadQuery)
	}
	if n > MaxQueryWords {
		// Refused rather than cut: a word past the bound would be dropped silently.
		return res, fmt.Errorf("%w: the query has more than %d words: leave some out", ErrBadQuery, MaxQueryWords)
	}
	cands, windowed, err := ix.candidates(ctx, q, scope, match)
	if err != nil {
		return res, err
	}
	if len(cands) == 0 && n > 1 {
		match, _ = ftsQuery(q.Text, true)
		if cands, windowed, err = ix.candidates(ctx, q, scope, match); err != nil {
			return res, err
		}
		res.Relaxed = len(cands) > 0
	}
	if windowed {
		res.Window = rankWindow
	}
	hits, more, err := ix.rank(ctx, cands, limit, q.Dense)
	if err != nil {
		return res, err
	}
	res.MoreAvailable = more
	if err := ix.hydrate(ctx, hits); err != nil {
		return res, err
	}
	terms := strings.Fields(strings.ToLower(q.Text))
	for i := range hits {
		hits[i].Snippet = snippet(hits[i].Event.Text, terms)
	}
	if hits == nil {
		hits = []Hit{} // no hits is [] in JSON, never null
	}
	res.Hits = hits
	return res, nil
}

// scopeSQL is the condition on an ev_fts rowid (whose low bits are the event's class) of a scope or an
// event type, and weightSQL the class weight of a row (docs/history.md "Search"): under all and
// transcript each class's weight, under calls and outputs (one class each) 1. typeFilter is set when the
// event type's class holds other types too: the events row must be checked.
//
// The condition tests the class's bit in the scope's set of classes with arithmetic: SQLite evaluates
// `x IN (a, b, c)` of more than two constants with a probe of an ephemeral index for every row, which
// was about 5 % of a search of a common word (bench/README.md "Twelfth round", search12).
func scopeSQL(scope string, typ EventType) (cond, weight string, typeFilter bool) {
	classes := scopeClasses(scope, typ)
	cond = "((1 << (ev_fts.rowid & " + strconv.Itoa(1<<ftsClassBits-1) + ")) & " + strconv.Itoa(int(classes)) + ") <> 0"
	var b strings.Builder
	b.WriteString("(CASE ev_fts.rowid & " + strconv.Itoa(1<<ftsClassBits-1))
	for i, c := range ftsClasses {
		fmt.Fprintf(&b, " WHEN %d THEN %v", i, c.weight)
	}
	b.WriteString(" END)")
	weight = b.String()
	switch {
	case typ != "":
		return cond, weight, len(ftsClasses[classOf(typ)].types) != 1
	case scope == ScopeCalls, scope == ScopeOutputs:
		return cond, "1.0", false
	}
	return cond, weight, false
}

// scopeClasses is the set of classes (bit n for class n) a scope or an event type searches.
func scopeClasses(scope string, typ EventType) uint8 {
	set := func(ns ...int) (m uint8) {
		for _, n := range ns {
			m |= 1 << n
		}
		return m
	}
	switch {
	case typ != "":
		return set(classOf(typ))
	case scope == ScopeTranscript:
		return set(classMessage, classSummary)
	case scope == ScopeCalls:
		return set(classCall)
	case scope == ScopeOutputs:
		return set(classOutput)
	}
	return set(classMessage, classSummary, classCall, classOutput, classOther)
}

// betweenCounts, when set (by tests), runs between a windowed one-phrase search's scan and its count of
// the older matches.
var betweenCounts func()

// onePhrase reports whether the FTS5 query match (ftsQuery's) is one phrase: its phrases hold no
// space, and two are joined by " AND " or " OR ".
func onePhrase(match string) bool { return match != "" && !strings.Contains(match, " ") }

// scopeWeights is the weight of each class under scope, as weightSQL says: the class weights under all
// and transcript, 1 under calls and outputs (one class each, the others not matched).
func scopeWeights(scope string) (w [1 << ftsClassBits]float64) {
	for i, c := range ftsClasses {
		w[i] = c.weight
		if scope == ScopeCalls || scope == ScopeOutputs {
			w[i] = 1
		}
	}
	return w
}

// candidate is a ranked event before grouping: its ev_fts rowid and score.
type candidate struct {
	rowid int64
	score float64
}

// candidates returns the maxCandidates best of the rankWindow newest matching events by class weight ×
// BM25 (ties: the older first) and whether the window left matches out. The class and its weight are
// read from the ev_fts rowid, so without a filter on events or sessions FTS5 ranks alone and no event is
// read here; with one, each match is joined with its event and session and filtered before it is scored.
func (ix *Index) candidates(ctx context.Context, q Query, scope, match string) ([]candidate, bool, error) {
	cond, weight, typeFilter := scopeSQL(scope, q.EventType)
	where := []string{"ev_fts MATCH ?", cond}
	args := []any{match}
	joined := false
	if typeFilter {
		where, args = append(where, "e.type = ?"), append(args, string(q.EventType))
		joined = true
	}
	if len(q.Providers) > 0 {
		ph := strings.TrimSuffix(strings.Repeat("?,", len(q.Providers)), ",")
		where = append(where, "s.provider IN ("+ph+")")
		for _, p := range q.Providers {
			args = append(args, string(p))
		}
	}
	if !q.Since.IsZero() {
		where, args = append(where, "e.at <> 0 AND e.at >= ?"), append(args, atMillis(q.Since))
	}
	if !q.Until.IsZero() {
		where, args = append(where, "e.at <> 0 AND e.at < ?"), append(args, atMillis(q.Until))
	}
	if q.SessionID != "" {
		where, args = append(where, "e.session_id = ?"), append(args, q.SessionID)
	}
	if q.PrimaryOnly {
		where = append(where, "s.scope <> 'subagent'")
	}
	where, args = repoFileWhere(where, args, q.Repo, q.File)
	where, args = sourceDirsWhere(where, args, q.SourceDirs)
	from := "ev_fts"
	if joined || len(where) > 2 {
		from = `ev_fts JOIN events e ON e.rowid = ev_fts.rowid >> ` + strconv.Itoa(ftsrank.ClassBits+ftsrank.LenBits) + ` JOIN sessions s ON s.id = e.session_id`
	}
	// The newest rankWindow matches are scored (FTS5 walks its doclists by descending rowid and stops
	// there); one more row says whether an older match was left out. The best maxCandidates are kept
	// here rather than by an SQL ORDER BY: SQLite's bounded sort inserts every row into a B-tree.
	var cands []candidate
	n, windowed := 0, false
	if from == "ev_fts" && ftsrank.Available() {
		// FTS5 alone: ctx_collect hands the scored rows to Go as SQLite evaluates them, one row back.
		// The phrases' document counts of an earlier search over the same generation are reused (a
		// warm MCP server); the generation is read by the same statement, so in the same snapshot: when
		// it moved meanwhile, the search runs again counting them. Without them, a query of one phrase
		// visits every row the phrase matches, newest first, and counts them as it goes (its document
		// count: no second walk of the doclist for the IDF), ctx_collect keeping the rankWindow newest
		// of the scope's classes (ftsrank.Collector.Count).
		hits, cachedGen, cached := ix.hits.get(match)
		count := !cached && onePhrase(match)
		sqlText := `SELECT count(*), sum(c), (SELECT value FROM meta WHERE key = 'generation') FROM (SELECT ctx_collect(ev_fts, ?) AS c
			FROM ev_fts WHERE ` + strings.Join(where, " AND ") + ` ORDER BY ev_fts.rowid DESC LIMIT ?)`
		countSQL := `SELECT count(*), 0, (SELECT value FROM meta WHERE key = 'generation') FROM (SELECT 1 FROM (SELECT ctx_collect(ev_fts, ?) AS c
			FROM ev_fts WHERE ev_fts MATCH ? ORDER BY ev_fts.rowid DESC) WHERE c = 1 LIMIT ?)`
		var col ftsrank.Collector
		for {
			// The rows' slice is made once at its bound (rankWindow+1: the statement's LIMIT, or the
			// window of a count): appending never copies it, and its pages are touched only as far as
			// rows are collected (a process's fresh pages: growing it by doubling was a tenth of a
			// search's page faults).
			col = ftsrank.Collector{Weights: scopeWeights(scope), Rows: make([]ftsrank.Scored, 0, rankWindow+1)}
			if cached {
				col.Hits = slices.Clone(hits)
			}
			query, qargs := sqlText, append(append([]any{nil}, args...), rankWindow+1)
			if count {
				query = countSQL
				col.Count, col.Classes, col.Window = true, scopeClasses(scope, q.EventType), rankWindow
				qargs = []any{nil, match, rankWindow + 1}
			}
			id, done := col.Start()
			qargs[0] = id
			var sum sql.NullInt64
			var gen sql.NullString
			err := ix.queryRow(ctx, query, qargs, &n, &sum, &gen)
			done()
			if err != nil {
				return nil, false, fmt.Errorf("search: %w", err)
			}
			if count {
				if n != min(col.Matched, rankWindow+1) {
					return nil, false, fmt.Errorf("search: %d rows matched, %d were counted", n, col.Matched)
				}
				nHit := int64(col.Visited)
				if col.Matched > rankWindow {
					// Stopped at the window: the phrase's older matches are counted, in a statement
					// of their own (FTS5 starts at the rowid bound). When an import changed the index
					// in between, the search runs again as one statement (counting with FTS5).
					if betweenCounts != nil {
						betweenCounts()
					}
					var older int64
					var gen2 sql.NullString
					if err := ix.queryRow(ctx, `SELECT count(*), (SELECT value FROM meta WHERE key = 'generation') FROM ev_fts WHERE ev_fts MATCH ? AND ev_fts.rowid < ?`,
						[]any{match, col.Last}, &older, &gen2); err != nil {
						return nil, false, fmt.Errorf("search: %w", err)
					}
					if gen2 != gen {
						count = false
						continue
					}
					nHit += older
				}
				col.Finish(nHit)
				n = col.Matched
			} else if n != len(col.Rows) {
				return nil, false, fmt.Errorf("search: %d rows matched, %d were scored", n, len(col.Rows))
			}
			if cached && n > 0 && gen.String != cachedGen {
				cached = false // the counts were of another generation: count again
				continue
			}
			if len(col.Hits) > 0 {
				ix.hits.put(match, gen.String, col.Hits)
			}
			break
		}
		if windowed = n > rankWindow; windowed {
			col.Rows = col.Rows[:rankWindow] // in descending rowid order: the oldest is last
		}
		// ctx_bm25 is negative (lower is better): the best are the lowest, ties the older first.
		best := bestFirst(col.Rows, maxCandidates, func(a, b ftsrank.Scored) int {
			if c := cmp.Compare(a.Score, b.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.Rowid, b.Rowid)
		})
		cands = make([]candidate, len(best))
		for i, r := range best {
			cands[i] = candidate{rowid: r.Rowid, score: -r.Score}
		}
		return cands, windowed, nil
	} else {
		rank := "ctx_bm25" // bm25() with the length from the rowid (ftsrank): the same scores
		if !ftsrank.Available() {
			rank = "bm25"
		}
		sqlText := `SELECT ev_fts.rowid, ` + rank + `(ev_fts) * ` + weight + ` FROM ` + from + ` WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY ev_fts.rowid DESC LIMIT ?`
		err := ix.scanRows(ctx, sqlText, append(args, rankWindow+1), func(r *sql.Rows) error {
			if n++; n > rankWindow {
				windowed = true
				return nil
			}
			var c candidate
			if err := r.Scan(&c.rowid, &c.score); err != nil {
				return err
			}
			c.score = -c.score // FTS5's bm25() is negative: lower is better
			cands = append(cands, c)
			return nil
		})
		if err != nil {
			return nil, false, fmt.Errorf("search: %w", err)
		}
	}
	cands = bestFirst(cands, maxCandidates, func(a, b candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.rowid, b.rowid)
	})
	return cands, windowed, nil
}

// bestFirst returns the k first elements of s in the order of cmp (a total order), sorted: s[:k] after
// a selection (quickselect, median of three) that moves them there, then a sort of those k only. s is
// reordered.
func bestFirst[T any](s []T, k int, cmp func(a, b T) int) []T {
	if k >= len(s) {
		slices.SortFunc(s, cmp)
		return s
	}
	lo, hi := 0, len(s)-1 // the k-th smallest is in s[lo..hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if cmp(s[mid], s[lo]) < 0 {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if cmp(s[hi], s[lo]) < 0 {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if cmp(s[hi], s[mid]) < 0 {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for cmp(s[i], pivot) < 0 {
				i++
			}
			for cmp(pivot, s[j]) < 0 {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		// Now s[lo..j] <= pivot <= s[i..hi], and s[j+1..i-1] == pivot.
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			lo = hi
		}
	}
	s = s[:k]
	slices.SortFunc(s, cmp)
	return s
}

// rank orders candidates as Search returns them and cuts them to limit (more: some were cut): in score
// order when dense, else grouped by root (groupByRoot), reading the groups of only as many candidates as
// the first limit hits need (rankGrouped), from the map ev_group.
func (ix *Index) rank(ctx context.Context, cands []candidate, limit int, dense bool) ([]Hit, bool, error) {
	return ix.rankBy(ctx, cands, limit, dense, true, true)
}

// rankBy is rank, lazily or reading every candidate's group (the reference the tests compare the lazy
// ranking with), each candidate's group read from the map ev_group when mapped, else from its event's and
// session's rows (the reference the tests compare the map with). With the map, a hit's Session.RootID is
// its group's number in the index (ev_roots), not the root session's id.
func (ix *Index) rankBy(ctx context.Context, cands []candidate, limit int, dense, lazy, mapped bool) ([]Hit, bool, error) {
	if dense || !lazy {
		n := len(cands)
		if dense && lazy {
			n = min(n, limit)
		}
		hits, err := ix.groupsOf(ctx, cands[:n], mapped)
		if err != nil {
			return nil, false, err
		}
		if !dense {
			hits = groupByRoot(hits)
		}
		more := len(hits) > limit || n < len(cands)
		return hits[:min(len(hits), limit)], more, nil
	}
	return ix.rankGrouped(ctx, cands, limit, mapped)
}

// groupsOf is withMapped when mapped, else withGroups.
func (ix *Index) groupsOf(ctx context.Context, cands []candidate, mapped bool) ([]Hit, error) {
	if mapped {
		return ix.withMapped(ctx, cands)
	}
	return ix.withGroups(ctx, cands)
}

// withMapped is withGroups with the groups read from ev_group: one small row per candidate, a few pages
// for all of them (docs/history.md "Search"); Session.RootID is the group's number.
func (ix *Index) withMapped(ctx context.Context, cands []candidate) ([]Hit, error) {
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = ftsrank.Event(c.rowid)
	}
	slices.Sort(ids)
	grps := make([]int64, len(ids)) // grps[i]: the group of ids[i], -1 when it has no row
	for i := range grps {
		grps[i] = -1
	}
	err := ix.queryRows(ctx, `SELECT ev, grp FROM ev_group WHERE ev IN (SELECT value FROM json_each(?))`, []any{int64List(ids)}, func(r *sql.Rows) error {
		var ev, grp int64
		if err := r.Scan(&ev, &grp); err != nil {
			return err
		}
		if i, ok := slices.BinarySearch(ids, ev); ok {
			grps[i] = grp
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := make([]Hit, 0, len(cands))
	for _, c := range cands {
		id := ftsrank.Event(c.rowid)
		i, _ := slices.BinarySearch(ids, id)
		g := grps[i]
		if g < 0 {
			continue // an index row without its event: not shown
		}
		out = append(out, Hit{Score: c.score, Event: Event{Seq: id}, Session: Session{RootID: strconv.FormatInt(g>>1, 10), Scope: mappedScope(g)}})
	}
	return out, nil
}

// mappedScope is the session scope an ev_group.grp value carries in its low bit.
func mappedScope(grp int64) string {
	if grp&1 != 0 {
		return "subagent"
	}
	return "primary"
}

// mappedMembers is groupMembers with the groups (keys: their numbers, as withMapped names them) read from
// ev_group through its index on grp: per group and scope, its events' rowids in one column.
func (ix *Index) mappedMembers(ctx context.Context, keys []string, indexOf map[int64]int) ([]groupMember, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	grps := make([]int64, 0, 2*len(keys))
	for _, k := range keys {
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("search: group %q: %w", k, err)
		}
		grps = append(grps, n<<1, n<<1|1)
	}
	var out []groupMember
	err := ix.queryRows(ctx, `SELECT grp, group_concat(ev) FROM ev_group WHERE grp IN (SELECT value FROM json_each(?)) GROUP BY grp`,
		[]any{int64List(grps)}, func(r *sql.Rows) error {
			var grp int64
			var ids sql.RawBytes
			if err := r.Scan(&grp, &ids); err != nil {
				return err
			}
			group, scope := strconv.FormatInt(grp>>1, 10), mappedScope(grp)
			var err error
			out, err = appendMembers(out, ids, indexOf, group, scope)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// appendMembers appends to out a groupMember of group and scope for each rowid of ids (group_concat's
// comma-separated event rowids) that indexOf holds (the candidate's index).
func appendMembers(out []groupMember, ids []byte, indexOf map[int64]int, group, scope string) ([]groupMember, error) {
	for len(ids) > 0 {
		i := bytes.IndexByte(ids, ',')
		if i < 0 {
			i = len(ids)
		}
		id, err := strconv.ParseInt(string(ids[:i]), 10, 64)
		if err != nil {
			return out, fmt.Errorf("event rowids of group %s: %w", group, err)
		}
		if c, ok := indexOf[id]; ok {
			out = append(out, groupMember{index: c, group: group, scope: scope})
		}
		ids = ids[min(i+1, len(ids)):]
	}
	return out, nil
}

// rankGrouped is groupByRoot over every candidate cut to limit, without reading every candidate's event.
// It reads the candidates in score order, skipping those of groups already known; the first one of a
// group not yet known is that group's best hit. Each new group is then resolved whole: its sessions (by
// root) and their events among the candidates (groupMembers), which gives its representative and
// more_in_group exactly. Every group not yet seen has all its hits among the candidates not yet placed,
// so its representative scores at most t, the score of the first of those (next), and its best hit comes
// after next, while a known group's comes before (every candidate read is placed). So when limit known
// groups have representatives scoring at least t, they are the first limit hits, in their order; when
// every candidate is placed, the result is groupByRoot's.
func (ix *Index) rankGrouped(ctx context.Context, cands []candidate, limit int, mapped bool) ([]Hit, bool, error) {
	type group struct {
		key     string
		members []int // indexes in cands, ascending
		rep     int
	}
	indexOf := make(map[int64]int, len(cands)) // event rowid → index in cands
	for i, c := range cands {
		indexOf[ftsrank.Event(c.rowid)] = i
	}
	placed := make([]*group, len(cands))
	scopes := make([]string, len(cands))
	groups := map[string]*group{}
	var order []*group
	next := 0 // every candidate before next is placed
	for {
		for next < len(cands) && placed[next] != nil {
			next++
		}
		if next == len(cands) {
			break
		}
		var sure []*group
		t := cands[next].score
		for _, g := range order {
			// On a tie with t, g still comes first: groupByRoot keeps groups in the order of their best
			// hits, g's is before next (every candidate read is placed) and an unknown group's after.
			if cands[g.rep].score >= t {
				sure = append(sure, g)
			}
		}
		if len(sure) >= limit {
			sort.SliceStable(sure, func(a, b int) bool { return cands[sure[a].rep].score > cands[sure[b].rep].score })
			out := make([]Hit, limit)
			for i, g := range sure[:limit] {
				out[i] = Hit{Score: cands[g.rep].score, Event: Event{Seq: ftsrank.Event(cands[g.rep].rowid)},
					Session: Session{RootID: g.key, Scope: scopes[g.rep]}, More: len(g.members) - 1}
			}
			return out, len(cands) > limit, nil
		}
		// Read the next unplaced candidates (at least 16, more as groups accumulate), learn their groups.
		var batch []candidate
		for i := next; i < len(cands) && len(batch) < max(16, len(order)); i++ {
			if placed[i] == nil {
				batch = append(batch, cands[i])
			}
		}
		hits, err := ix.groupsOf(ctx, batch, mapped)
		if err != nil {
			return nil, false, err
		}
		if len(hits) != len(batch) { // an index row without its event: rank what exists, all of it
			return ix.rankBy(ctx, cands, limit, false, false, mapped)
		}
		var keys []string
		for _, h := range hits {
			if groups[h.Session.RootID] == nil {
				g := &group{key: h.Session.RootID}
				groups[g.key] = g
				order = append(order, g)
				keys = append(keys, g.key)
			}
		}
		var members []groupMember
		if mapped {
			members, err = ix.mappedMembers(ctx, keys, indexOf)
		} else {
			members, err = ix.groupMembers(ctx, keys, indexOf)
		}
		if err != nil {
			return nil, false, err
		}
		for _, m := range members {
			g := groups[m.group]
			if g == nil || placed[m.index] != nil {
				continue
			}
			g.members = append(g.members, m.index)
			placed[m.index], scopes[m.index] = g, m.scope
		}
		for i := range batch {
			if placed[indexOf[ftsrank.Event(batch[i].rowid)]] == nil {
				// A candidate read here that its group's sessions do not hold (a session changed
				// meanwhile): rank what exists, all of it.
				return ix.rankBy(ctx, cands, limit, false, false, mapped)
			}
		}
		for _, key := range keys {
			g := groups[key]
			slices.Sort(g.members)
			g.rep = g.members[0]
			for _, i := range g.members {
				if scopes[i] != "subagent" {
					if cands[i].score >= primaryTolerance*cands[g.members[0]].score {
						g.rep = i
					}
					break
				}
			}
		}
	}
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = Hit{Score: c.score, Event: Event{Seq: ftsrank.Event(c.rowid)}, Session: Session{RootID: placed[i].key, Scope: scopes[i]}}
	}
	hits = groupByRoot(hits)
	return hits[:min(len(hits), limit)], len(hits) > limit, nil
}

// groupMember is a candidate found in a group's sessions: its index in the candidates, its group and its
// session's scope.
type groupMember struct {
	index        int
	group, scope string
}

// groupMembers lists the candidates (indexOf: event rowid → index) whose event belongs to a session of
// one of the root groups keys, in one statement: the groups' sessions (by id and by root, indexed), each
// with its events' rowids (the events_session index covers them) joined in one column, so no
// candidate's event row is read and a session's events cost one row, not one each.
func (ix *Index) groupMembers(ctx context.Context, keys []string, indexOf map[int64]int) ([]groupMember, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(keys)
	// The unary + keeps SQLite from reading every root session through sessions_root for root_id = ''.
	var out []groupMember
	err := ix.queryRows(ctx, `WITH g(id, grp, scope) AS (
			SELECT id, id, scope FROM sessions WHERE id IN (SELECT value FROM json_each(?1)) AND +root_id = ''
			UNION ALL SELECT id, root_id, scope FROM sessions WHERE root_id IN (SELECT value FROM json_each(?1)))
		SELECT grp, scope, (SELECT group_concat(rowid) FROM events WHERE session_id = g.id) FROM g`,
		[]any{string(list)}, func(r *sql.Rows) error {
			var group, scope string
			var ids sql.RawBytes
			if err := r.Scan(&group, &scope, &ids); err != nil {
				return err
			}
			var err error
			out, err = appendMembers(out, ids, indexOf, group, scope)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// withGroups turns candidates into hits carrying the event's rowid (in Event.Seq), its root group (in
// Session.RootID) and its session's scope, in the candidates' order: one read of the candidates'
// events (by rowid) joined with their sessions.
func (ix *Index) withGroups(ctx context.Context, cands []candidate) ([]Hit, error) {
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = ftsrank.Event(c.rowid)
	}
	slices.Sort(ids)
	in := make(map[int64]sessionGroup, len(cands))
	err := ix.queryRows(ctx, `SELECT e.rowid, CASE WHEN s.root_id <> '' THEN s.root_id ELSE s.id END, s.scope
		FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.rowid IN (SELECT value FROM json_each(?))`, []any{int64List(ids)}, func(r *sql.Rows) error {
		var id int64
		var g sessionGroup
		if err := r.Scan(&id, &g.group, &g.scope); err != nil {
			return err
		}
		in[id] = g
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := make([]Hit, 0, len(cands))
	for _, c := range cands {
		id := ftsrank.Event(c.rowid)
		g := in[id]
		if g.group == "" {
			continue // an index row without its event or session: not shown
		}
		out = append(out, Hit{Score: c.score, Event: Event{Seq: id}, Session: Session{RootID: g.group, Scope: g.scope}})
	}
	return out, nil
}

// sessionGroup is a session's root group (its root session's id, or its own) and its scope.
type sessionGroup struct{ group, scope string }

// jsonKeys is the keys of m as a JSON array of strings (for json_each).
func jsonKeys[V any](m map[string]V) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	b, _ := json.Marshal(keys)
	return b
}

// int64List is ids as a JSON array (for json_each).
func int64List(ids []int64) string {
	b := make([]byte, 0, len(ids)*8+2)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// groupByRoot orders hits so that each root group's representative comes first (in order of the
// group's best score), then the remaining hits in score order. A group's representative is its best
// primary-session hit when that scores at least primaryTolerance × the group's best, else its best hit.
func groupByRoot(hits []Hit) []Hit {
	keys := make([]string, len(hits))
	for i, h := range hits {
		keys[i] = h.Session.RootID
	}
	return groupByKey(hits, keys)
}

// groupByKey is groupByRoot with hits[i]'s root group named keys[i].
func groupByKey[K comparable](hits []Hit, keys []K) []Hit {
	type group struct {
		best, rep int
		members   []int
	}
	groups := make(map[K]*group, len(hits))
	var order []*group
	for i := range hits { // hits arrive in descending score order
		g := groups[keys[i]]
		if g == nil {
			g = &group{best: i, rep: -1}
			groups[keys[i]] = g
			order = append(order, g)
		}
		g.members = append(g.members, i)
	}
	out := make([]Hit, 0, len(hits))
	used := make([]bool, len(hits))
	for _, g := range order {
		g.rep = g.best
		for _, i := range g.members {
			if hits[i].Session.Scope != "subagent" {
				if hits[i].Score >= primaryTolerance*hits[g.best].Score {
					g.rep = i
				}
				break
			}
		}
		h := hits[g.rep]
		h.More = len(g.members) - 1
		out = append(out, h)
		used[g.rep] = true
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Score > out[b].Score })
	for i, h := range hits {
		if !used[i] {
			out = append(out, h)
		}
	}
	return out
}

// hydrate loads the events (whose rowids the hits carry in Event.Seq) and their sessions: one read of
// the events by rowid, one of their distinct sessions. An event or session that is missing is an error.
func (ix *Index) hydrate(ctx context.Context, hits []Hit) error {
	if len(hits) == 0 {
		return nil
	}
	ids := make([]int64, len(hits))
	for i := range hits {
		ids[i] = hits[i].Event.Seq
	}
	slices.Sort(ids)
	events := make(map[int64]Event, len(hits))
	sessions := map[string]Session{}
	err := ix.queryRows(ctx, `SELECT rowid, `+strings.TrimPrefix(eventCols, "SELECT ")+` WHERE rowid IN (SELECT value FROM json_each(?))`,
		[]any{int64List(ids)}, func(r *sql.Rows) error {
			var id int64
			e, err := ix.scanEvent(prefixScanner{r, &id})
			if err != nil {
				return err
			}
			events[id] = e
			sessions[e.SessionID] = Session{}
			return nil
		})
	if err != nil {
		return fmt.Errorf("search: load events: %w", err)
	}
	err = ix.queryRows(ctx, sessionCols+` WHERE id IN (SELECT value FROM json_each(?))`, []any{string(jsonKeys(sessions))},
		func(r *sql.Rows) error {
			s, err := scanSession(r)
			if err != nil {
				return err
			}
			sessions[s.ID] = s
			return nil
		})
	if err != nil {
		return fmt.Errorf("search: load sessions: %w", err)
	}
	for i := range hits {
		e, ok := events[hits[i].Event.Seq]
		if !ok {
			return fmt.Errorf("search: load event %d: %w", hits[i].Event.Seq, sql.ErrNoRows)
		}
		s := sessions[e.SessionID]
		if s.ID == "" {
			return fmt.Errorf("search: load session: session %w: %s", ErrNotFound, e.SessionID)
		}
		hits[i].Event, hits[i].Session = e, s
	}
	return nil
}

// prefixScanner scans a row whose first column is an event's rowid (into id) and whose others are what
// the reader of r expects.
type prefixScanner struct {
	r  *sql.Rows
	id *int64
}

func (p prefixScanner) Scan(dest ...any) error { return p.r.Scan(append([]any{p.id}, dest...)...) }

const eventCols = `SELECT id, session_id, seq, native_key, at, type, role, text, tool, files, facts FROM events`

type rowScanner interface{ Scan(...any) error }

func (ix *Index) scanEvent(r rowScanner) (Event, error) {
	var e Event
	var at int64
	var typ string
	var tool, files, facts sql.NullString
	if err := r.Scan(&e.ID, &e.SessionID, &e.Seq, &e.NativeKey, &at, &typ, &e.Role, &e.Text, &tool, &files, &facts); err != nil {
		return e, err
	}
	e.Type = EventType(typ)
	e.At = atTime(at)
	if tool.Valid {
		e.Tool = &Tool{}
		if err := unmarshal([]byte(tool.String), e.Tool); err != nil {
			return e, fmt.Errorf("decode tool of %s: %w", e.ID, err)
		}
		if e.Type == ToolOutput && e.Tool.Output == "" {
			e.Tool.Output = e.Text // an output's text is stored once (see insertEvents)
		}
	}
	if files.Valid {
		if err := unmarshal([]byte(files.String), &e.Files); err != nil {
			return e, fmt.Errorf("decode files of %s: %w", e.ID, err)
		}
	}
	if facts.Valid {
		if err := unmarshal([]byte(facts.String), &e.Facts); err != nil {
			return e, fmt.Errorf("decode facts of %s: %w", e.ID, err)
		}
	}
	return e, nil
}

// snippet returns up to ~200 characters of text around the first occurrence of any term within its
// first 256 KiB (the start of the text when none occurs there).
func snippet(text string, terms []string) string {
	head := text
	if len(head) > 256<<10 {
		head = head[:256<<10]
	}
	lower := strings.ToLower(head)
	if len(lower) != len(head) { // case mapping changed byte lengths: offsets would not line up
		lower = head
	}
	pos := -1
	for _, t := range terms {
		t = strings.Trim(t, `"'`)
		if t == "" {
			continue
		}
		if i := strings.Index(lower, t); i >= 0 && (pos < 0 || i < pos) {
			pos = i
		}
	}
	if pos < 0 {
		pos = 0
	}
	start := max(0, pos-80)
	end := min(len(text), start+200)
	for start > 0 && start < len(text) && (text[start]&0xC0) == 0x80 {
		start--
	}
	for end < len(text) && (text[end]&0xC0) == 0x80 {
		end++
	}
	// Cut between words, not inside one: the start moves forward past a cut word (never
	// past the match), the end back before one, each within 40 bytes; a longer word is cut where it is.
	if start > 0 && !isSpaceByte(text[start-1]) && !isSpaceByte(text[start]) {
		if i := strings.IndexAny(text[start:min(pos, start+40)], " \t\n\r"); i >= 0 {
			start += i + 1
		}
	}
	if end < len(text) && !isSpaceByte(text[end]) && !isSpaceByte(text[end-1]) {
		if i := strings.LastIndexAny(text[max(start, pos+1, end-40):end], " \t\n\r"); i >= 0 {
			end = max(start, pos+1, end-40) + i
		}
	}
	s := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}

// isSpaceByte reports whether c is ASCII white space (a word boundary for snippet).
func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// CleanFilePath is the form of a touched path that the index keeps (event_files) and the file filter
// compares: filepath.Clean's, without "./", "..", "//" or a trailing "/", except that a trailing "/" given
// (a folder prefix of the filter) is kept. A relative path stays relative. "" stays "".
func CleanFilePath(p string) string {
	if p == "" {
		return ""
	}
	if WindowsAbs(p) {
		c := winClean(p)
		if (strings.HasSuffix(p, `\`) || strings.HasSuffix(p, "/")) && !strings.HasSuffix(c, `\`) {
			c += `\`
		}
		return c
	}
	c := filepath.Clean(p)
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(c, "/") {
		c += "/"
	}
	return c
}

// WindowsAbs reports whether p is a Windows absolute path, on any system: a drive letter, a colon and a
// slash or backslash (C:\x, C:/x), or a UNC path (\\server\share). A transcript written on Windows
// records such paths; the filters read them as absolute, never joined to a directory (docs/history.md
// "Windows paths").
func WindowsAbs(p string) bool {
	if len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') && ('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z') {
		return true
	}
	return strings.HasPrefix(p, `\\`)
}

// IsAbsPath reports whether p is absolute on this system or a Windows absolute path (WindowsAbs).
func IsAbsPath(p string) bool { return filepath.IsAbs(p) || WindowsAbs(p) }

// winClean is a Windows path in the form the index keeps: backslashes, "." and ".." resolved, no doubled
// separator, an upper-case drive letter, so that C:/a/b and c:\a\.\b are one key.
func winClean(p string) string {
	s := strings.ReplaceAll(p, `\`, "/")
	prefix := ""
	switch {
	case strings.HasPrefix(s, "//"):
		prefix, s = `\\`, path.Clean("/" + strings.TrimLeft(s, "/"))[1:]
	case WindowsAbs(p):
		prefix, s = strings.ToUpper(s[:2]), path.Clean(s[2:])
	default:
		s = path.Clean(s)
	}
	return prefix + strings.ReplaceAll(s, "/", `\`)
}

// repoFileWhere appends to where and args the conditions of the repo filter (a session whose cwd is repo
// or below it) and the file filter (an event that touched file, cleaned as the index keeps paths:
// CleanFilePath; a file ending in "/" is a folder prefix),
// shared by Search and ListEvents. Empty values add nothing.
func repoFileWhere(where []string, args []any, repo, file string) ([]string, []any) {
	switch {
	case repo != "" && WindowsAbs(repo):
		// A Windows cwd as recorded, with either slash: compared in backslashes (docs/history.md "Windows paths").
		repo = strings.TrimSuffix(winClean(repo), `\`)
		where = append(where, `(replace(s.cwd, '/', '\') = ? OR substr(replace(s.cwd, '/', '\'), 1, ?) = ?)`)
		args = append(args, repo, utf8.RuneCountInString(repo)+1, repo+`\`)
	case repo != "":
		repo = filepath.Clean(repo)
		where = append(where, "(s.cwd = ? OR substr(s.cwd, 1, ?) = ?)")
		args = append(args, repo, utf8.RuneCountInString(repo)+1, repo+string(filepath.Separator)) // substr counts characters
	}
	if file != "" {
		file = CleanFilePath(file) // as the index keeps the paths
		if strings.HasSuffix(file, "/") || (WindowsAbs(file) && strings.HasSuffix(file, `\`)) {
			where = append(where, "e.rowid IN (SELECT event FROM event_files WHERE substr(path, 1, ?) = ?)")
			args = append(args, utf8.RuneCountInString(file), file)
		} else {
			where = append(where, "e.rowid IN (SELECT event FROM event_files WHERE path = ?)")
			args = append(args, file)
		}
	}
	return where, args
}

// stmt is query prepared once for the index's life (the fixed statements of Search: a long-lived index, an
// MCP server, parses them once).
func (ix *Index) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := ix.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := ix.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if old, loaded := ix.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return old.(*sql.Stmt), nil
	}
	return st, nil
}

// queryRows is scanRows with the statement prepared once (stmt): for fixed SQL text only.
func (ix *Index) queryRows(ctx context.Context, query string, args []any, each func(*sql.Rows) error) error {
	st, err := ix.stmt(ctx, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
	return eachRow(rows, err, each)
}

// queryRow runs a one-row query prepared once (stmt) and scans its row into dest.
func (ix *Index) queryRow(ctx context.Context, query string, args []any, dest ...any) error {
	st, err := ix.stmt(ctx, query)
	if err != nil {
		return err
	}
	return st.QueryRowContext(ctx, args...).Scan(dest...)
}

// hitCounts keeps, per FTS5 query, the number of rows each of its phrases matches and the index
// generation they were counted at (at most maxHitQueries queries; then it starts again).
type hitCounts struct {
	mu sync.Mutex
	m  map[string]hitCount
}

type hitCount struct {
	gen  string
	hits []int64
}

const maxHitQueries = 512

func (h *hitCounts) get(match string) ([]int64, string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.m[match]
	return c.hits, c.gen, ok
}

func (h *hitCounts) put(match, gen string, hits []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxHitQueries {
		h.m = map[string]hitCount{}
	}
	h.m[match] = hitCount{gen: gen, hits: slices.Clone(hits)}
}

// scanRows runs a query and calls each for every row.
func (ix *Index) scanRows(ctx context.Context, query string, args []any, each func(*sql.Rows) error) error {
	rows, err := ix.db.QueryContext(ctx, query, args...)
	return eachRow(rows, err, each)
}

// eachRow calls each for every row of rows (the result of a query that failed with err, or not), then
// closes them.
func eachRow(rows *sql.Rows, err error, each func(*sql.Rows) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
