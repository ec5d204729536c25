package storesearch

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/mcp/searchpage"
)

func TestWordsAndTerms(t *testing.T) {
	if got, want := Words("parseSessionMeta, README-2 ünïCödé"), []string{"parsesessionmeta", "parse", "session", "meta", "readme", "2", "ünïcödé", "ünï", "cödé"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
	// a word repeating the one before it counts once; further apart, twice (as ranked since version 1)
	if got, want := Terms("test test error test"), []string{"test", "error", "test"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

// TestRank: documents with every word first; else any word (several words); scores rounded, weights
// applied, ties in the documents' order, snippets around the phrase.
func TestRank(t *testing.T) {
	entry := func(key, text string) Doc {
		return Doc{Res: searchpage.Result{Provider: Provider, Kind: "knowledge", Key: key}, Text: text, Body: text, Weight: 1}
	}
	docs := []Doc{entry("a", "the onboarding guide"), entry("b", "README and onboarding"), entry("c", "nothing here"),
		CommitDoc("abc", "b", "README: onboarding", "set", "agent", "s1", time.Unix(0, 0))}
	got, err := Rank(context.Background(), docs, "README onboarding", Terms("README onboarding"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != "b" || got[1].Kind != "commit" || !got[0].Rep {
		t.Fatalf("Rank = %+v", got)
	}
	if got[0].Score <= got[1].Score || got[0].Score != searchpage.Round(got[0].Score) {
		t.Errorf("scores %v, %v", got[0].Score, got[1].Score)
	}
	// none has both words: any word
	got, _ = Rank(context.Background(), docs, "guide nothing", Terms("guide nothing"))
	if len(got) != 2 {
		t.Errorf("relaxed: %+v", got)
	}
	long := strings.Repeat("x ", 100) + "needle" + strings.Repeat(" y", 100)
	if s := Snippet(long, long, "needle", []string{"needle"}); !strings.HasPrefix(s, "…") || !strings.Contains(s, "needle") || !strings.HasSuffix(s, "…") {
		t.Errorf("Snippet = %q", s)
	}
}

// TestMergeHits: the index's representatives and the store's hits by score, then the index's other hits.
func TestMergeHits(t *testing.T) {
	ix := []searchpage.Result{{Key: "r1", Score: 1, Rep: true}, {Key: "m1", Score: 5}, {Key: "r2", Score: 3, Rep: true}}
	got := MergeHits(ix, []searchpage.Result{{Key: "c", Score: 2, Rep: true}})
	var keys []string
	for _, h := range got {
		keys = append(keys, h.Key)
	}
	if want := []string{"r2", "c", "r1", "m1"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("MergeHits order %q, want %q", keys, want)
	}
}

// TestOpenReadRefuses: no file, not a regular file, not SQLite: errors, nothing created.
func TestOpenReadRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenRead(context.Background(), dir); err == nil {
		t.Error("no copy: opened")
	}
}

// TestSearchReadsOnlyHoldersDocs: Search over a copy ranks as Rank over every document of it (ties in
// the documents' order, the relaxed any-word pass, commits), reading the docs rows of the documents that
// hold a word of the query only, and none for words no document holds.
func TestSearchReadsOnlyHoldersDocs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(Schema + fmt.Sprintf(`PRAGMA user_version = %d;`, Version)); err != nil {
		t.Fatal(err)
	}
	type doc struct {
		cls         int
		name, title string
		body        string
	}
	docs := []doc{
		{0, "a", "onboarding", "the onboarding guide for new people"},
		{0, "b", "readme", "README and onboarding, onboarding again"},
		{0, "c", "same", "the onboarding guide for new people"}, // a tie with a
		{1, "d", "conv", "nothing here but a guide"},
		{2, "e", "dec", "decided: README first"},
		{ClassCommit, "f", "README: onboarding", "README: onboarding"},
	}
	for i, d := range docs {
		id := fmt.Sprintf("e:%d/%s", d.cls, d.name)
		at := time.Unix(int64(1000+i), 0).UTC().Format(time.RFC3339)
		kind, event := Kinds[min(d.cls, len(Kinds)-1)], ""
		if d.cls == ClassCommit {
			id, kind, event = "c:"+d.name, "commit", d.name
		}
		ws := Words(d.title + " " + d.name + " " + d.body)
		if _, err := db.Exec(`INSERT INTO docs VALUES(?, ?, 0, ?, ?, ?, ?, ?, '', ?, ?, ?, ?)`, d.cls, d.name, id, kind, d.name, d.title,
			"context://"+kind+"/"+d.name, event, at, d.name+".md", len(ws)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO bodies VALUES(?, ?)`, id, d.body); err != nil {
			t.Fatal(err)
		}
		tf := map[string]int{}
		for _, w := range ws {
			tf[w]++
		}
		for w, n := range tf {
			if _, err := db.Exec(`INSERT INTO terms VALUES(?, ?, ?)`, w, id, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := ReadDocs(ctx, db)
	if err != nil || len(all) != len(docs) {
		t.Fatalf("ReadDocs: %d docs, %v", len(all), err)
	}
	for _, q := range []string{"onboarding", "README onboarding", "guide nothing", "guide", "README", "decided zzz", "zzz", "zzz yyy", "the"} {
		terms := Terms(q)
		tfs, err := ReadTerms(ctx, db, terms)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Rank(ctx, WithTerms(all, tfs, db), q, terms)
		if err != nil {
			t.Fatal(err)
		}
		holders := 0
		for _, d := range all {
			if tfs[d.ID] != nil {
				holders++
			}
		}
		before := DocsRead.Load()
		got, err := Search(ctx, db, q, -1)
		if err != nil {
			t.Fatal(err)
		}
		if read := DocsRead.Load() - before; read != int64(holders) {
			t.Errorf("%q: read %d docs rows, want the %d holders", q, read, holders)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: Search = %+v\nwant (Rank over every document) %+v", q, got, want)
		}
		if strings.Contains(q, "zzz") && q != "decided zzz" && got != nil {
			t.Errorf("%q: hits %+v", q, got)
		}
		// With a bound on the snippets: the same hits in the same order, the first n with their
		// snippets, the others without, and only their bodies read.
		for n := range 3 {
			bodies := BodiesRead.Load()
			some, err := Search(ctx, db, q, n)
			if err != nil {
				t.Fatal(err)
			}
			if read, wantRead := BodiesRead.Load()-bodies, min(n, len(want)); read != int64(wantRead) {
				t.Errorf("%q, %d snippets: read %d bodies, want %d", q, n, read, wantRead)
			}
			if len(some) != len(want) {
				t.Fatalf("%q, %d snippets: %d hits, want %d", q, n, len(some), len(want))
			}
			for i := range want {
				w := want[i]
				if i >= n {
					w.Snippet = ""
				}
				if !reflect.DeepEqual(some[i], w) {
					t.Errorf("%q, %d snippets: hit %d = %+v\nwant %+v", q, n, i, some[i], w)
				}
			}
		}
	}
}
