package ftsrank

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"modernc.org/libc"
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
	db, unknown := rankTable(t)
	wrongSeen := 0
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

// rankTable is an FTS5 table t of 1,500 rows of random words with lengths in their rowids (some left to
// docsize, event 1500's wrong), one row deleted, and the number of lengths left to docsize.
func rankTable(t *testing.T) (*sql.DB, int) {
	t.Helper()
	db := sql.OpenDB(&Connector{DSN: "file:" + t.TempDir() + "/t.db"})
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1, tokenize='` + Tokenizer + `')`); err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("error test the session todo readme build npm run git commit apply patch hello function onboarding parse meta é naïve 日本")
	rnd := rand.New(rand.NewPCG(5, 6))
	unknown := 0
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
	return db, unknown
}

// TestCollectCountIsBM25: a Count query (the phrase's rows newest first, ctx_collect keeping a window of
// some classes, the document count taken from the rows visited and, past the window, a count of the
// older matches) gives the rows and the scores, to the bit, of bm25() × the class weight over the same
// classes and window, and the phrase's document count in Hits; a query of several phrases with Count
// is counted and scored as without it, filtered and bounded the same way.
func TestCollectCountIsBM25(t *testing.T) {
	db, _ := rankTable(t)
	ctx := context.Background()
	weights := [1 << ClassBits]float64{1, 0.9, 0.8, 0.6, 0.8, 0.8, 0.5, 0.25}
	for _, q := range []string{`"error"`, `"the"`, `"apply patch"`, `"naive"`, `"日本"`, `"zzz"`, `"error" AND "test"`} {
		var total int64
		if err := db.QueryRow(`SELECT count(*) FROM t WHERE t MATCH ?`, q).Scan(&total); err != nil {
			t.Fatal(err)
		}
		for _, classes := range []uint8{0xff, 0b101011, 0b1000} {
			var in []string
			for c := range 1 << ClassBits {
				if classes&(1<<c) != 0 {
					in = append(in, strconv.Itoa(c))
				}
			}
			for _, window := range []int{1, 7, 100, 5000} {
				col := Collector{Weights: weights, Count: true, Classes: classes, Window: window}
				id, done := col.Start()
				var n int
				err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM (SELECT ctx_collect(t, ?) AS c FROM t WHERE t MATCH ?
					ORDER BY rowid DESC) WHERE c = 1 LIMIT ?)`, id, q, window+1).Scan(&n)
				done()
				if err != nil {
					t.Fatal(err)
				}
				nHit := int64(col.Visited)
				if col.Matched > window {
					var older int64
					if err := db.QueryRow(`SELECT count(*) FROM t WHERE t MATCH ? AND rowid < ?`, q, col.Last).Scan(&older); err != nil {
						t.Fatal(err)
					}
					nHit += older
				}
				col.Finish(nHit)
				if nHit != total {
					t.Errorf("%s classes %b window %d: %d rows counted, %d match", q, classes, window, nHit, total)
				}
				rows, err := db.Query(`SELECT rowid, bm25(t) * CASE rowid & 7 `+weightCases(weights)+` END FROM t WHERE t MATCH ? AND (rowid & 7) IN (`+strings.Join(in, ",")+`)
					ORDER BY rowid DESC LIMIT ?`, q, window)
				if err != nil {
					t.Fatal(err)
				}
				var want []Scored
				for rows.Next() {
					var r Scored
					if err := rows.Scan(&r.Rowid, &r.Score); err != nil {
						t.Fatal(err)
					}
					want = append(want, r)
				}
				rows.Close()
				if len(col.Rows) != len(want) {
					t.Fatalf("%s classes %b window %d: %d rows, bm25() %d", q, classes, window, len(col.Rows), len(want))
				}
				for i := range want {
					if Event(want[i].Rowid) == 1500 { // its rowid's length is wrong: its own score
						want[i].Score = col.Rows[i].Score
					}
					if col.Rows[i] != want[i] {
						t.Errorf("%s classes %b window %d, row %d: %+v, bm25() %+v", q, classes, window, i, col.Rows[i], want[i])
					}
				}
				if strings.Contains(q, " AND ") || total == 0 {
					continue
				}
				if len(col.Hits) != 1 || col.Hits[0] != total {
					t.Errorf("%s: Hits %v, want [%d]", q, col.Hits, total)
				}
			}
		}
	}
}

// weightCases is SQL's WHEN c THEN weight of each class.
func weightCases(w [1 << ClassBits]float64) string {
	var b strings.Builder
	for c, v := range w {
		fmt.Fprintf(&b, " WHEN %d THEN %v", c, v)
	}
	return b.String()
}

// TestPositions: instances counted in position-list bytes as xPhraseNext reads them: one varint each,
// multi-byte varints, a column marker (1, the column, then the offset), and truncated or hostile bytes
// never read past the end.
func TestPositions(t *testing.T) {
	tls := libc.NewTLS()
	defer tls.Close()
	for _, c := range []struct {
		b    []byte
		want int
	}{
		{nil, 0},
		{[]byte{0x02}, 1},
		{[]byte{0x02, 0x03, 0x05}, 3},
		{[]byte{0x81, 0x00, 0x02}, 2},
		{[]byte{0x02, 0x01, 0x01, 0x02, 0x03}, 3},
		{[]byte{0x01, 0x81, 0x80, 0x00, 0x85, 0x02}, 1},
		{[]byte{0x81}, 1},
		{[]byte{0x02, 0x01}, 2},
		{[]byte{0x02, 0x01, 0x83}, 2},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, 2},
	} {
		p := tls.Alloc(len(c.b) + 1)
		for i, v := range c.b {
			*(*byte)(cmem(p + uintptr(i))) = v
		}
		*(*byte)(cmem(p + uintptr(len(c.b)))) = 0x02 // past the end: never counted
		if got := positions(p, p+uintptr(len(c.b))); got != c.want {
			t.Errorf("% x: %d instances, want %d", c.b, got, c.want)
		}
		tls.Free(len(c.b) + 1)
	}
}

// TestCollectorOfFindsEach: ctx_collect's lookup finds each registered collector by its id, the one
// started last (its fast path) and the others (the map), and none once done; a collector's done does
// not unregister another started after it.
func TestCollectorOfFindsEach(t *testing.T) {
	var a, b Collector
	idA, doneA := a.Start()
	idB, doneB := b.Start()
	if c, ok := collectorOf(idA); !ok || c != &a {
		t.Fatalf("collectorOf(a) = %p, %v; want %p", c, ok, &a)
	}
	if c, ok := collectorOf(idB); !ok || c != &b {
		t.Fatalf("collectorOf(b) = %p, %v; want %p", c, ok, &b)
	}
	doneA()
	if _, ok := collectorOf(idA); ok {
		t.Fatal("a collector is found after its done")
	}
	if c, ok := collectorOf(idB); !ok || c != &b {
		t.Fatalf("after a's done, collectorOf(b) = %p, %v; want %p", c, ok, &b)
	}
	doneB()
	if _, ok := collectorOf(idB); ok {
		t.Fatal("b is found after its done")
	}
	if _, ok := collectorOf(idB + 1000); ok {
		t.Fatal("an id never started is found")
	}
}
