package app

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// zeroEventsPage zeroes one leaf page of table events in the index db (a bad sector): damage that opening
// the index does not see, only the reads that reach that page.
func zeroEventsPage(t *testing.T, db string) {
	t.Helper()
	r, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var page, size int64
	err = r.QueryRow(`SELECT pageno FROM dbstat WHERE name='events' AND pagetype='leaf' ORDER BY pageno LIMIT 1 OFFSET 3`).Scan(&page)
	if err == nil {
		err = r.QueryRow(`PRAGMA page_size`).Scan(&size)
	}
	r.Close()
	if err != nil {
		t.Fatalf("find a page of events: %v", err)
	}
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, size), (page-1)*size); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryDamagedPage: a damaged data page of the index, which only the reads that reach
// it see: list events fails naming the remedy, the failure is noted, status then reports the index
// damaged, and ctx history import (which reads nothing of that page) checks the index, rebuilds it, and
// list events works again.
func TestHistoryDamagedPage(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := runIn(dir)
	imp := []string{"history", "import", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code")}
	if _, e, code := run(imp...); code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	db := filepath.Join(dir, ".git", "ctx", "history", "index.db")
	// Everything in index.db itself (no -wal left by the import's last connection).
	if _, err := os.Stat(db + "-wal"); err == nil {
		if r, err := sql.Open("sqlite", "file:"+db); err == nil {
			r.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`) //nolint:errcheck
			r.Close()
		}
	}
	zeroEventsPage(t, db)
	if _, e, code := run("history", "list", "events"); code == ExitOK || !strings.Contains(e, "ctx history import rebuilds it") {
		t.Fatalf("list events over a damaged page: exit %d, %s", code, e)
	}
	out, e, code := run("status", "--format", "json")
	var st struct{ History map[string]any }
	if code != ExitOK || json.Unmarshal([]byte(out), &st) != nil || st.History["error"] == nil ||
		!strings.Contains(st.History["hint"].(string), "ctx history import rebuilds it") {
		t.Errorf("status after a failed read: exit %d, %v %s", code, st.History, e)
	}
	if _, e, code := run(imp...); code != ExitOK || !strings.Contains(e, "rebuilding it from the transcripts") {
		t.Fatalf("import over a damaged page: exit %d, %s", code, e)
	}
	if out, e, code := run("history", "list", "events"); code != ExitOK || out == "" {
		t.Fatalf("list events after the rebuild: exit %d, %s", code, e)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "ctx", "history", "index.damaged")); err == nil {
		t.Error("the damage note outlived the rebuild")
	}
}
