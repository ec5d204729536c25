package history

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// importChild is the child process of the concurrency tests: it imports the Claude source
// CTX_TEST_IMPORT_SRC into the index CTX_TEST_IMPORT_CHILD and prints its ImportStats as JSON. With
// CTX_TEST_IMPORT_BARRIER (a directory and a count, "dir:n"), after parsing it marks itself ready and
// waits until n children are ready, or a second has passed (an import that waits for the lock cannot get
// there). With CTX_TEST_IMPORT_HOLD (a file), it holds its write transaction open until the file exists.
func importChild(t *testing.T, dir string) {
	src := Source{Provider: ClaudeCode, Format: FormatClaude, Path: os.Getenv("CTX_TEST_IMPORT_SRC")}
	if b := os.Getenv("CTX_TEST_IMPORT_BARRIER"); b != "" {
		bdir, ns, _ := strings.Cut(b, ":")
		n, _ := strconv.Atoi(ns)
		testHookPrepared = func() {
			_ = os.WriteFile(filepath.Join(bdir, strconv.Itoa(os.Getpid())), nil, 0o600)
			for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if es, _ := os.ReadDir(bdir); len(es) >= n {
					return
				}
			}
		}
	}
	if hold := os.Getenv("CTX_TEST_IMPORT_HOLD"); hold != "" {
		testHookWritten = func() {
			_ = os.WriteFile(hold+".held", nil, 0o600)
			for {
				if _, err := os.Stat(hold); err == nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	ctx := context.Background()
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Import(ctx, []Source{src})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(st); err != nil {
		t.Fatal(err)
	}
}

// childOut is a file a child process writes its standard output or error to (the test reads it while the
// child runs: a file, not a buffer that exec fills from another goroutine).
type childOut string

func (c childOut) String() string {
	b, _ := os.ReadFile(string(c))
	return string(b)
}

// startImportChild starts importChild in a new process of this test binary running test.
func startImportChild(t *testing.T, test, dir, src string, env ...string) (cmd *exec.Cmd, stdout, stderr childOut) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "CTX_TEST_IMPORT_CHILD="+dir, "CTX_TEST_IMPORT_SRC="+src), env...)
	tmp := t.TempDir()
	stdout, stderr = childOut(filepath.Join(tmp, "out")), childOut(filepath.Join(tmp, "err"))
	for _, f := range []struct {
		path childOut
		dst  *io.Writer
	}{{stdout, &cmd.Stdout}, {stderr, &cmd.Stderr}} {
		w, err := os.Create(string(f.path))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		*f.dst = w
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, stderr
}

// childStats is the ImportStats a child printed (the last line of its output that decodes).
func childStats(t *testing.T, out string) ImportStats {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		var st ImportStats
		if strings.HasPrefix(l, "{") && json.Unmarshal([]byte(l), &st) == nil {
			return st
		}
	}
	t.Fatalf("no import report in %q", out)
	return ImportStats{}
}

func sessionEventKeys(t *testing.T, ix *Index, sessionID string) []string {
	t.Helper()
	rows, err := ix.db.Query(`SELECT native_key FROM events WHERE session_id=? ORDER BY seq`, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// TestConcurrentImportsAppendOnce: several import processes that start together on a transcript that
// grew since the last import, all parsing before any writes (a barrier), store each appended record
// once; the events they report adding sum to the records appended, and a later import has nothing to do
// (docs/history.md "Concurrent imports").
func TestConcurrentImportsAppendOnce(t *testing.T) {
	if dir := os.Getenv("CTX_TEST_IMPORT_CHILD"); dir != "" {
		importChild(t, dir)
		return
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	path := filepath.Join(t.TempDir(), "bbbbbbbb-0000-4000-8000-0000000000bb.jsonl")
	if err := os.WriteFile(path, []byte(claudeUser("d1", "dup n1")), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	src := Source{Provider: ClaudeCode, Format: FormatClaude, Path: path}
	importOne(t, ix, src)
	var more strings.Builder
	for i := 2; i <= 20; i++ {
		more.WriteString(claudeUser(fmt.Sprintf("d%d", i), fmt.Sprintf("dup n%d", i)))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(more.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	const n = 3
	barrier := t.TempDir()
	type child struct {
		cmd      *exec.Cmd
		out, err childOut
	}
	var kids []child
	for range n {
		cmd, out, errb := startImportChild(t, "TestConcurrentImportsAppendOnce", dir, path, "CTX_TEST_IMPORT_BARRIER="+barrier+":"+strconv.Itoa(n))
		kids = append(kids, child{cmd, out, errb})
	}
	added := 0
	for _, k := range kids {
		if err := k.cmd.Wait(); err != nil {
			t.Fatalf("import child: %v\n%s%s", err, k.out, k.err)
		}
		added += childStats(t, k.out.String()).Events
	}
	sid := SessionID(ClaudeCode, "bbbbbbbb-0000-4000-8000-0000000000bb")
	keys := sessionEventKeys(t, ix, sid)
	if len(keys) != 20 {
		t.Fatalf("%d events after concurrent imports of 20 records, want 20: %v", len(keys), keys)
	}
	for i, k := range keys {
		if want := fmt.Sprintf("d%d#0", i+1); k != want && k != fmt.Sprintf("d%d", i+1) {
			t.Fatalf("event %d keyed %q", i+1, k)
		}
	}
	if added != 19 {
		t.Fatalf("the concurrent imports reported %d events added, want the 19 appended", added)
	}
	if r := importOne(t, ix, src); r.Action != "unchanged" || r.Events != 0 {
		t.Fatalf("import after: %+v", r)
	}
}

// TestImportWaitsForAnother: an import started while another holds its write transaction open waits
// for it (and says so, naming its process) instead of failing with SQLITE_BUSY, then imports what the
// first did not; both reports count what each inserted.
func TestImportWaitsForAnother(t *testing.T) {
	if dir := os.Getenv("CTX_TEST_IMPORT_CHILD"); dir != "" {
		importChild(t, dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "history")
	tmp := t.TempDir()
	a := filepath.Join(tmp, "aaaaaaaa-0000-4000-8000-00000000000a.jsonl")
	if err := os.WriteFile(a, []byte(claudeUser("a1", "first")+claudeUser("a2", "second")), 0o600); err != nil {
		t.Fatal(err)
	}
	hold := filepath.Join(tmp, "release")
	first, out1, err1 := startImportChild(t, "TestImportWaitsForAnother", dir, a, "CTX_TEST_IMPORT_HOLD="+hold)
	defer first.Process.Kill() //nolint:errcheck // a no-op once it exited
	for {
		if _, err := os.Stat(hold + ".held"); err == nil {
			break
		}
		if first.ProcessState != nil {
			t.Fatalf("first import ended: %s", err1)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The first import holds its transaction open; the second, of a transcript the first grows
	// meanwhile, starts now.
	f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(claudeUser("a3", "third")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	second, out2, err2 := startImportChild(t, "TestImportWaitsForAnother", dir, a)
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	want := fmt.Sprintf("waiting for another history import (pid %d)", first.Process.Pid)
	for !strings.Contains(err2.String(), want) {
		select {
		case err := <-done:
			t.Fatalf("the second import ended while the first held the index (%v), without waiting:\n%s%s", err, out2, err2)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first import: %v\n%s%s", err, out1, err1)
	}
	if err := <-done; err != nil {
		t.Fatalf("second import: %v\n%s%s", err, out2, err2)
	}
	s1, s2 := childStats(t, out1.String()), childStats(t, out2.String())
	ctx := context.Background()
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	keys := sessionEventKeys(t, ix, SessionID(ClaudeCode, "aaaaaaaa-0000-4000-8000-00000000000a"))
	if len(keys) != 3 || s1.Events+s2.Events != 3 {
		t.Fatalf("events %v; the imports reported %d and %d added, want 3 in all", keys, s1.Events, s2.Events)
	}
}

// TestImportLockGivesUp: an import that waited importLockWait for another gives up with an error naming
// the process that holds the lock, and writes nothing.
func TestImportLockGivesUp(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "history")
	holder, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	unlock, err := holder.LockImport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// Reentrant within one Index: its own import takes it again.
	again, err := holder.LockImport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again()
	old, oldNotice := importLockWait, ImportWaitNotice
	importLockWait, ImportWaitNotice = 50*time.Millisecond, nil
	defer func() { importLockWait, ImportWaitNotice = old, oldNotice }()
	other, err := Open(ctx, dir) // another open file: its flock conflicts with holder's as another process's would
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	path := filepath.Join(t.TempDir(), "cccccccc-0000-4000-8000-00000000000c.jsonl")
	if err := os.WriteFile(path, []byte(claudeUser("c1", "x")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = other.Import(ctx, []Source{{Provider: ClaudeCode, Format: FormatClaude, Path: path}})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("another import (pid %d)", os.Getpid())) {
		t.Fatalf("import while another holds the lock: %v", err)
	}
	var n int
	if err := other.db.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d events written by an import that gave up (%v)", n, err)
	}
}
