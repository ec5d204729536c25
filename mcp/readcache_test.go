package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// testMargin is the read cache's race margin in these tests: files older than this are trusted, so the
// tests wait settle() after each change they want served from memory.
const testMargin = 40 * time.Millisecond

func settle() { time.Sleep(testMargin + 20*time.Millisecond) }

// serveCached serves st over stdio with the test race margin and returns the session and the server (to
// look at its read cache's counters).
func serveCached(t *testing.T, st *store.Store) (*session, *srv) {
	t.Helper()
	stderr := &syncBuffer{}
	x := NewServer(st, Options{Agent: "claude-code", Stderr: stderr, raceMargin: testMargin})
	return serveServer(t, x, stderr, "", "ctx-test"), x.s
}

// uncached is what a server that never read anything before answers: the read as done without the cache.
func uncached(t *testing.T, ctx context.Context, dir, uri string) string {
	t.Helper()
	st, err := store.Open(context.Background(), dir, store.Actor{Agent: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	x := NewServer(st, Options{Agent: "claude-code", raceMargin: testMargin})
	cs, err := x.s.render(ctx, uri)
	if err != nil {
		t.Fatalf("uncached read %s: %v", uri, err)
	}
	return cs[0].(mcpgo.TextResourceContents).Text
}

// renderText reads uri through the server's own render (the resources/read handler) with ctx.
func renderText(t *testing.T, s *srv, ctx context.Context, uri string) string {
	t.Helper()
	cs, err := s.render(ctx, uri)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return cs[0].(mcpgo.TextResourceContents).Text
}

// readHit reads uri on the session and fails unless it was answered from memory.
func readHit(t *testing.T, s *session, x *srv, uri string) string {
	t.Helper()
	h := x.reads.hits.Load()
	txt := s.read(t, uri)
	if x.reads.hits.Load() != h+1 {
		t.Fatalf("read %s was not served from memory (hits %d, misses %d)", uri, x.reads.hits.Load(), x.reads.misses.Load())
	}
	return txt
}

// readMiss reads uri on the session and fails if it was served from memory.
func readMiss(t *testing.T, s *session, x *srv, uri string) string {
	t.Helper()
	h := x.reads.hits.Load()
	txt := s.read(t, uri)
	if x.reads.hits.Load() != h {
		t.Fatalf("read %s was served from memory", uri)
	}
	return txt
}

// readSettled reads uri once the files it depends on are old enough to be trusted. It may be served from
// memory or not: the read before it, the first after a change, kept its answer if it came more than the
// race margin after the change (a slow, loaded machine), else this one computes it again. Either way the
// read after it is a hit.
func readSettled(t *testing.T, s *session, uri string) string {
	t.Helper()
	return s.read(t, uri)
}

func setKnowledge(t *testing.T, st *store.Store, key, content string, sc store.Scope) {
	t.Helper()
	if _, err := st.SetEntry(context.Background(), store.KnowledgeKind, store.SetEntry{Key: key, Content: content, Scope: sc}); err != nil {
		t.Fatal(err)
	}
}

// TestReadCacheRefMoves: a read served from memory is never older than the refs. A write through another
// Store (another process), `git update-ref` moving the branch back (the checked-out tree is refreshed by
// the read, as without the cache), and a move of a ref kept only in packed-refs are all seen by the next
// read, which equals what a server without a cache answers.
func TestReadCacheRefMoves(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	setKnowledge(t, st, "arch", "Monolith.\n", "")
	first := git(t, dir, "rev-parse", st.BranchRef())
	s, x := serveCached(t, st)
	const uri = "context://knowledge/arch"
	settle()
	readMiss(t, s, x, uri)
	if got := readHit(t, s, x, uri); !strings.Contains(got, "Monolith.") {
		t.Fatalf("read %s", got)
	}

	// another process writes
	other, err := store.Open(ctx, dir, store.Actor{Agent: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	setKnowledge(t, other, "arch", "Services now.\n", "")
	if got := readMiss(t, s, x, uri); !strings.Contains(got, "Services now.") || got != uncached(t, ctx, dir, uri) {
		t.Fatalf("after another process's write: %s", got)
	}
	settle()
	readSettled(t, s, uri) // the first read once the ref is old enough to be trusted
	readHit(t, s, x, uri)

	// git moves the branch back: the read refreshes .context/ and serves the old entry
	git(t, dir, "update-ref", st.BranchRef(), first)
	if got := readMiss(t, s, x, uri); !strings.Contains(got, "Monolith.") || got != uncached(t, ctx, dir, uri) {
		t.Fatalf("after git update-ref: %s", got)
	}

	// the ref only in packed-refs, moved there: git writes the loose ref, then packs it away again
	git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git", filepath.FromSlash(st.BranchRef()))); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	settle()
	readMiss(t, s, x, uri)
	readHit(t, s, x, uri)
	setKnowledge(t, other, "arch", "Cells.\n", "")
	second := git(t, dir, "rev-parse", st.BranchRef())
	git(t, dir, "update-ref", st.BranchRef(), first)
	git(t, dir, "pack-refs", "--all")
	readMiss(t, s, x, uri) // refreshes .context/
	settle()
	readSettled(t, s, uri)
	readHit(t, s, x, uri)
	git(t, dir, "update-ref", st.BranchRef(), second)
	git(t, dir, "pack-refs", "--all")
	if got := readMiss(t, s, x, uri); !strings.Contains(got, "Cells.") || got != uncached(t, ctx, dir, uri) {
		t.Fatalf("after a move in packed-refs: %s", got)
	}

	// a write of this server: the next read sees it
	settle()
	readSettled(t, s, uri)
	s.call(t, "context_add_knowledge", map[string]any{"key": "arch", "content": "Mesh.\n"})
	if got := readMiss(t, s, x, uri); !strings.Contains(got, "Mesh.") {
		t.Fatalf("after this server's write: %s", got)
	}
}

// TestReadCacheHandEdits: a file of .context/ edited by hand (in place, same size) or removed is read
// again at once and answered as a server without a cache answers it; a file that comes back is served
// again.
func TestReadCacheHandEdits(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	setKnowledge(t, st, "arch", "Monolith.\n", "")
	s, x := serveCached(t, st)
	const uri = "context://knowledge/arch"
	settle()
	readMiss(t, s, x, uri)
	readHit(t, s, x, uri)

	file := filepath.Join(dir, ".context", "knowledge", "arch.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "Monolith.", "Microlith", 1) // same size
	if len(edited) != len(b) || edited == string(b) {
		t.Fatal("edit")
	}
	f, err := os.OpenFile(file, os.O_WRONLY, 0) // in place: same inode
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(edited), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readMiss(t, s, x, uri); !strings.Contains(got, "Microlith") || got != uncached(t, ctx, dir, uri) {
		t.Fatalf("after a hand edit: %s", got)
	}

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	got := readMiss(t, s, x, uri)
	if want := uncached(t, ctx, dir, uri); got != want || !strings.Contains(got, "not found") {
		t.Fatalf("after removing the file: %s, want %s", got, want)
	}
	readHit(t, s, x, uri) // a missing entry is kept too, and stays missing
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readMiss(t, s, x, uri); !strings.Contains(got, "Monolith.") || got != uncached(t, ctx, dir, uri) {
		t.Fatalf("after restoring the file: %s", got)
	}
}

// TestReadCachePrivate: an answer computed for the owner of the private scope is never served to a
// public-only caller (an HTTP token of a team member), nor a public-only "not found" to the owner; a scope
// move is seen by both at their next read.
func TestReadCachePrivate(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	pub := store.WithPublicOnly(ctx)
	setKnowledge(t, st, "secret-plan", "Acquire the rival.\n", store.Private)
	setKnowledge(t, st, "plan", "Ship it.\n", "")
	s, x := serveCached(t, st)
	settle()
	for _, uri := range []string{"context://knowledge/secret-plan", "context://knowledge/plan"} {
		// owner first, then a public-only caller, then each again (from memory)
		for range 2 {
			own := renderText(t, x, ctx, uri)
			if own != uncached(t, ctx, dir, uri) {
				t.Fatalf("owner read %s: %s", uri, own)
			}
			other := renderText(t, x, pub, uri)
			if other != uncached(t, pub, dir, uri) {
				t.Fatalf("public-only read %s: %s", uri, other)
			}
		}
	}
	if x.reads.hits.Load() < 3 {
		t.Fatalf("the second reads were not served from memory: hits %d", x.reads.hits.Load())
	}
	if got := renderText(t, x, pub, "context://knowledge/secret-plan"); strings.Contains(got, "rival") || !strings.Contains(got, "not found") {
		t.Fatalf("public-only caller read the private entry: %s", got)
	}
	if got := s.read(t, "context://knowledge/secret-plan"); !strings.Contains(got, "rival") {
		t.Fatalf("owner lost the private entry: %s", got)
	}

	// another process moves the public entry to the private scope
	other, err := store.Open(ctx, dir, store.Actor{Agent: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.SetScope(ctx, "knowledge", "plan", store.Private); err != nil {
		t.Fatal(err)
	}
	if got := renderText(t, x, pub, "context://knowledge/plan"); strings.Contains(got, "Ship it") {
		t.Fatalf("public-only caller read an entry moved to the private scope: %s", got)
	}
	if got := renderText(t, x, ctx, "context://knowledge/plan"); !strings.Contains(got, "Ship it") {
		t.Fatalf("owner read after the scope move: %s", got)
	}
}

// TestReadCacheNotKept: lists and time-dependent resources are computed at each read.
func TestReadCacheNotKept(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	setKnowledge(t, st, "arch", "Monolith.\n", "")
	s, x := serveCached(t, st)
	settle()
	for _, uri := range []string{"context://knowledge", "context://activity", "context://summary"} {
		for range 2 {
			readMiss(t, s, x, uri)
		}
	}
	readMiss(t, s, x, "context://manifest")
	readHit(t, s, x, "context://manifest")
}

// TestReadCacheProcesses: two `ctx mcp serve` processes (the test server binary, with the production race
// margin) on one repository. Once the reader's answers are old enough to be kept, a write made by the
// other server process, and then `git update-ref`, are seen by the reader's next read.
func TestReadCacheProcesses(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	setKnowledge(t, st, "arch", "Monolith.\n", "")
	bin := buildTestServer(t)
	reader := spawn(t, bin, dir, "reader")
	writer := spawn(t, bin, dir, "writer")
	const uri = "context://knowledge/arch"
	text := func(want string) {
		t.Helper()
		res, err := reader.read(uri)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if got := res.Contents[0].(mcpgo.TextResourceContents).Text; !strings.Contains(got, want) {
			t.Fatalf("read %s: %s, want %q", uri, got, want)
		}
	}
	first := git(t, dir, "rev-parse", st.BranchRef())
	aged := func() { // past raceMargin: the reader keeps what it reads from now on
		time.Sleep(raceMargin + 100*time.Millisecond)
		text("")
		text("")
	}
	aged()
	text("Monolith.")
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "context_add_knowledge"
	req.Params.Arguments = map[string]any{"key": "arch", "content": "Services now.\n"}
	if res, err := writer.c.CallTool(context.Background(), req); err != nil || res.IsError {
		t.Fatalf("write through the other server: %v %v", err, res)
	}
	text("Services now.")
	aged()
	git(t, dir, "update-ref", st.BranchRef(), first)
	text("Monolith.")
}
