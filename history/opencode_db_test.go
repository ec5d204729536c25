package history

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// The schema of OpenCode's opencode.db as far as ctx reads it (the columns of session, message and part
// it queries; the real tables have more). No permissively licensed real database exists to copy, so the
// test builds one.
const openCodeTestSchema = `
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
	directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL,
	time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
	time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
	time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
INSERT INTO session VALUES ('ses_parent','p',NULL,'s','/work/app','Fix the parser','1.2.0',1755000100000,1755000400000),
	('ses_child','p','ses_parent','c','/work/app','','1.2.0',1755000150000,1755000300000);
INSERT INTO message VALUES
	('msg_1','ses_parent',1755000100000,1755000100000,'{"role":"user","time":{"created":1755000100000}}'),
	('msg_2','ses_parent',1755000200000,1755000200000,'{"role":"assistant","time":{"created":1755000200000},"modelID":"claude-opus-4-6"}'),
	('msg_3','ses_child',1755000160000,1755000160000,'{"role":"assistant","time":{"created":1755000160000}}'),
	('msg_bad','ses_child',1755000170000,1755000170000,'not json');
INSERT INTO part VALUES
	('prt_1','msg_1','ses_parent',1755000100000,1755000100000,'{"type":"text","text":"why does the wombat parser fail"}'),
	('prt_2','msg_2','ses_parent',1755000200000,1755000200000,'{"type":"step-start"}'),
	('prt_3','msg_2','ses_parent',1755000210000,1755000210000,'{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"go test ./..."},"output":"FAIL wombat","metadata":{"exit":1}}}'),
	('prt_4','msg_2','ses_parent',1755000220000,1755000220000,'{"type":"text","text":"The wombat parser drops the last line."}'),
	('prt_5','msg_3','ses_child',1755000160000,1755000160000,'{"type":"text","text":"child looked at wombat.go"}');
`

func TestOpenCodeDatabase(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dbPath := filepath.Join(root, "opencode.db")
	w, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(openCodeTestSchema); err != nil {
		t.Fatal(err)
	}
	w.Close()
	before, _ := os.ReadFile(dbPath)
	listing := func() []string {
		ents, _ := os.ReadDir(root)
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	filesBefore := listing()

	srcs, err := Discover(ctx, OpenCode, root, false)
	if err != nil || len(srcs) != 2 || srcs[0].Session != "ses_parent" || srcs[1].Session != "ses_child" {
		t.Fatalf("discover: %+v %v", srcs, err)
	}
	ix := openTestIndex(t)
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Imported != 2 || st.Failed != 0 {
		t.Fatalf("import: %+v %v", st, err)
	}
	parent, err := ix.Session(ctx, SessionID(OpenCode, "ses_parent"))
	if err != nil || parent.EventCount != 4 || parent.CWD != "/work/app" || parent.Model != "claude-opus-4-6" || parent.Title != "Fix the parser" {
		t.Fatalf("parent: %+v %v", parent, err)
	}
	evs, _ := ix.Events(ctx, parent.ID, 0, 0)
	if evs[1].Type != ToolCall || evs[2].Type != ToolOutput || evs[2].Tool.ExitCode == nil || *evs[2].Tool.ExitCode != 1 {
		t.Fatalf("events: %+v", evs)
	}
	// The provider's own id (what search prints) opens the same session.
	if byNative, err := ix.Session(ctx, "ses_parent"); err != nil || byNative.ID != parent.ID {
		t.Fatalf("session by native id: %+v %v", byNative, err)
	}
	if _, err := ix.Session(ctx, "ses_nosuch"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown native id: %v", err)
	}
	child, _ := ix.Session(ctx, SessionID(OpenCode, "ses_child"))
	if child.ParentID != parent.ID || child.RootID != parent.ID || child.EventCount != 1 {
		t.Fatalf("child: %+v", child)
	}
	if r := st.Results[1]; r.BadLines != 1 {
		t.Errorf("the undecodable message is one bad line: %+v", r)
	}
	if st, _ := ix.Import(ctx, srcs); st.Unchanged != 2 {
		t.Fatalf("re-import: %+v", st)
	}
	after, _ := os.ReadFile(dbPath)
	if !bytes.Equal(before, after) || len(listing()) != len(filesBefore) {
		t.Fatalf("the provider database or its directory changed: %v → %v", filesBefore, listing())
	}

	// A new part re-imports that session only.
	w, _ = sql.Open("sqlite", "file:"+dbPath)
	if _, err := w.Exec(`INSERT INTO part VALUES ('prt_6','msg_3','ses_child',1755000180000,1755000180000,'{"type":"text","text":"more"}')`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	st, err = ix.Import(ctx, srcs)
	if err != nil || st.Imported != 1 || st.Unchanged != 1 || st.Events != 1 { // the session is read again; one event is new
		t.Fatalf("after a new part: %+v %v", st, err)
	}
	res, err := ix.Search(ctx, Query{Text: "wombat", Providers: []Provider{OpenCode}, Dense: true})
	if err != nil || len(res.Hits) != 4 || res.Hits[0].Event.Type != Message {
		t.Fatalf("search: %+v %v", res.Hits, err)
	}

	// Not a database: one failed source, not an error.
	bad := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(bad, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err = Discover(ctx, OpenCode, filepath.Dir(bad), false)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("bad db discover: %+v %v", srcs, err)
	}
	if st, err := ix.Import(ctx, srcs); err != nil || st.Failed != 1 {
		t.Fatalf("bad db import: %+v %v", st, err)
	}
}

// TestOpenCodeWALDatabaseLeftAsItWas: importing a WAL-mode opencode.db that no one has open creates no
// file beside it (SQLite used to leave opencode.db-shm and -wal in OpenCode's directory, even on an
// unchanged re-import); while a writer has it open (OpenCode running: -wal and -shm exist), the import
// reads what the -wal holds.
func TestOpenCodeWALDatabaseLeftAsItWas(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dbPath := filepath.Join(root, "opencode.db")
	w, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec("PRAGMA journal_mode=WAL;" + openCodeTestSchema); err != nil {
		t.Fatal(err)
	}
	w.Close()
	listing := func() []string {
		ents, _ := os.ReadDir(root)
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	if l := listing(); len(l) != 1 {
		t.Fatalf("setup: %v", l)
	}
	before, _ := os.ReadFile(dbPath)
	ix := openTestIndex(t)
	for i := 0; i < 2; i++ {
		srcs, err := Discover(ctx, OpenCode, root, false)
		if err != nil || len(srcs) != 2 {
			t.Fatalf("discover: %+v %v", srcs, err)
		}
		if _, err := ix.Import(ctx, srcs); err != nil {
			t.Fatal(err)
		}
		if l := listing(); len(l) != 1 {
			t.Fatalf("import %d left %v in OpenCode's directory", i+1, l)
		}
	}
	if after, _ := os.ReadFile(dbPath); !bytes.Equal(before, after) {
		t.Fatal("the database changed")
	}
	// A writer holds it open, with a commit still in the -wal.
	w, _ = sql.Open("sqlite", "file:"+dbPath+"?_pragma=wal_autocheckpoint(0)")
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`INSERT INTO part VALUES ('prt_6','msg_3','ses_child',1755000180000,1755000180000,'{"type":"text","text":"numbat in the wal"}')`); err != nil {
		t.Fatal(err)
	}
	srcs, _ := Discover(ctx, OpenCode, root, false)
	if st, err := ix.Import(ctx, srcs); err != nil || st.Imported != 1 {
		t.Fatalf("import while open: %+v %v", st, err)
	}
	res, err := ix.Search(ctx, Query{Text: "numbat", Providers: []Provider{OpenCode}})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("the -wal's commit was not read: %+v %v", res.Hits, err)
	}
}

// TestOpenCodeHostileDatabase: an opencode.db whose session is a view over an endless
// recursive query is refused before it is queried (the import, discovery and the pruning of deleted
// sessions hung at 100 % CPU), the source failing with an error that says why; and a read of a provider
// database that runs away is interrupted at openCodeDBTimeout.
func TestOpenCodeHostileDatabase(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dbPath := filepath.Join(root, "opencode.db")
	w, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`CREATE TABLE message(id, session_id, time_created, time_updated, data);
CREATE TABLE part(id, message_id, session_id, time_created, time_updated, data);
CREATE VIEW session AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
  SELECT 'ses_'||x AS id, NULL AS parent_id, '/w' AS directory, 't' AS title, '1' AS version,
         -x AS time_created, 1 AS time_updated FROM c;`); err != nil {
		t.Fatal(err)
	}
	w.Close()

	done := make(chan struct{})
	var srcs []Source
	var derr error
	go func() {
		defer close(done)
		srcs, derr = Discover(ctx, OpenCode, root, true)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("discovery of a database whose session is a recursive view did not return")
	}
	if derr != nil || len(srcs) != 1 || srcs[0].Session != "" {
		t.Fatalf("discover: %+v %v", srcs, derr)
	}
	ix := openTestIndex(t)
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Failed != 1 || !strings.Contains(st.Results[0].Err, "session is a view, not a table") {
		t.Fatalf("import: %+v %v", st, err)
	}

	// The time bound: a query that never ends is interrupted.
	old := openCodeDBTimeout
	openCodeDBTimeout = 300 * time.Millisecond
	defer func() { openCodeDBTimeout = old }()
	good := filepath.Join(t.TempDir(), "opencode.db")
	w, err = sql.Open("sqlite", "file:"+good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(openCodeTestSchema); err != nil {
		t.Fatal(err)
	}
	w.Close()
	bctx, cancel, explain := boundDB(ctx, good)
	defer cancel()
	db, err := openProviderDB(bctx, good)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	err = explain(db.QueryRowContext(bctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c`).Scan(&n))
	if err == nil || !strings.Contains(err.Error(), "took more than 300ms") {
		t.Fatalf("a runaway query: %v", err)
	}
}

// TestOpenCodeGeneratedColumnRefused: an opencode.db whose part.data is a generated column
// (computed on every read by any expression: a printf of 400 MB took 3.4 GB and 39 s) is refused before
// it is read, the source failing with an error that says why; and a read of a session's parts cut off by
// openCodeDBTimeout fails the source, where it was counted as a bad line of an imported session.
func TestOpenCodeGeneratedColumnRefused(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dbPath := filepath.Join(root, "opencode.db")
	const schema = `CREATE TABLE session (id text PRIMARY KEY, parent_id text, directory text, title text, version text, time_created integer, time_updated integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer, time_updated integer, data text);
CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text, time_created integer, time_updated integer,
	data text GENERATED ALWAYS AS (%s) VIRTUAL);
INSERT INTO session VALUES ('ses_1', NULL, '/w', 't', '1', 1755000100000, 1755000100000);
INSERT INTO message VALUES ('msg_1', 'ses_1', 1755000100000, 1755000100000, '{"role":"user"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated) VALUES ('prt_1', 'msg_1', 'ses_1', 1755000100000, 1755000100000);`
	w, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(strings.ReplaceAll(schema, "%s", `json_object('type', 'text', 'text', printf('%.*c', 1000000, 'x'))`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	srcs, err := Discover(ctx, OpenCode, root, false)
	if err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Failed != 1 || st.Imported != 0 || !strings.Contains(st.Results[0].Err, "part.data is a generated column") {
		t.Fatalf("import: %+v %v", st, err)
	}

	// The time bound running out while the parts are read (a function of the test's ends it there).
	cancelRead := func() {} // set once the database is written (writing it calls the function too)
	if err := sqlite.RegisterDeterministicScalarFunction("ctx_test_cancel_read", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		cancelRead()
		return `{"type":"text","text":"read after the deadline"}`, nil
	}); err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(t.TempDir(), "opencode.db")
	w, err = sql.Open("sqlite", "file:"+slow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(strings.ReplaceAll(schema, "%s", `ctx_test_cancel_read()`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	db, err := sql.Open("sqlite", "file:"+slow+"?mode=ro") // past checkOpenCodeTables, which refuses it
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelRead = cancel
	var ps parseState
	if res, err := parseOpenCodeDB(bctx, &providerDB{DB: db}, "ses_1", &ps); err == nil {
		t.Fatalf("a read cut off by its context: %v, result %+v", err, res)
	}
}

// TestOpenCodeWALWithoutSHM: an opencode.db with a -wal but no -shm (a copied root, an
// OpenCode that crashed) is imported with the commits of its -wal, and OpenCode's folder is left as it
// was: SQLite created opencode.db-shm there. Nothing is written into $TMPDIR either (the
// database and its -wal were copied there, unbounded).
func TestOpenCodeWALWithoutSHM(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	src := filepath.Join(t.TempDir(), "opencode.db")
	w, err := sql.Open("sqlite", "file:"+src+"?_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec("PRAGMA journal_mode=WAL;" + openCodeTestSchema +
		`INSERT INTO part VALUES ('prt_6','msg_3','ses_child',1755000180000,1755000180000,'{"type":"text","text":"numbat in the wal"}')`); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "opencode.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	listing := func(dir string) []string {
		ents, _ := os.ReadDir(dir)
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	srcs, err := Discover(ctx, OpenCode, root, false)
	if err != nil || len(srcs) != 2 {
		t.Fatalf("discover: %+v %v", srcs, err)
	}
	ix := openTestIndex(t)
	if st, err := ix.Import(ctx, srcs); err != nil || st.Imported != 2 || st.Failed != 0 {
		t.Fatalf("import: %+v %v", st, err)
	}
	if l := listing(root); len(l) != 2 || l[0] != "opencode.db" || l[1] != "opencode.db-wal" {
		t.Fatalf("the import left %v in OpenCode's folder", l)
	}
	if l := listing(tmp); len(l) != 0 {
		t.Fatalf("the private copy was left: %v", l)
	}
	res, err := ix.Search(ctx, Query{Text: "numbat", Providers: []Provider{OpenCode}})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("the -wal's commit was not read: %+v %v", res.Hits, err)
	}
}
