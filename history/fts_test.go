package history

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ctx-dev/ctx/history/internal/ftsrank"
)

// TestScopeSQLSelectsScopeClasses: the condition scopeSQL gives each scope and event type holds for an
// ev_fts rowid of exactly the classes scopeClasses names, over every value of the class bits (the
// condition is arithmetic on the rowid, not an IN list: bench/README.md "Twelfth round").
func TestScopeSQLSelectsScopeClasses(t *testing.T) {
	ix := openTestIndex(t)
	type shape struct {
		scope string
		typ   EventType
	}
	var shapes []shape
	for _, sc := range []string{ScopeAll, ScopeTranscript, ScopeCalls, ScopeOutputs} {
		shapes = append(shapes, shape{scope: sc})
	}
	for _, typ := range []EventType{Message, Summary, Reasoning, ToolCall, ToolOutput, Notice, "custom"} {
		shapes = append(shapes, shape{scope: ScopeAll, typ: typ})
	}
	for _, sh := range shapes {
		cond, _, _ := scopeSQL(sh.scope, sh.typ)
		classes := scopeClasses(sh.scope, sh.typ)
		for class := range 1 << ftsClassBits {
			rowid := ftsrank.Rowid(41, class, 7, true)
			var got bool
			if err := ix.db.QueryRow(`SELECT `+cond+` FROM (SELECT ? AS rowid) ev_fts`, rowid).Scan(&got); err != nil {
				t.Fatalf("%+v: %s: %v", sh, cond, err)
			}
			if want := classes&(1<<class) != 0; got != want {
				t.Errorf("%+v: class %d: %s is %v, want %v", sh, class, cond, got, want)
			}
		}
	}
}

// TestClassSQLMatchesClassOf: the SQL expression that deletes an event's ev_fts row computes the class
// that insertEvents put in its rowid, for every known type and an unknown one.
func TestClassSQLMatchesClassOf(t *testing.T) {
	ix := openTestIndex(t)
	for _, typ := range []EventType{Message, Summary, Reasoning, ToolCall, ToolOutput, Notice, "custom", ""} {
		var got int
		if err := ix.db.QueryRow(`SELECT `+classSQL("e")+` FROM (SELECT ? AS type) e`, string(typ)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != classOf(typ) || ftsRowid(5, typ, 9) != 5<<(ftsClassBits+ftsrank.LenBits)|9<<ftsClassBits|int64(got) {
			t.Errorf("%q: SQL class %d, classOf %d, rowid %d", typ, got, classOf(typ), ftsRowid(5, typ, 9))
		}
		for _, n := range []int{0, 9, ftsrank.LenUnknown} {
			var r int64
			if err := ix.db.QueryRow(`SELECT `+ftsRowidSQL("e")+` FROM (SELECT 5 AS rowid, ? AS type, ? AS fts_len) e`, string(typ), n).Scan(&r); err != nil || r != ftsRowid(5, typ, n) {
				t.Errorf("%q, length %d: SQL rowid %d, ftsRowid %d (%v)", typ, n, r, ftsRowid(5, typ, n), err)
			}
		}
	}
	// An events row written without a length (the column's default) says "unknown".
	var def int
	if err := ix.db.QueryRow(`SELECT dflt_value FROM pragma_table_info('events') WHERE name = 'fts_len'`).Scan(&def); err != nil || def != ftsrank.LenUnknown {
		t.Errorf("fts_len default %d (%v)", def, err)
	}
	if len(ftsClasses) > 1<<ftsClassBits {
		t.Fatalf("%d classes do not fit in %d bits", len(ftsClasses), ftsClassBits)
	}
}

// TestSearchRankingPathsAgree: over the corpus, the search FTS5 ranks alone (no filter) and the one that
// joins every match with its event and session (a filter that keeps everything: every provider) give the
// same candidates with the same scores, in every scope; an event type of the reasoning-and-notice class
// finds only that type. The FTS5-only search is run twice: first counting a one-word query's matches as
// it walks them (ftsrank.Collector.Count), then with the document counts that search kept; and with a
// rank window of the whole corpus and one that leaves matches out.
func TestSearchRankingPathsAgree(t *testing.T) {
	ix := importedIndex(t)
	ctx := context.Background()
	compared, windowedSeen := 0, 0
	old := rankWindow
	t.Cleanup(func() { rankWindow = old })
	for _, window := range []int{old, 12} {
		rankWindow = window
		ix.hits = hitCounts{}
		for _, text := range []string{"the", "error", "test", "git commit", "README", "function", "npm run build", "apply_patch"} {
			for _, scope := range []string{ScopeAll, ScopeTranscript, ScopeCalls, ScopeOutputs} {
				match, _ := ftsQuery(text, false)
				fast, fastWindowed, err := ix.candidates(ctx, Query{Text: text}, scope, match)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, cached := ix.hits.get(match); !cached && len(fast) > 0 {
					t.Errorf("%q %s: the document counts were not kept", text, scope)
				}
				again, againWindowed, err := ix.candidates(ctx, Query{Text: text}, scope, match)
				if err != nil {
					t.Fatal(err)
				}
				joined, joinedWindowed, err := ix.candidates(ctx, Query{Text: text, Providers: Providers}, scope, match)
				if err != nil {
					t.Fatal(err)
				}
				if window == old && (fastWindowed || joinedWindowed) {
					t.Errorf("%q %s: the corpus is smaller than the rank window", text, scope)
				}
				if fastWindowed {
					windowedSeen++
				}
				if len(fast) == 0 && scope == ScopeAll {
					t.Errorf("%q: no hit in the corpus", text)
				}
				if !sameCandidates(fast, joined) || fastWindowed != joinedWindowed {
					t.Errorf("%q %s window %d: the two paths differ: %d and %d candidates (windowed %v, %v)", text, scope, window, len(fast), len(joined), fastWindowed, joinedWindowed)
				}
				if !sameCandidates(fast, again) || fastWindowed != againWindowed {
					t.Errorf("%q %s window %d: counting and kept counts differ: %d and %d candidates", text, scope, window, len(fast), len(again))
				}
				for i := 1; i < len(fast); i++ {
					if fast[i].score > fast[i-1].score {
						t.Fatalf("%q %s: not in score order at %d", text, scope, i)
					}
				}
				compared += len(fast)
			}
		}
	}
	if compared < 1000 || windowedSeen < 10 {
		t.Fatalf("only %d candidates compared, %d searches windowed", compared, windowedSeen)
	}
	for _, typ := range []EventType{Notice, Reasoning, ToolCall} {
		res, err := ix.Search(ctx, Query{Text: "the", EventType: typ, Dense: true, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 {
			t.Errorf("%s: no hit", typ)
		}
		for _, h := range res.Hits {
			if h.Event.Type != typ {
				t.Fatalf("type %s: hit of type %s", typ, h.Event.Type)
			}
		}
	}
}

// sameCandidates: the same candidates in the same order (none and nil alike).
func sameCandidates(a, b []candidate) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// TestReimportReplacesFullText: a rewritten source re-imported whole leaves no full-text row of its old
// events (their rowids, class bits included, are deleted), and the index holds one row per event.
func TestReimportReplacesFullText(t *testing.T) {
	ix := openTestIndex(t)
	ctx := context.Background()
	root := t.TempDir()
	src := writeClaude(t, root, "-a", "s1",
		rec("u1", "user", "/w", `"zebracorn in a message"`),
		rec("a1", "assistant", "/w", `[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo zebracorn"}}]`),
		rec("u2", "user", "/w", `[{"type":"tool_result","tool_use_id":"t1","content":"zebracorn printed"}]`))
	if _, err := ix.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	if res, err := ix.Search(ctx, Query{Text: "zebracorn", Dense: true}); err != nil || len(res.Hits) != 3 {
		t.Fatalf("first import: %+v %v", res, err)
	}
	src = writeClaude(t, root, "-a", "s1", rec("u9", "user", "/w", `"unicornzebra only"`))
	if st, err := ix.Import(ctx, []Source{src}); err != nil || st.Imported != 1 {
		t.Fatalf("re-import: %+v %v", st, err)
	}
	if res, err := ix.Search(ctx, Query{Text: "zebracorn"}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("old words still found: %+v %v", res, err)
	}
	if res, err := ix.Search(ctx, Query{Text: "unicornzebra"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("new words: %+v %v", res, err)
	}
	var fts, events int
	if err := ix.db.QueryRow(`SELECT (SELECT count(*) FROM ev_fts), (SELECT count(*) FROM events)`).Scan(&fts, &events); err != nil {
		t.Fatal(err)
	}
	if fts != events || events != 1 {
		t.Fatalf("%d full-text rows for %d events", fts, events)
	}
}

// oldSchemaIndex writes an index.db as ctx built it before schema version 2 (one ev_fts table whose
// rowids are the events' rowids, PRAGMA user_version 0) with one session and one event.
func oldSchemaIndex(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := schema + `CREATE VIRTUAL TABLE ev_fts USING fts5(body, content='', contentless_delete=1);
		INSERT INTO meta VALUES('generation', '7');
		INSERT INTO sessions VALUES('s', 'claude-code', 'n', '', '', 'primary', '/w', '', '', '', '', '', '', 0, 0, 'claude_jsonl', '/x.jsonl', 1);
		INSERT INTO events(rowid, id, session_id, seq, native_key, at, type, role, text) VALUES(1, 'e', 's', 1, 'k', 0, 'message', 'user', 'oldword');
		INSERT INTO ev_fts(rowid, body) VALUES(1, 'oldword');
		INSERT INTO sources(path, provider, format, parser_rev, size, mtime, fingerprint, content_hash, offset, check_hash, state, session_id, unknown, bad_lines, imported_at)
			VALUES('/x.jsonl', 'claude-code', 'claude_jsonl', 3, 1, 1, '', '', 1, '', '{}', 's', '{}', 0, 0);`
	if _, err := db.Exec(old); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRebuildsOldIndex: an index of an older schema is emptied by Open (its generation bumped, so
// cursors of the old one go stale) and filled again by an import; a newer schema is refused untouched.
func TestOpenRebuildsOldIndex(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	oldSchemaIndex(t, dir)
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Stats(ctx)
	if err != nil || st.Events != 0 || st.Sessions != 0 || st.Sources != 0 || st.Generation <= 7 { // moved past the old one's 7 (nextGenerationSQL: at least the time)
		t.Fatalf("after Open of an old index: %+v %v", st, err)
	}
	if res, err := ix.Search(ctx, Query{Text: "oldword"}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("search: %+v %v", res, err)
	}
	src := writeClaude(t, t.TempDir(), "-a", "s1", rec("u1", "user", "/w", `"newword"`))
	if _, err := ix.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	if res, err := ix.Search(ctx, Query{Text: "newword"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("search after import: %+v %v", res, err)
	}
	var v int
	if err := ix.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version %d %v", v, err)
	}
	ix.Close()
	// A second Open of the current schema keeps everything.
	ix, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ix.Search(ctx, Query{Text: "newword"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("search after reopen: %+v %v", res, err)
	}
	if _, err := ix.db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if _, err := Open(ctx, dir); err == nil || !strings.Contains(err.Error(), "newer ctx") {
		t.Fatalf("a newer schema: %v", err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the newer index was changed: %d events, %v", n, err)
	}
}

// TestSearchRankWindow: when more events match than rankWindow, only the most recently imported
// rankWindow are ranked and the result says so; with exactly rankWindow matches nothing is left out.
// Both the FTS5-only and the joined search behave alike.
func TestSearchRankWindow(t *testing.T) {
	ix := openTestIndex(t)
	ctx := context.Background()
	root := t.TempDir()
	// Imported in order: the first session holds the strongest hit (the word twice in a short message).
	texts := []string{`"kiwi kiwi"`, `"kiwi and some more words here"`, `"a kiwi among many other words in this one"`,
		`"kiwi again with several other words around it"`, `"and kiwi once in a long message of many words that go on"`}
	for i, txt := range texts {
		src := writeClaude(t, root, "-p", fmt.Sprintf("s%d", i), rec(fmt.Sprintf("u%d", i), "user", "/w", txt))
		if _, err := ix.Import(ctx, []Source{src}); err != nil {
			t.Fatal(err)
		}
	}
	old := rankWindow
	t.Cleanup(func() { rankWindow = old })
	for _, q := range []Query{{Text: "kiwi"}, {Text: "kiwi", Providers: []Provider{ClaudeCode}}} {
		rankWindow = len(texts)
		res, err := ix.Search(ctx, q)
		if err != nil || len(res.Hits) != len(texts) || res.Window != 0 || res.Hits[0].Session.NativeID != "s0" {
			t.Fatalf("window of every match: %+v %v", res, err)
		}
		rankWindow = 3
		res, err = ix.Search(ctx, q)
		if err != nil || len(res.Hits) != 3 || res.Window != 3 {
			t.Fatalf("window of 3: %+v %v", res, err)
		}
		for _, h := range res.Hits {
			if n := h.Session.NativeID; n != "s2" && n != "s3" && n != "s4" {
				t.Errorf("window of 3: a hit of %s, imported before the 3 newest", n)
			}
		}
	}
}

// TestSearchCountAcrossImport: when an import changes the index between a windowed one-word search's
// scan and its count of the older matches, the search runs again in one statement: its hits and scores
// are those of a search after the import (no count of one snapshot with the rows of another).
func TestSearchCountAcrossImport(t *testing.T) {
	ix := openTestIndex(t)
	ctx := context.Background()
	root := t.TempDir()
	for i := range 6 {
		src := writeClaude(t, root, "-p", fmt.Sprintf("s%d", i), rec(fmt.Sprintf("u%d", i), "user", "/w", fmt.Sprintf(`"kiwi %s"`, strings.Repeat("word ", i))))
		if _, err := ix.Import(ctx, []Source{src}); err != nil {
			t.Fatal(err)
		}
	}
	old := rankWindow
	rankWindow = 3
	t.Cleanup(func() { rankWindow, betweenCounts = old, nil })
	imported := 0
	betweenCounts = func() {
		if imported++; imported > 1 {
			return
		}
		src := writeClaude(t, root, "-p", "late", rec("late", "user", "/w", `"kiwi kiwi kiwi"`))
		if _, err := ix.Import(ctx, []Source{src}); err != nil {
			t.Error(err)
		}
	}
	during, err := ix.Search(ctx, Query{Text: "kiwi", Dense: true})
	if err != nil {
		t.Fatal(err)
	}
	if imported == 0 {
		t.Fatal("the search did not count the older matches apart")
	}
	ix.hits = hitCounts{}
	after, err := ix.Search(ctx, Query{Text: "kiwi", Dense: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(during, after) || len(after.Hits) != 3 || after.Hits[0].Session.NativeID != "late" {
		t.Fatalf("during the import %+v, after it %+v", brief(during.Hits), brief(after.Hits))
	}
}

// TestLazyGroupingIsExact: over the corpus, the grouped ranking that reads only the candidates it needs,
// and the one that reads every candidate's group from the map ev_group, give the same hits (events, scores, representatives, more_in_group, order) and the same more flag as
// grouping every candidate, for common and rare words, limits from 1 to 40 and both scopes that rank
// messages (primary and subagent sessions of the corpus both rank).
func TestLazyGroupingIsExact(t *testing.T) {
	ix := importedIndex(t)
	ctx := context.Background()
	stopped := 0
	for _, text := range []string{"the", "error", "test", "file", "git commit", "README", "function", "a"} {
		for _, scope := range []string{ScopeAll, ScopeTranscript} {
			match, _ := ftsQuery(text, false)
			cands, _, err := ix.candidates(ctx, Query{Text: text}, scope, match)
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{1, 2, 3, 5, 8, 13, 20, 40} {
				lazy, lazyMore, err := ix.rankBy(ctx, cands, limit, false, true, false)
				if err != nil {
					t.Fatal(err)
				}
				full, fullMore, err := ix.rankBy(ctx, cands, limit, false, false, false)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(lazy, full) || lazyMore != fullMore {
					t.Fatalf("%q %s limit %d: lazy %v (more %v), full %v (more %v)", text, scope, limit, brief(lazy), lazyMore, brief(full), fullMore)
				}
				mapped, mappedMore, err := ix.rank(ctx, cands, limit, false)
				if err != nil {
					t.Fatal(err)
				}
				mappedFull, mappedFullMore, err := ix.rankBy(ctx, cands, limit, false, false, true)
				if err != nil || !reflect.DeepEqual(mapped, mappedFull) || mappedMore != mappedFullMore {
					t.Fatalf("limit %d: mapped lazily %v (more %v), all mapped %v (more %v) %v", limit, brief(mapped), mappedMore, brief(mappedFull), mappedFullMore, err)
				}
				if !reflect.DeepEqual(brief(mapped), brief(full)) || mappedMore != fullMore {
					t.Fatalf("%q %s limit %d: mapped %v (more %v), full %v (more %v)", text, scope, limit, brief(mapped), mappedMore, brief(full), fullMore)
				}
				if len(cands) > 4*limit+64 {
					stopped++
				}
			}
		}
	}
	if stopped < 30 {
		t.Fatalf("only %d rankings had enough candidates to stop early", stopped)
	}
}

// TestLazyGroupingIsExactWithSubagents: the same comparison over 150 generated session trees whose
// primary and subagent hits score close to each other (so representatives fall on both sides of the 95 %
// tolerance), several hits per session.
func TestLazyGroupingIsExactWithSubagents(t *testing.T) {
	ix := openTestIndex(t)
	ctx := context.Background()
	root := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 2))
	body := func() string {
		words := make([]string, 0, 40)
		for range 1 + rnd.IntN(3) {
			words = append(words, "kiwi")
		}
		for range rnd.IntN(30) {
			words = append(words, "filler")
		}
		rnd.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
		return `"` + strings.Join(words, " ") + `"`
	}
	var srcs []Source
	for i := range 150 {
		parent := fmt.Sprintf("p%03d", i)
		var recs []string
		for j := range 1 + rnd.IntN(3) {
			recs = append(recs, rec(fmt.Sprintf("%s-%d", parent, j), "user", "/w", body()))
		}
		srcs = append(srcs, writeClaude(t, root, "-w", parent, recs...))
		for k := range rnd.IntN(3) {
			recs = nil
			for j := range 1 + rnd.IntN(3) {
				recs = append(recs, rec(fmt.Sprintf("%s-a%d-%d", parent, k, j), "user", "/w", body()))
			}
			sub := writeClaude(t, root, "-w/"+parent+"/subagents", fmt.Sprintf("agent-%s-%d", parent, k), recs...)
			sub.ParentNative = parent
			srcs = append(srcs, sub)
		}
	}
	if _, err := ix.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	match, _ := ftsQuery("kiwi", false)
	cands, _, err := ix.candidates(ctx, Query{Text: "kiwi"}, ScopeAll, match)
	if err != nil || len(cands) < 300 {
		t.Fatalf("%d candidates, %v", len(cands), err)
	}
	subagentReps := 0
	for _, limit := range []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 60, 90, 120} {
		lazy, lazyMore, err := ix.rankBy(ctx, cands, limit, false, true, false)
		if err != nil {
			t.Fatal(err)
		}
		full, fullMore, err := ix.rankBy(ctx, cands, limit, false, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lazy, full) || lazyMore != fullMore {
			t.Fatalf("limit %d: lazy %v (more %v), full %v (more %v)", limit, brief(lazy), lazyMore, brief(full), fullMore)
		}
		mapped, mappedMore, err := ix.rank(ctx, cands, limit, false)
		if err != nil {
			t.Fatal(err)
		}
		mappedFull, mappedFullMore, err := ix.rankBy(ctx, cands, limit, false, false, true)
		if err != nil || !reflect.DeepEqual(mapped, mappedFull) || mappedMore != mappedFullMore {
			t.Fatalf("limit %d: mapped lazily %v (more %v), all mapped %v (more %v) %v", limit, brief(mapped), mappedMore, brief(mappedFull), mappedFullMore, err)
		}
		if !reflect.DeepEqual(brief(mapped), brief(full)) || mappedMore != fullMore {
			t.Fatalf("limit %d: mapped %v (more %v), full %v (more %v)", limit, brief(mapped), mappedMore, brief(full), fullMore)
		}
		for _, h := range full {
			if h.Session.Scope == "subagent" {
				subagentReps++
			}
		}
	}
	if subagentReps == 0 {
		t.Fatal("no subagent hit represented its group: the data does not test the tolerance")
	}
}

func brief(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%d/%.4f/%s/+%d", h.Event.Seq, h.Score, h.Session.Scope, h.More))
	}
	return out
}

// TestFTSLengthIsFTS5s: over the corpus, the length each event's ev_fts rowid carries is the one FTS5
// recorded (its docsize table), or unknown (and then FTS5's is read when ranking).
func TestFTSLengthIsFTS5s(t *testing.T) {
	ix := importedIndex(t)
	rows, err := ix.db.Query(`SELECT e.fts_len, d.id, d.sz FROM events e JOIN ev_fts_docsize d ON d.id = ` + ftsRowidSQL("e"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, unknown := 0, 0
	for rows.Next() {
		var stored int
		var id int64
		var sz []byte
		if err := rows.Scan(&stored, &id, &sz); err != nil {
			t.Fatal(err)
		}
		var size uint64 // SQLite's varint: big-endian groups of 7 bits
		for i, b := range sz {
			if i == 8 {
				size = size<<8 | uint64(b)
				break
			}
			size = size<<7 | uint64(b&0x7f)
			if b < 0x80 {
				break
			}
		}
		got, ok := ftsrank.Length(id)
		switch {
		case !ok:
			unknown++
			if stored != ftsrank.LenUnknown {
				t.Errorf("rowid %d: unknown length but fts_len %d", id, stored)
			}
		case got != int(size) || got != stored:
			t.Errorf("rowid %d: length %d (fts_len %d), FTS5 recorded %d", id, got, stored, size)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var events int
	if err := ix.db.QueryRow(`SELECT count(*) FROM events`).Scan(&events); err != nil || n != events || n < 500 {
		t.Fatalf("%d ev_fts rows found by their events' lengths, %d events (%v)", n, events, err)
	}
	if unknown > n/100 {
		t.Errorf("%d of %d lengths unknown", unknown, n)
	}
	t.Logf("%d events, %d lengths unknown", n, unknown)
}

// TestSearchWithoutRankFunctions: on the modernc.org/sqlite this module pins, ctx_bm25 and ctx_collect
// are registered (Available: a driver change that breaks that would otherwise only show as a slower
// search); and when they cannot be, searches rank with FTS5's bm25() and give the same candidates with
// the same scores, bit for bit.
func TestSearchWithoutRankFunctions(t *testing.T) {
	ix := importedIndex(t)
	if !ftsrank.Available() {
		t.Fatal("ctx_bm25 could not be registered on this driver's connections")
	}
	ctx := context.Background()
	type run struct {
		cands    []candidate
		windowed bool
	}
	queries := []Query{{Text: "the"}, {Text: "npm run build"}, {Text: "error", Providers: Providers}, {Text: "README"}}
	with := map[int]run{}
	for i, q := range queries {
		match, _ := ftsQuery(q.Text, false)
		c, w, err := ix.candidates(ctx, q, ScopeAll, match)
		if err != nil || len(c) == 0 {
			t.Fatalf("%q: %d candidates, %v", q.Text, len(c), err)
		}
		with[i] = run{c, w}
	}
	defer ftsrank.SetUnavailable()()
	for i, q := range queries {
		match, _ := ftsQuery(q.Text, false)
		c, w, err := ix.candidates(ctx, q, ScopeAll, match)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(with[i], run{c, w}) {
			t.Errorf("%q: bm25() ranks %d candidates differently from ctx_bm25's %d", q.Text, len(c), len(with[i].cands))
		}
	}
}
