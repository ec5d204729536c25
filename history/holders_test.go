package history

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The corpus files these tests copy (docs/history.md "A session of several files").
const (
	holdersRollout = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
	holdersClaude  = "claude-code/claude-code-transcripts/sample_session.jsonl"
)

// refresh imports a provider's root as ctx history import does: the sources whose files are gone are
// forgotten first (PruneMissing), then every discovered source is imported.
func refresh(t *testing.T, ix *Index, p Provider, root string) ImportStats {
	t.Helper()
	return refreshOrder(t, ix, p, root, true)
}

// refreshOrder is refresh, or with pruneFirst false the import then PruneMissing (the order of ctx
// before round 9).
func refreshOrder(t *testing.T, ix *Index, p Provider, root string, pruneFirst bool) ImportStats {
	t.Helper()
	ctx := context.Background()
	prune := func() int {
		removed, err := ix.PruneMissing(ctx, []string{root})
		if err != nil {
			t.Fatal(err)
		}
		return removed
	}
	removed := 0
	if pruneFirst {
		removed = prune()
	}
	srcs, err := Discover(ctx, p, root, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if !pruneFirst {
		removed = prune()
	}
	st.Removed = removed
	return st
}

func copyEdited(t *testing.T, from, to string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b = edit(b)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sessionEvents(t *testing.T, ix *Index, sid string) []Event {
	t.Helper()
	evs, err := ix.Events(context.Background(), sid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestMovedTranscriptKeepsEvents: a transcript compressed (.jsonl → .jsonl.zst), moved to
// archived_sessions/, or moved to another Claude project folder is the same session with the same event
// ids: after the import that sees the move the session holds all its events, and later imports keep them.
// Before, the new file's records were kept under the old file, which the import then forgot: the session
// lost every event, for good. With the deleted file forgotten after the import (prune last), the other
// file is read again by the next import.
func TestMovedTranscriptKeepsEvents(t *testing.T) {
	corpus := corpusDir(t)
	codex := filepath.Join(corpus, "codex", "codemie", holdersRollout)
	for _, c := range []string{"zst", "archive", "claude", "claude-copy", "zst/prune-last", "archive/prune-last", "claude/prune-last", "claude-copy/prune-last"} {
		mode, order, _ := strings.Cut(c, "/")
		pruneFirst := order == ""
		t.Run(c, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			p, from, to := Codex, filepath.Join(root, "sessions", "2026", "05", "11", holdersRollout), ""
			switch mode {
			case "zst":
				to = from + ".zst"
			case "archive":
				to = filepath.Join(root, "archived_sessions", holdersRollout)
			default:
				p = ClaudeCode
				from, to = filepath.Join(root, "-a", "sample_session.jsonl"), filepath.Join(root, "-b", "sample_session.jsonl")
			}
			if p == Codex {
				copyEdited(t, codex, from, nil)
			} else {
				copyEdited(t, filepath.Join(corpus, holdersClaude), from, nil)
			}
			ix := openTestIndex(t)
			st := refresh(t, ix, p, root)
			sid := st.Results[0].SessionID
			want := eventIDs(t, ix, sid)
			if len(want) < 9 {
				t.Fatalf("first import: %d events", len(want))
			}
			switch mode {
			case "zst":
				raw, err := os.ReadFile(from)
				if err != nil {
					t.Fatal(err)
				}
				enc, _ := zstd.NewWriter(nil)
				if err := os.WriteFile(to, enc.EncodeAll(raw, nil), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(from); err != nil {
					t.Fatal(err)
				}
			case "claude-copy":
				// A copy imported beside the original, then the original (imported first) deleted.
				copyEdited(t, from, to, nil)
				refreshOrder(t, ix, p, root, pruneFirst)
				if err := os.Remove(from); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(from, to); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3 {
				st := refreshOrder(t, ix, p, root, pruneFirst)
				if i == 0 && !pruneFirst {
					continue // the deleted file is forgotten after the import: the next reads the other again
				}
				if got := eventIDs(t, ix, sid); !slices.Equal(got, want) {
					t.Fatalf("import %d after the %s: %d events %+v, want the %d of before", i+1, mode, len(got), st, len(want))
				}
				s, err := ix.Session(ctx, sid)
				if err != nil || s.SourcePath != to || s.EventCount != len(want) {
					t.Fatalf("session after the %s: %+v %v, want source %s", mode, s, err, to)
				}
			}
		})
	}
}

// TestRewriteKeepsOtherFilesRecords: two copies of a Claude transcript in two project folders; the one
// imported first (whose rows hold the shared records) is cut to its first three lines (a rewrite, read
// whole): the records only the other copy still holds stay, in the same import.
func TestRewriteKeepsOtherFilesRecords(t *testing.T) {
	corpus := corpusDir(t)
	root := t.TempDir()
	a, b := filepath.Join(root, "-a", "sample_session.jsonl"), filepath.Join(root, "-b", "sample_session.jsonl")
	copyEdited(t, filepath.Join(corpus, holdersClaude), a, nil)
	copyEdited(t, a, b, nil)
	ix := openTestIndex(t)
	st := refresh(t, ix, ClaudeCode, root)
	sid := st.Results[0].SessionID
	want := eventIDs(t, ix, sid)
	copyEdited(t, a, a, func(d []byte) []byte {
		lines := bytes.SplitAfter(d, []byte("\n"))
		return bytes.Join(lines[:3], nil)
	})
	st = refresh(t, ix, ClaudeCode, root)
	if got := eventIDs(t, ix, sid); !slices.Equal(got, want) {
		t.Fatalf("after the rewrite of %s: %d events, want %d (%+v)", a, len(got), len(want), st)
	}
	if st.Reread != 1 {
		t.Fatalf("reread %d, want 1 (the other copy)", st.Reread)
	}
}

// TestStrayCopyConflict: a file in another Claude project folder with the session's name and record ids
// but other text. A copy added later does not replace the indexed text; copies that disagree are counted
// in the import's report and Stats (ctx status) and each event names (its session's source_path) a file
// that holds it; when the stray copy goes, the real text is back and no conflict is left.
func TestStrayCopyConflict(t *testing.T) {
	corpus := corpusDir(t)
	ctx := context.Background()
	forge := func(d []byte) []byte {
		d = bytes.Replace(d, []byte("Create a hello world function"), []byte("FORGED text"), 1)
		return bytes.Join(bytes.SplitAfter(d, []byte("\n"))[:3], nil)
	}
	text := func(t *testing.T, ix *Index, sid string) string {
		t.Helper()
		for _, e := range sessionEvents(t, ix, sid) {
			if strings.Contains(e.Text, "hello world function") || strings.Contains(e.Text, "FORGED") {
				return e.Text
			}
		}
		t.Fatal("the first user message is gone")
		return ""
	}
	conflicts := func(t *testing.T, ix *Index) int {
		t.Helper()
		s, err := ix.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Conflicts
	}

	// The real file first, the stray copy later: the text stays the real one.
	root := t.TempDir()
	real, stray := filepath.Join(root, "-work-app", "sample_session.jsonl"), filepath.Join(root, "-a-copy", "sample_session.jsonl")
	copyEdited(t, filepath.Join(corpus, holdersClaude), real, nil)
	ix := openTestIndex(t)
	sid := refresh(t, ix, ClaudeCode, root).Results[0].SessionID
	copyEdited(t, real, stray, forge)
	st := refresh(t, ix, ClaudeCode, root)
	if got := text(t, ix, sid); !strings.Contains(got, "hello world function") {
		t.Fatalf("a stray copy replaced the text: %q", got)
	}
	if st.Conflicts != 1 || conflicts(t, ix) != 1 {
		t.Fatalf("conflicts: import %d, stats %d, want 1", st.Conflicts, conflicts(t, ix))
	}

	// Both at once, the stray copy sorting first: its text is kept, and the conflict reported; once it
	// is deleted, the real file's text.
	root = t.TempDir()
	real, stray = filepath.Join(root, "-work-app", "sample_session.jsonl"), filepath.Join(root, "-a-copy", "sample_session.jsonl")
	copyEdited(t, filepath.Join(corpus, holdersClaude), real, nil)
	copyEdited(t, real, stray, forge)
	ix = openTestIndex(t)
	st = refresh(t, ix, ClaudeCode, root)
	if st.Conflicts != 1 || conflicts(t, ix) != 1 {
		t.Fatalf("conflicts: import %d, stats %d, want 1", st.Conflicts, conflicts(t, ix))
	}
	n := len(sessionEvents(t, ix, sid))
	if err := os.RemoveAll(filepath.Dir(stray)); err != nil {
		t.Fatal(err)
	}
	st = refresh(t, ix, ClaudeCode, root)
	if got := text(t, ix, sid); !strings.Contains(got, "hello world function") {
		t.Fatalf("after the stray copy's deletion: %q (%+v)", got, st)
	}
	if got := len(sessionEvents(t, ix, sid)); got != n || conflicts(t, ix) != 0 {
		t.Fatalf("after the stray copy's deletion: %d events (want %d), %d conflicts", got, n, conflicts(t, ix))
	}
	if s, err := ix.Session(ctx, sid); err != nil || s.SourcePath != real {
		t.Fatalf("session %+v %v, want source %s", s, err, real)
	}
}

// TestResumedThreadOrder: a resumed Codex thread, two rollouts of one session (the corpus rollout's first
// 100 lines, then its session_meta and the rest in a later file): the session's events are numbered once,
// 1..n, the first file's then the second's, so that paging by seq and an event's window see each event
// once; an append to the first file and the second file's deletion keep that.
func TestResumedThreadOrder(t *testing.T) {
	corpus := corpusDir(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(corpus, "codex", "codemie", holdersRollout))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	root := t.TempDir()
	a := filepath.Join(root, "sessions", "2026", "05", "11", holdersRollout)
	b := filepath.Join(root, "sessions", "2026", "05", "12", "rollout-2026-05-12T09-00-00-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
	copyEdited(t, filepath.Join(corpus, "codex", "codemie", holdersRollout), a, func([]byte) []byte { return bytes.Join(lines[:90], nil) })
	copyEdited(t, a, b, func([]byte) []byte { return append(slices.Clone(lines[0]), bytes.Join(lines[100:], nil)...) })
	ix := openTestIndex(t)
	st := refresh(t, ix, Codex, root)
	sid := st.Results[0].SessionID
	check := func(what string, wantFiles ...string) {
		t.Helper()
		evs := sessionEvents(t, ix, sid)
		file := 0
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("%s: event %d has seq %d, want %d", what, i, e.Seq, i+1)
			}
			for file < len(wantFiles)-1 && !strings.HasPrefix(e.NativeKey, wantFiles[file]+":") {
				file++
			}
			if !strings.HasPrefix(e.NativeKey, wantFiles[file]+":") {
				t.Fatalf("%s: event %d (%s) out of the files' order %v", what, i+1, e.NativeKey, wantFiles)
			}
		}
		// Paging one event at a time sees each once.
		var paged []string
		for after := int64(0); ; {
			page, err := ix.Events(ctx, sid, after, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, page[0].ID)
			after = page[0].Seq
		}
		if len(paged) != len(evs) {
			t.Fatalf("%s: paging by one gives %d events, want %d", what, len(paged), len(evs))
		}
		mid := evs[len(evs)/2]
		_, around, err := ix.Event(ctx, mid.ID, 3)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, e := range around {
			seqs = append(seqs, e.Seq)
		}
		if want := []int64{mid.Seq - 3, mid.Seq - 2, mid.Seq - 1, mid.Seq, mid.Seq + 1, mid.Seq + 2, mid.Seq + 3}; !slices.Equal(seqs, want) {
			t.Fatalf("%s: window around %d: %v, want %v", what, mid.Seq, seqs, want)
		}
	}
	fa, fb := filepath.Base(a), filepath.Base(b)
	check("first import", fa, fb)
	// An append to the first file: its events stay before the second file's.
	f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Join(lines[90:100], nil)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st := refresh(t, ix, Codex, root); st.Appended != 1 {
		t.Fatalf("append: %+v", st)
	}
	check("after the append", fa, fb)
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	refresh(t, ix, Codex, root)
	check("after the second file's deletion", fa)
}

// TestOpenCodeDeletedSession: a session deleted from opencode.db leaves the index (and search) at the next
// import; the database's other sessions stay.
func TestOpenCodeDeletedSession(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dbPath := filepath.Join(root, "opencode.db")
	w, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(openCodeTestSchema); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	refresh(t, ix, OpenCode, root)
	hits := func(q string) int {
		t.Helper()
		r, err := ix.Search(ctx, Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		return len(r.Hits)
	}
	if hits("child") == 0 {
		t.Fatal("the child session is not indexed")
	}
	if _, err := w.Exec(`DELETE FROM part WHERE session_id='ses_child'; DELETE FROM message WHERE session_id='ses_child'; DELETE FROM session WHERE id='ses_child'`); err != nil {
		t.Fatal(err)
	}
	st := refresh(t, ix, OpenCode, root)
	if st.Removed != 1 || hits("child") != 0 || hits("parser") == 0 {
		t.Fatalf("after the deletion: %+v, %d hits of the deleted session", st, hits("child"))
	}
	if _, err := ix.Session(ctx, SessionID(OpenCode, "ses_child")); err == nil {
		t.Fatal("the deleted session is still indexed")
	}
	if _, err := ix.Session(ctx, SessionID(OpenCode, "ses_parent")); err != nil {
		t.Fatal(err)
	}
}
