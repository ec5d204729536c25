// Package ftsrank gives the history index's FTS5 table a ranking function of its own, ctx_bm25: FTS5's
// bm25() (k1 1.2, b 0.75, no column weights), the same arithmetic in the same order, except that the
// document's length in tokens is read from the rowid (Rowid packs it there) instead of from FTS5's
// docsize table. bm25() runs a statement on that table for every scored row, about a third of a search
// over a common word (bench/README.md, fourth round). A length too long for its bits (or of a body
// TokenCount could not count) is read from docsize as bm25() does, so scores are bm25()'s, bit for bit.
//
// modernc.org/sqlite registers no FTS5 auxiliary function from Go: the function is created through the
// transpiled C API (modernc.org/sqlite/lib) on each connection a Connector opens, with the connection's
// handle read from the driver's connection by reflection. When that is not possible (a driver whose
// connection no longer holds the handle), Connect returns the connection without them and Available
// reports false: the history index then ranks with bm25() itself, with the same scores
// (history's TestSearchWithoutRankFunctions checks both).
package ftsrank

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Tokenizer is the FTS5 tokenizer TokenCount counts the tokens of: the history index's.
const Tokenizer = "unicode61 remove_diacritics 2"

// Rowid layout (low bits first): ClassBits of class, LenBits of document length, then the event's rowid.
const (
	ClassBits = 3
	LenBits   = 16
	// LenUnknown in the length bits: the length is FTS5's (docsize), not the rowid's.
	LenUnknown = 1<<LenBits - 1
	// MaxEvent is the largest event rowid a Rowid holds.
	MaxEvent = 1<<(63-ClassBits-LenBits) - 1
)

// Rowid is the FTS5 rowid of an event's body: the event's rowid (at most MaxEvent), the body's length in
// tokens (TokenCount; a length of LenUnknown or more, or ok false, stores LenUnknown) and its class
// (below 1<<ClassBits).
func Rowid(event int64, class int, length int, ok bool) int64 {
	if !ok || length >= LenUnknown || length < 0 {
		length = LenUnknown
	}
	return event<<(ClassBits+LenBits) | int64(length)<<ClassBits | int64(class)
}

// Event is the event rowid of an FTS5 rowid.
func Event(rowid int64) int64 { return rowid >> (ClassBits + LenBits) }

// Class is the class of an FTS5 rowid.
func Class(rowid int64) int { return int(rowid & (1<<ClassBits - 1)) }

// Length is the document length an FTS5 rowid carries, ok false for LenUnknown.
func Length(rowid int64) (int, bool) {
	n := int(rowid >> ClassBits & LenUnknown)
	return n, n != LenUnknown
}

// Connector opens connections to the SQLite database dsn (modernc.org/sqlite's DSN) with ctx_bm25
// registered on each.
type Connector struct {
	DSN string
	drv sqlite.Driver
}

// Connect opens a connection and registers ctx_bm25 and ctx_collect on it. When they cannot be
// registered (a modernc.org/sqlite whose connection no longer holds the handle this package reads), the
// connection is returned without them and Available reports false from then on: the index ranks with
// FTS5's own bm25() instead, the same scores, at the speed of before (history's search checks Available).
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := c.drv.Open(c.DSN)
	if err != nil {
		return nil, err
	}
	if unavailable.Load() {
		return conn, nil
	}
	if err := Register(conn); err != nil {
		unavailable.Store(true)
	}
	return conn, nil
}

// unavailable is set once ctx_bm25 could not be registered on a connection (or by SetUnavailable).
var unavailable atomic.Bool

// Available reports whether the connections of Connectors have ctx_bm25 and ctx_collect; false once one
// could not get them, after which no connection gets them (so every connection ranks alike).
func Available() bool { return !unavailable.Load() }

// SetUnavailable makes Available report false, as when registering fails, and returns the function that
// puts it back: for the tests of the fallback to bm25().
func SetUnavailable() (restore func()) {
	old := unavailable.Swap(true)
	return func() { unavailable.Store(old) }
}

// Driver is the driver of the connections.
func (c *Connector) Driver() driver.Driver { return &c.drv }

// handle is the sqlite3 handle and the libc thread state of a modernc.org/sqlite connection.
func handle(conn driver.Conn) (db uintptr, tls *libc.TLS, err error) {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, nil, fmt.Errorf("ftsrank: %T is not a modernc.org/sqlite connection", conn)
	}
	s := v.Elem()
	fdb, ftls := s.FieldByName("db"), s.FieldByName("tls")
	if !fdb.IsValid() || fdb.Kind() != reflect.Uintptr || !ftls.IsValid() || ftls.Type() != reflect.TypeFor[*libc.TLS]() {
		return 0, nil, fmt.Errorf("ftsrank: %T has no sqlite3 handle this package knows", conn)
	}
	db = *(*uintptr)(unsafe.Pointer(fdb.UnsafeAddr()))
	tls = *(**libc.TLS)(unsafe.Pointer(ftls.UnsafeAddr()))
	if db == 0 || tls == nil {
		return 0, nil, errors.New("ftsrank: the connection is closed")
	}
	return db, tls, nil
}

// cfunc is the C function pointer of the Go function f, as modernc.org/sqlite makes its own (the
// function value's code pointer, https://golang.org/s/go11func).
func cfunc[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f})) }

// Register creates ctx_bm25 on conn, a modernc.org/sqlite connection not in use.
func Register(conn driver.Conn) error {
	db, tls, err := handle(conn)
	if err != nil {
		return err
	}
	zSQL, err := libc.CString("SELECT fts5(?1)")
	if err != nil {
		return fmt.Errorf("ftsrank: %w", err)
	}
	defer libc.Xfree(tls, zSQL)
	zType, err := libc.CString("fts5_api_ptr")
	if err != nil {
		return fmt.Errorf("ftsrank: %w", err)
	}
	defer libc.Xfree(tls, zType)
	zName, err := libc.CString("ctx_bm25")
	if err != nil {
		return fmt.Errorf("ftsrank: %w", err)
	}
	defer libc.Xfree(tls, zName)
	p := tls.Alloc(16) // the statement at p, the fts5_api pointer at p+8
	defer tls.Free(16)
	*uptr(p), *uptr(p + 8) = 0, 0
	if rc := sqlite3.Xsqlite3_prepare_v2(tls, db, zSQL, -1, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("ftsrank: prepare fts5(): %s", libc.GoString(sqlite3.Xsqlite3_errmsg(tls, db)))
	}
	stmt := *uptr(p)
	sqlite3.Xsqlite3_bind_pointer(tls, stmt, 1, p+8, zType, 0)
	sqlite3.Xsqlite3_step(tls, stmt)
	sqlite3.Xsqlite3_finalize(tls, stmt)
	api := *uptr(p + 8)
	if api == 0 {
		return errors.New("ftsrank: SQLite has no FTS5")
	}
	a := (*sqlite3.Tfts5_api)(cmem(api))
	if a.FiVersion < 2 {
		return fmt.Errorf("ftsrank: fts5_api version %d", a.FiVersion)
	}
	create := *(*func(*libc.TLS, uintptr, uintptr, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{a.FxCreateFunction}))
	if rc := create(tls, api, zName, 0, cfunc(rank), 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("ftsrank: create ctx_bm25: error %d", rc)
	}
	zCollect, err := libc.CString("ctx_collect")
	if err != nil {
		return fmt.Errorf("ftsrank: %w", err)
	}
	defer libc.Xfree(tls, zCollect)
	if rc := create(tls, api, zCollect, 0, cfunc(collect), 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("ftsrank: create ctx_collect: error %d", rc)
	}
	return nil
}

// Scored is a row a Collector gathered: its rowid and its score, ctx_bm25 × the weight of its class.
type Scored struct {
	Rowid int64
	Score float64
}

// Collector gathers the rows of one query whose result column is ctx_collect(table, id): each row's
// rowid and ctx_bm25(table) × Weights[Class(rowid)], appended to Rows in the order SQLite evaluates them.
// ctx_collect returns 0. One statement then returns one row (e.g. the count of a subquery's) however
// many rows it scores, without database/sql's cost per row.
type Collector struct {
	Weights [1 << ClassBits]float64
	Rows    []Scored
	// Hits, when it holds one count per phrase of the query, are the numbers of rows each phrase matches
	// (what bm25() counts for its IDFs, walking each phrase's whole doclist), taken as they are; else the
	// query counts them and leaves them here. A caller keeps them for the next query of the same phrases
	// over the same index contents.
	Hits []int64

	// Count is for a query of one phrase whose statement visits the rows the phrase matches newest
	// first, with the MATCH its only condition: the rows it visits then count toward the phrase's
	// document count (what bm25() counts with a walk of the phrase's whole doclist, xQueryPhrase, not
	// made here). Each visited row is counted in Visited and its rowid left in Last; a row of a class in
	// Classes (bit c for class c) is counted in Matched, collected into Rows while Matched is at most
	// Window (every one when Window is 0), and gets 1 from ctx_collect (0 otherwise), so that the
	// statement can stop after Window+1 of them (e.g. WHERE c = 1 LIMIT Window+1). Finish then scores
	// the rows with the document count it is given: the IDF is only known then. A query of several
	// phrases (or with Hits preset) is counted as without Count, and filtered and bounded the same way.
	Count   bool
	Classes uint8
	Window  int
	Visited int
	Matched int
	Last    int64

	fts      uintptr // the FTS5 cursor data belongs to
	data     *queryData
	deferred bool // Rows hold each row's term-frequency part (tfPart), scored by Finish
}

var collectors sync.Map // int64 → *Collector

var nextCollector atomic.Int64

// started is a collector and its id, as Start registered them.
type started struct {
	id int64
	c  *Collector
}

// lastStarted is the collector Start registered last, while it is registered: a statement usually runs
// alone, and ctx_collect, called once per row, finds its collector here by id before it looks in
// collectors (a map lookup per row was 2 % of a search's CPU).
var lastStarted atomic.Pointer[started]

// Start registers c for the queries that pass id to ctx_collect, until done is called.
func (c *Collector) Start() (id int64, done func()) {
	id = nextCollector.Add(1)
	collectors.Store(id, c)
	r := &started{id: id, c: c}
	lastStarted.Store(r)
	return id, func() {
		lastStarted.CompareAndSwap(r, nil)
		collectors.Delete(id)
	}
}

// collectorOf is the collector registered under id, ok false when none is.
func collectorOf(id int64) (*Collector, bool) {
	if r := lastStarted.Load(); r != nil && r.id == id {
		return r.c, true
	}
	c, ok := collectors.Load(id)
	if !ok {
		return nil, false
	}
	return c.(*Collector), true
}

// collect is ctx_collect(table, id).
func collect(tls *libc.TLS, pApi, pFts, pCtx uintptr, nVal int32, apVal uintptr) {
	if nVal != 1 {
		zErr, _ := libc.CString("ctx_collect: one argument, the collector")
		sqlite3.Xsqlite3_result_error(tls, pCtx, zErr, -1)
		libc.Xfree(tls, zErr)
		return
	}
	col, ok := collectorOf(sqlite3.Xsqlite3_value_int64(tls, *uptr(apVal)))
	if !ok {
		zErr, _ := libc.CString("ctx_collect: no such collector")
		sqlite3.Xsqlite3_result_error(tls, pCtx, zErr, -1)
		libc.Xfree(tls, zErr)
		return
	}
	api := (*sqlite3.TFts5ExtensionApi)(cmem(pApi))
	if col.data == nil || col.fts != pFts { // the query's data, kept here rather than looked up per row
		d, deferred, rc := getDataFor(tls, api, pFts, &col.Hits, col.Count)
		if rc != sqlite3.SQLITE_OK {
			sqlite3.Xsqlite3_result_error_code(tls, pCtx, rc)
			return
		}
		col.data, col.fts, col.deferred = d, pFts, deferred
	}
	rowid := call[func(*libc.TLS, uintptr) int64](api.FxRowid)(tls, pFts)
	if col.Count {
		col.Visited++
		col.Last = rowid
		if col.Classes&(1<<Class(rowid)) == 0 {
			sqlite3.Xsqlite3_result_int(tls, pCtx, 0)
			return
		}
		if col.Matched++; col.Window > 0 && col.Matched > col.Window {
			sqlite3.Xsqlite3_result_int(tls, pCtx, 1)
			return
		}
	}
	var v float64
	var rc int32
	if col.deferred {
		v, rc = tfPart(tls, api, pFts, col.data, rowid)
	} else {
		var bm float64
		if bm, rc = score(tls, api, pFts, col.data, rowid); rc == sqlite3.SQLITE_OK {
			v = bm * col.Weights[Class(rowid)]
		}
	}
	if rc != sqlite3.SQLITE_OK {
		sqlite3.Xsqlite3_result_error_code(tls, pCtx, rc)
		return
	}
	col.Rows = append(col.Rows, Scored{Rowid: rowid, Score: v})
	if col.Count {
		sqlite3.Xsqlite3_result_int(tls, pCtx, 1)
		return
	}
	sqlite3.Xsqlite3_result_int(tls, pCtx, 0)
}

// Finish completes a Count query's scores once its statement has run, nHit the phrase's document
// count (Visited when the statement visited every match, else Visited plus the matches older than
// Last): the rows collected without the IDF get ctx_bm25 × their class's weight, the same arithmetic as
// a row scored as it is visited, and Hits is set to nHit. It does nothing when the rows were scored as
// they were visited (several phrases, Hits preset, or no row).
func (c *Collector) Finish(nHit int64) {
	if !c.deferred {
		return
	}
	c.deferred = false
	tls := libc.NewTLS()
	defer tls.Close()
	idf := idfOf(tls, c.data.nRow, nHit)
	c.Hits = []int64{nHit}
	for i := range c.Rows {
		score := float64(0)
		score = score + float64(idf*c.Rows[i].Score)
		c.Rows[i].Score = float64(-float64(1)*score) * c.Weights[Class(c.Rows[i].Rowid)]
	}
}

// queryData is what bm25() computes once per query (FTS5's Fts5Bm25Data): each phrase's IDF, the
// average document length, and a scratch array of phrase frequencies.
type queryData struct {
	idf, freq []float64
	avgdl     float64
	nRow      int64
}

// queries holds the queryData of running queries by the handle FTS5 keeps as auxiliary data.
var (
	queries   sync.Map // uintptr → *queryData
	nextQuery atomic.Uintptr
)

func freeQuery(_ *libc.TLS, p uintptr) { queries.Delete(p) }

func countHit(_ *libc.TLS, _, _, p uintptr) int32 {
	*i64(p)++
	return sqlite3.SQLITE_OK
}

// api calls, as the transpiled C calls function pointers.
func call[T any](fp uintptr) T { return *(*T)(unsafe.Pointer(&struct{ uintptr }{fp})) }

// getData is fts5Bm25GetData: the query's data, computed at its first row.
func getData(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr) (*queryData, int32) {
	return getDataWith(tls, api, pFts, nil)
}

// getDataWith is getData with each phrase's number of matching rows taken from hits (when it has one per
// phrase) instead of counted, and recorded there when counted.
func getDataWith(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, hits *[]int64) (*queryData, int32) {
	d, _, rc := getDataFor(tls, api, pFts, hits, false)
	return d, rc
}

// getDataFor is getDataWith, except that with defer set, a query of one phrase whose count is not in
// hits is not counted (deferred true): its IDF is left for Collector.Finish.
func getDataFor(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, hits *[]int64, deferCount bool) (d *queryData, deferred bool, rc int32) {
	h := call[func(*libc.TLS, uintptr, int32) uintptr](api.FxGetAuxdata)(tls, pFts, 0)
	if h != 0 {
		if d, ok := queries.Load(h); ok {
			return d.(*queryData), false, sqlite3.SQLITE_OK
		}
	}
	nPhrase := call[func(*libc.TLS, uintptr) int32](api.FxPhraseCount)(tls, pFts)
	d = &queryData{idf: make([]float64, nPhrase), freq: make([]float64, nPhrase)}
	p := tls.Alloc(24) // nRow at p, nToken at p+8, nHit at p+16
	defer tls.Free(24)
	*i64(p), *i64(p + 8) = 0, 0
	rc = call[func(*libc.TLS, uintptr, uintptr) int32](api.FxRowCount)(tls, pFts, p)
	if rc == sqlite3.SQLITE_OK {
		rc = call[func(*libc.TLS, uintptr, int32, uintptr) int32](api.FxColumnTotalSize)(tls, pFts, -1, p+8)
	}
	nRow, nToken := *i64(p), *i64(p + 8)
	if rc == sqlite3.SQLITE_OK {
		d.avgdl = float64(nToken) / float64(nRow)
	}
	d.nRow = nRow
	preset := hits != nil && len(*hits) == int(nPhrase)
	deferred = deferCount && !preset && nPhrase == 1
	if hits != nil && !preset && !deferred {
		*hits = make([]int64, nPhrase)
	}
	for i := int32(0); rc == sqlite3.SQLITE_OK && i < nPhrase && !deferred; i++ {
		*i64(p + 16) = 0
		if preset {
			*i64(p + 16) = (*hits)[i]
		} else {
			rc = call[func(*libc.TLS, uintptr, int32, uintptr, uintptr) int32](api.FxQueryPhrase)(tls, pFts, i, p+16, cfunc(countHit))
		}
		if rc == sqlite3.SQLITE_OK {
			nHit := *i64(p + 16)
			if hits != nil {
				(*hits)[i] = nHit
			}
			d.idf[i] = idfOf(tls, nRow, nHit)
		}
	}
	if rc != sqlite3.SQLITE_OK {
		return nil, false, rc
	}
	h = nextQuery.Add(1)
	queries.Store(h, d)
	if rc = call[func(*libc.TLS, uintptr, uintptr, uintptr) int32](api.FxSetAuxdata)(tls, pFts, h, cfunc(freeQuery)); rc != sqlite3.SQLITE_OK {
		queries.Delete(h)
		return nil, false, rc
	}
	return d, deferred, sqlite3.SQLITE_OK
}

// idfOf is bm25()'s IDF of a phrase that nHit of nRow rows match (at least 1e-06).
func idfOf(tls *libc.TLS, nRow, nHit int64) float64 {
	idf := libc.Xlog(tls, (float64(nRow-nHit)+float64(0.5))/(float64(nHit)+float64(0.5)))
	if idf <= 0 {
		idf = 1e-06
	}
	return idf
}

// rank is ctx_bm25(table): fts5Bm25Function without column weights, the document length from the rowid.
func rank(tls *libc.TLS, pApi, pFts, pCtx uintptr, _ int32, _ uintptr) {
	api := (*sqlite3.TFts5ExtensionApi)(cmem(pApi))
	d, rc := getData(tls, api, pFts)
	var v float64
	if rc == sqlite3.SQLITE_OK {
		v, rc = score(tls, api, pFts, d, call[func(*libc.TLS, uintptr) int64](api.FxRowid)(tls, pFts))
	}
	if rc != sqlite3.SQLITE_OK {
		sqlite3.Xsqlite3_result_error_code(tls, pCtx, rc)
		return
	}
	sqlite3.Xsqlite3_result_double(tls, pCtx, v)
}

// score is ctx_bm25 of the current row, whose rowid is rowid (negative: lower is better, as bm25()); d is the query's data.
func score(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, d *queryData, rowid int64) (float64, int32) {
	D, rc := rowStats(tls, api, pFts, d, rowid)
	if rc != sqlite3.SQLITE_OK {
		return 0, rc
	}
	score := float64(0)
	for i := range d.idf {
		score = score + float64(d.idf[i]*termPart(d.freq[i], D, d.avgdl))
	}
	return float64(-float64(1) * score), sqlite3.SQLITE_OK
}

// tfPart is the current row's (rowid's) term-frequency part of ctx_bm25 for a query of one phrase: its score is
// -(0 + IDF × tfPart) (Collector.Finish).
func tfPart(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, d *queryData, rowid int64) (float64, int32) {
	D, rc := rowStats(tls, api, pFts, d, rowid)
	if rc != sqlite3.SQLITE_OK {
		return 0, rc
	}
	return termPart(d.freq[0], D, d.avgdl), sqlite3.SQLITE_OK
}

// rowStats reads the current row's phrase frequencies into d.freq (phraseFreqs) and returns its
// document length D (docLength of rowid).
func rowStats(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, d *queryData, rowid int64) (float64, int32) {
	if rc := phraseFreqs(tls, api, pFts, d); rc != sqlite3.SQLITE_OK {
		return 0, rc
	}
	return docLength(tls, api, pFts, rowid)
}

// termPart is bm25()'s factor of a phrase's IDF: its frequency in a row of length D (k1 1.2, b 0.75).
// The conversions keep Go from fusing a multiply and an add (as the transpiled C does): the result is
// bm25()'s to the bit.
func termPart(freq, D, avgdl float64) float64 {
	k1, b := float64(1.2), float64(0.75)
	return float64(freq*(k1+float64(1))) / (freq + float64(k1*(float64(1)-b+float64(b*D)/avgdl)))
}

// phraseFreqs sets d.freq to the number of instances of each phrase in the current row: the entries of
// the phrase's position list for the row (xPhraseFirst gives its bytes), counted here as xPhraseNext
// walks them, which is what bm25() counts with xInstCount and xInst, without FTS5 building the row's
// array of every phrase's instances (the table has one column and full detail).
func phraseFreqs(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, d *queryData) int32 {
	p := tls.Alloc(24) // the Fts5PhraseIter (a, b) at p, iCol at p+16, iOff at p+20
	defer tls.Free(24)
	first := call[func(*libc.TLS, uintptr, int32, uintptr, uintptr, uintptr) int32](api.FxPhraseFirst)
	for i := range d.freq {
		*uptr(p), *uptr(p + 8), *i32(p + 16) = 0, 0, -1
		if rc := first(tls, pFts, int32(i), p, p+16, p+20); rc != sqlite3.SQLITE_OK {
			return rc
		}
		n := 0
		if *i32(p + 16) >= 0 { // the first instance, already read: count the rest
			n = 1 + positions(*uptr(p), *uptr(p + 8))
		}
		d.freq[i] = float64(n)
	}
	return sqlite3.SQLITE_OK
}

// positions is the number of instances in the position-list bytes [a, b) of C memory, as xPhraseNext
// reads them: a varint each, where the value 1 is followed by a column number and then the varint of
// the instance.
func positions(a, b uintptr) int {
	n := 0
	for a < b {
		v1 := *(*byte)(cmem(a)) == 1
		a += varintLen(a, b)
		if v1 {
			a += varintLen(a, b) // the column
			a += varintLen(a, b) // the offset in it
		}
		n++
	}
	return n
}

// varintLen is the length of the SQLite varint at a (at most 9 bytes, not past b; 0 at b).
func varintLen(a, b uintptr) uintptr {
	for i := uintptr(0); a+i < b; i++ {
		if *(*byte)(cmem(a + i)) < 0x80 || i == 8 {
			return i + 1
		}
	}
	return b - a
}

// docLength is the length in tokens of the current row (whose rowid is rowid): the rowid's (Length),
// else FTS5's (docsize).
func docLength(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, rowid int64) (float64, int32) {
	if n, ok := Length(rowid); ok {
		return float64(n), sqlite3.SQLITE_OK
	}
	p := tls.Alloc(8)
	defer tls.Free(8)
	*i32(p) = 0
	rc := call[func(*libc.TLS, uintptr, int32, uintptr) int32](api.FxColumnSize)(tls, pFts, -1, p)
	return float64(*i32(p)), rc
}

// cmem is the address p of C memory (libc's heap or a thread's stack, never Go's) as a pointer.
func cmem(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func i32(p uintptr) *int32    { return (*int32)(cmem(p)) }
func i64(p uintptr) *int64    { return (*int64)(cmem(p)) }
func uptr(p uintptr) *uintptr { return (*uintptr)(cmem(p)) }
