package ftsrank

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRowidBounds: the layout holds every class, length and event up to their bounds; a length too
// long, negative or not counted is LenUnknown.
func TestRowidBounds(t *testing.T) {
	for _, c := range []struct {
		event       int64
		class, n    int
		ok          bool
		wantN       int
		wantKnownOK bool
	}{
		{1, 0, 0, true, 0, true},
		{MaxEvent, 1<<ClassBits - 1, LenUnknown - 1, true, LenUnknown - 1, true},
		{42, 3, LenUnknown, true, LenUnknown, false},
		{42, 3, 1 << 30, true, LenUnknown, false},
		{42, 3, -1, true, LenUnknown, false},
		{42, 5, 7, false, LenUnknown, false},
	} {
		r := Rowid(c.event, c.class, c.n, c.ok)
		n, ok := Length(r)
		if r < 0 || Event(r) != c.event || Class(r) != c.class || n != c.wantN || ok != c.wantKnownOK {
			t.Errorf("%+v: rowid %d → event %d class %d length %d %v", c, r, Event(r), Class(r), n, ok)
		}
	}
	if Rowid(2, 0, 0, true) <= Rowid(1, 7, LenUnknown, false) {
		t.Error("rowids do not follow events")
	}
}

// TestRankIsBM25: ctx_bm25 gives bm25()'s score, to the bit, for one word, several, a phrase, OR, a
// word in most documents (IDF floor), with the length from the rowid and from docsize (LenUnknown).
func TestRankIsBM25(t *testing.T) {
	db := sql.OpenDB(&Connector{DSN: "file:" + t.TempDir() + "/t.db"})
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1, tokenize='` + Tokenizer + `')`); err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("error test the session todo readme build npm run git commit apply patch hello function onboarding parse meta é naïve 日本")
	rnd := rand.New(rand.NewPCG(5, 6))
	unknown, wrongSeen := 0, 0
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 1500; i++ {
		var b strings.Builder
		for range 1 + rnd.IntN(40) {
			b.WriteString(words[rnd.IntN(len(words))])
			b.WriteString([]string{" ", ", ", "_", "\n"}[rnd.IntN(4)])
		}
		n, ok := TokenCount(b.String())
		if i%97 == 0 { // some lengths left to FTS5
			ok = false
			unknown++
		}
		if i == 1500 {
			n++ // a wrong length: the rowid's is the one used
		}
		if _, err := tx.Exec(`INSERT INTO t(rowid, body) VALUES(?,?)`, Rowid(int64(i), i%6, n, ok), b.String()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM t WHERE rowid = ?`, Rowid(10, 4, 0, false)); err != nil { // a deleted row changes the totals
		t.Fatal(err)
	}
	for _, q := range []string{`"error"`, `"the"`, `"error" AND "test"`, `"npm" AND "run" AND "build"`, `"apply patch"`, `"hello" OR "onboarding"`, `"naive"`, `"日本"`, `"zzz"`} {
		rows, err := db.QueryContext(context.Background(), `SELECT rowid, bm25(t), ctx_bm25(t) FROM t WHERE t MATCH ?`, q)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id int64
			var want, got float64
			if err := rows.Scan(&id, &want, &got); err != nil {
				t.Fatal(err)
			}
			if Event(id) == 1500 {
				wrongSeen++
				if got == want {
					t.Errorf("%s: the wrong length of event 1500 did not change its score", q)
				}
				continue
			}
			if got != want {
				t.Errorf("%s, rowid %d: ctx_bm25 %v, bm25 %v", q, id, got, want)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if q != `"zzz"` && n == 0 {
			t.Errorf("%s: no match", q)
		}
		t.Log(q, n, "rows")
	}
	if unknown == 0 || wrongSeen == 0 {
		t.Fatalf("%d lengths left to docsize, the wrong length scored %d times", unknown, wrongSeen)
	}
}
