package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeClaude writes a Claude session file of JSONL records under root/<project>/<name>.jsonl.
func writeClaude(t *testing.T, root, project, name string, recs ...string) Source {
	t.Helper()
	p := filepath.Join(root, project, name+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(recs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Source{Provider: ClaudeCode, Format: FormatClaude, Path: p}
}

func rec(uuid, typ, cwd, content string) string {
	return `{"type":"` + typ + `","uuid":"` + uuid + `","timestamp":"2026-02-01T10:00:00Z","cwd":"` + cwd + `","message":{"role":"` + typ + `","content":` + content + `}}`
}

func setupSearch(t *testing.T) *Index {
	t.Helper()
	root := t.TempDir()
	ix := openTestIndex(t)
	srcs := []Source{
		// A user message and an output with the same words and length, in two sessions.
		writeClaude(t, root, "-a", "sess-msg", rec("m1", "user", "/repo/app", `"the zanzibar flag was set today"`)),
		writeClaude(t, root, "-b", "sess-out",
			rec("o1", "assistant", "/elsewhere", `[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat flags"}}]`),
			rec("o2", "user", "/elsewhere", `[{"type":"tool_result","tool_use_id":"t1","content":"the zanzibar flag was set today"}]`)),
		// A parent with a weak hit and a subagent with strong hits.
		writeClaude(t, root, "-c", "parent-1", rec("p1", "user", "/repo/app", `"quokka appears once in a much longer message about many other unrelated topics entirely"`)),
		writeClaude(t, root, "-c/parent-1/subagents", "agent-k1",
			rec("k1", "user", "/repo/app", `"quokka quokka"`),
			rec("k2", "assistant", "/repo/app", `[{"type":"tool_use","id":"t9","name":"Edit","input":{"file_path":"/repo/app/src/quokka.go","old_string":"a","new_string":"parseSessionMeta"}}]`)),
	}
	srcs[3].ParentNative = "parent-1"
	if _, err := ix.Import(context.Background(), srcs); err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestSearchRanksMessageAboveOutput: the same words score 1.0 in a message and 0.6 in a tool output.
func TestSearchRanksMessageAboveOutput(t *testing.T) {
	ix := setupSearch(t)
	res, err := ix.Search(context.Background(), Query{Text: "zanzibar flag"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || res.Scope != ScopeAll {
		t.Fatalf("hits %+v", res)
	}
	if res.Hits[0].Event.Type != Message || res.Hits[1].Event.Type != ToolOutput || res.Hits[0].Score <= res.Hits[1].Score {
		t.Fatalf("order: %s %.3f, %s %.3f", res.Hits[0].Event.Type, res.Hits[0].Score, res.Hits[1].Event.Type, res.Hits[1].Score)
	}
	if r := res.Hits[1].Score / res.Hits[0].Score; r < 0.55 || r > 0.65 {
		t.Errorf("output/message score ratio %.3f, want 0.6", r)
	}
	if res.Hits[0].Session.NativeID != "sess-msg" || res.Hits[0].Session.ID == "" || !strings.Contains(res.Hits[0].Snippet, "zanzibar") {
		t.Errorf("hit names %+v", res.Hits[0])
	}
	// outputs scope: only the output, at full strength.
	res, err = ix.Search(context.Background(), Query{Text: "zanzibar", Scope: ScopeOutputs})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Event.Type != ToolOutput || res.Scope != ScopeOutputs {
		t.Fatalf("outputs scope: %+v %v", res, err)
	}
}

// TestSearchGroupsByRoot: a root and its subagent form one group, shown once, with the stronger child
// hit when the primary's is weaker than 95 % of it; primary_only drops the child.
func TestSearchGroupsByRoot(t *testing.T) {
	ix := setupSearch(t)
	ctx := context.Background()
	res, err := ix.Search(ctx, Query{Text: "quokka", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Session.Scope != "subagent" || res.Hits[0].More != 2 || !res.MoreAvailable {
		t.Fatalf("grouped: %+v", res)
	}
	dense, err := ix.Search(ctx, Query{Text: "quokka", Dense: true})
	if err != nil || len(dense.Hits) != 3 {
		t.Fatalf("dense: %+v %v", dense, err)
	}
	prim, err := ix.Search(ctx, Query{Text: "quokka", PrimaryOnly: true})
	if err != nil || len(prim.Hits) != 1 || prim.Hits[0].Session.NativeID != "parent-1" {
		t.Fatalf("primary only: %+v %v", prim, err)
	}
}

// TestSearchFilters: identifiers split, file and repo filters, bad requests, FTS syntax in the query.
func TestSearchFilters(t *testing.T) {
	ix := setupSearch(t)
	ctx := context.Background()
	res, err := ix.Search(ctx, Query{Text: "session meta"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Event.Type != ToolCall {
		t.Fatalf("camelCase split: %+v %v", res, err)
	}
	res, err = ix.Search(ctx, Query{Text: "quokka", File: "/repo/app/src/", Dense: true})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Event.Files[0].Path != "/repo/app/src/quokka.go" {
		t.Fatalf("file prefix: %+v %v", res, err)
	}
	res, err = ix.Search(ctx, Query{Text: "zanzibar", Repo: "/repo"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Session.CWD != "/repo/app" {
		t.Fatalf("repo: %+v %v", res, err)
	}
	res, err = ix.Search(ctx, Query{Text: "zanzibar", Repo: "/rep"})
	if err != nil || len(res.Hits) != 0 {
		t.Fatalf("repo is a directory prefix, not a string prefix: %+v %v", res, err)
	}
	res, err = ix.Search(ctx, Query{Text: "zanzibar", Providers: []Provider{Codex}})
	if err != nil || len(res.Hits) != 0 {
		t.Fatalf("provider: %+v %v", res, err)
	}
	for _, q := range []Query{{Text: "   "}, {Text: "x", Scope: "everything"}, {Text: "x", Scope: ScopeCalls, EventType: Message}, {Text: "x", Limit: 501}} {
		if _, err := ix.Search(ctx, q); !errors.Is(err, ErrBadQuery) {
			t.Errorf("%+v: err %v, want ErrBadQuery", q, err)
		}
	}
	for _, q := range []string{`zanzibar" OR "x`, `NEAR(a b)`, `*`, `col:zanzibar`, `"unbalanced`} {
		if _, err := ix.Search(ctx, Query{Text: q}); err != nil && !errors.Is(err, ErrBadQuery) {
			t.Errorf("%q: %v", q, err)
		}
	}
	// no event has both words: relaxed to any word
	res, err = ix.Search(ctx, Query{Text: "zanzibar quokka"})
	if err != nil || !res.Relaxed || len(res.Hits) < 2 {
		t.Fatalf("relaxed: %+v %v", res, err)
	}
}

// TestShowPrefixes: sessions and events resolve by a unique prefix of ≥ 8 hex digits.
func TestShowPrefixes(t *testing.T) {
	ix := setupSearch(t)
	ctx := context.Background()
	id := SessionID(ClaudeCode, "sess-out")
	s, err := ix.Session(ctx, id[:8])
	if err != nil || s.ID != id || s.EventCount != 2 {
		t.Fatalf("%+v %v", s, err)
	}
	evs, _ := ix.Events(ctx, id, 0, 0)
	e, around, err := ix.Event(ctx, evs[1].ID[:13], 1)
	if err != nil || e.ID != evs[1].ID || len(around) != 2 || e.Tool.Name != "Bash" {
		t.Fatalf("event: %+v %v %v", e, around, err)
	}
	if _, err := ix.Session(ctx, "0000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("short prefix: %v", err)
	}
}

// TestSearchTimeBounds: since/until bound event times; events without a time never match a bound.
func TestSearchTimeBounds(t *testing.T) {
	ix := setupSearch(t) // every record at 2026-02-01T10:00:00Z
	ctx := context.Background()
	at := func(s string) time.Time { tt, _ := time.Parse(time.RFC3339, s); return tt }
	for _, c := range []struct {
		since, until string
		want         int
	}{
		{"2026-02-01T10:00:00Z", "", 2},
		{"2026-02-01T10:00:01Z", "", 0},
		{"", "2026-02-01T10:00:01Z", 2},
		{"", "2026-02-01T10:00:00Z", 0},
	} {
		q := Query{Text: "zanzibar"}
		if c.since != "" {
			q.Since = at(c.since)
		}
		if c.until != "" {
			q.Until = at(c.until)
		}
		res, err := ix.Search(ctx, q)
		if err != nil || len(res.Hits) != c.want {
			t.Errorf("since %q until %q: %d hits, want %d (%v)", c.since, c.until, len(res.Hits), c.want, err)
		}
	}
}

// TestImportCancelledLeavesNothing: an import stopped by its context writes nothing half: the index is as
// before.
func TestImportCancelledLeavesNothing(t *testing.T) {
	ix := openTestIndex(t)
	root := t.TempDir()
	srcs := []Source{writeClaude(t, root, "-a", "s1", rec("m1", "user", "/w", `"one"`)), writeClaude(t, root, "-a", "s2", rec("m2", "user", "/w", `"two"`))}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.Import(ctx, srcs); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	st, err := ix.Stats(context.Background())
	if err != nil || st.Events != 0 || st.Sessions != 0 || st.Sources != 0 || st.Generation != 0 {
		t.Fatalf("after a cancelled import: %+v %v", st, err)
	}
	if st, err := ix.Import(context.Background(), srcs); err != nil || st.Imported != 2 {
		t.Fatalf("import after: %+v %v", st, err)
	}
}

// TestSearchHydratesEveryHit: the hits' events and sessions, read together for all hits, are those the
// one-at-a-time readers (Event, Session) return, across sessions, a subagent and an event with a tool.
func TestSearchHydratesEveryHit(t *testing.T) {
	ix := setupSearch(t)
	ctx := context.Background()
	for _, q := range []Query{{Text: "quokka"}, {Text: "zanzibar"}, {Text: "quokka zanzibar flag", Dense: true}} {
		res, err := ix.Search(ctx, q)
		if err != nil || len(res.Hits) < 2 {
			t.Fatalf("%q: %+v %v", q.Text, res, err)
		}
		for _, h := range res.Hits {
			e, _, err := ix.Event(ctx, h.Event.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ix.Session(ctx, e.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h.Event, e) || !reflect.DeepEqual(h.Session, s) || h.Session.ID != e.SessionID {
				t.Errorf("%q: hit %+v / %+v, read alone %+v / %+v", q.Text, h.Event, h.Session, e, s)
			}
		}
	}
}

// TestBestFirstIsSortPrefix: bestFirst gives the first k of a full sort, for random and adversarial
// inputs (sorted, reversed, equal scores told apart by rowid) and every k around the edges.
func TestBestFirstIsSortPrefix(t *testing.T) {
	less := func(a, b candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.rowid, b.rowid)
	}
	rnd := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 3, 10, 100, 2500} {
		for _, shape := range []string{"random", "sorted", "reversed", "ties"} {
			s := make([]candidate, n)
			for i := range s {
				s[i] = candidate{rowid: int64(i), score: rnd.Float64()}
				switch shape {
				case "sorted":
					s[i].score = float64(n - i)
				case "reversed":
					s[i].score = float64(i)
				case "ties":
					s[i].score = float64(rnd.IntN(3))
				}
			}
			rnd.Shuffle(len(s), func(i, j int) {
				if shape == "random" || shape == "ties" {
					s[i], s[j] = s[j], s[i]
				}
			})
			want := slices.Clone(s)
			slices.SortFunc(want, less)
			for _, k := range []int{1, 2, n / 2, n - 1, n, n + 1, 2000} {
				if k < 1 {
					continue
				}
				got := bestFirst(slices.Clone(s), k, less)
				if !slices.Equal(got, want[:min(k, n)]) {
					t.Fatalf("n %d %s k %d: %v, want %v", n, shape, k, got[:min(len(got), 5)], want[:min(k, n, 5)])
				}
			}
		}
	}
}

// TestHitCountsFollowGeneration: a long-lived index reuses a query's document counts only at the
// generation they were counted at: poisoned counts of the current generation change the scores (they
// are used), of another generation they are counted again; after an import the scores are a fresh
// index's.
func TestHitCountsFollowGeneration(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	importCorpus(t, ix)
	scores := func(ix *Index) []float64 {
		t.Helper()
		res, err := ix.Search(ctx, Query{Text: "error", Limit: 30, Dense: true})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("search: %+v %v", res, err)
		}
		var out []float64
		for _, h := range res.Hits {
			out = append(out, h.Score)
		}
		return out
	}
	first := scores(ix)
	if again := scores(ix); !slices.Equal(again, first) {
		t.Fatalf("second search %v, first %v", again, first)
	}
	match, _ := ftsQuery("error", false)
	_, gen, ok := ix.hits.get(match)
	if !ok {
		t.Fatal("no counts kept")
	}
	ix.hits.put(match, gen, []int64{1})
	if poisoned := scores(ix); slices.Equal(poisoned, first) {
		t.Fatal("counts of the current generation were not used")
	}
	ix.hits.put(match, "other", []int64{1})
	if s := scores(ix); !slices.Equal(s, first) {
		t.Fatalf("counts of another generation were used: %v, want %v", s, first)
	}
	src := writeClaude(t, t.TempDir(), "-a", "s1", rec("u1", "user", "/w", `"an error and another error"`))
	if _, err := ix.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if s, want := scores(ix), scores(fresh); !slices.Equal(s, want) || slices.Equal(s, first) {
		t.Fatalf("after an import: %v, a fresh index %v (before %v)", s, want, first)
	}
}

// TestSearchQueryWithNUL: a NUL inside a query word separates words, as white space does: the search
// answers (it was SQLite's "unterminated string", an internal error), and a query of NULs alone has no
// words (ErrBadQuery).
func TestSearchQueryWithNUL(t *testing.T) {
	ix := importedIndex(t)
	ctx := context.Background()
	want, err := ix.Search(ctx, Query{Text: "git commit"})
	if err != nil || len(want.Hits) == 0 {
		t.Fatalf("git commit: %d hits, %v", len(want.Hits), err)
	}
	got, err := ix.Search(ctx, Query{Text: "git\x00commit\x00"})
	if err != nil {
		t.Fatalf("git NUL commit NUL: %v", err)
	}
	if len(got.Hits) != len(want.Hits) || got.Hits[0].Event.ID != want.Hits[0].Event.ID {
		t.Errorf("git NUL commit: %d hits, want the %d of git commit", len(got.Hits), len(want.Hits))
	}
	if _, err := ix.Search(ctx, Query{Text: "\x00\x00"}); !errors.Is(err, ErrBadQuery) {
		t.Errorf("NULs alone: %v, want ErrBadQuery", err)
	}
}

// TestQueryWordBound: a query of more than MaxQueryWords words is refused with ErrBadQuery
// (its 33rd word was dropped silently: a query whose last word matched gave no hits); 32 are searched.
func TestQueryWordBound(t *testing.T) {
	ix := openTestIndex(t)
	words := func(n int) string {
		var w []string
		for i := range n - 1 {
			w = append(w, fmt.Sprintf("x%d", i))
		}
		return strings.Join(append(w, "todo"), " ")
	}
	if _, err := ix.Search(context.Background(), Query{Text: words(32)}); err != nil {
		t.Fatalf("32 words: %v", err)
	}
	_, err := ix.Search(context.Background(), Query{Text: words(33)})
	if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "more than 32 words") {
		t.Fatalf("33 words: %v", err)
	}
}
