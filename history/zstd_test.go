package history

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestCodexZstd: a .jsonl.zst rollout imports to the same session and events as its raw file, and when
// both exist discovery keeps the raw one.
func TestCodexZstd(t *testing.T) {
	corpus := corpusDir(t)
	raw, err := os.ReadFile(filepath.Join(corpus, "codex/ctxrs/sessions/2026/06/23/codex-session-root.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	day := filepath.Join(root, "sessions", "2026", "06", "23")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	zpath := filepath.Join(day, "rollout-a.jsonl.zst")
	if err := os.WriteFile(zpath, enc.EncodeAll(raw, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srcs, err := Discover(ctx, Codex, root, false)
	if err != nil || len(srcs) != 1 || srcs[0].Format != FormatCodexZstd {
		t.Fatalf("discover: %+v %v", srcs, err)
	}
	ixz := openTestIndex(t)
	rz := importOne(t, ixz, srcs[0])
	if rz.Action != "imported" || rz.Events != 7 || rz.SessionID != SessionID(Codex, "codex-session-root") {
		t.Fatalf("zstd import: %+v", rz)
	}
	if r := importOne(t, ixz, srcs[0]); r.Action != "unchanged" {
		t.Fatalf("zstd re-import: %+v", r)
	}

	rawPath := filepath.Join(day, "rollout-a.jsonl")
	if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err = Discover(ctx, Codex, root, false)
	if err != nil || len(srcs) != 1 || srcs[0].Path != rawPath {
		t.Fatalf("raw and zst: %+v %v", srcs, err)
	}
	ixr := openTestIndex(t)
	rr := importOne(t, ixr, srcs[0])
	if strings.Join(eventIDs(t, ixr, rr.SessionID), ",") != strings.Join(eventIDs(t, ixz, rz.SessionID), ",") {
		t.Fatal("raw and zstd imports differ")
	}

	// A corrupt .zst fails that source only.
	bad := filepath.Join(day, "rollout-b.jsonl.zst")
	if err := os.WriteFile(bad, []byte("not zstd at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := importOne(t, ixr, Source{Provider: Codex, Format: FormatCodexZstd, Path: bad}); r.Action != "failed" {
		t.Fatalf("corrupt zstd: %+v", r)
	}
}

// TestCodexZstdCapReported: a .jsonl.zst that decompresses to more than the limit imports what fits and
// says so (Truncated, a diagnostic, ImportStats.Truncated), as does one whose single line passes the
// limit (it imports nothing and still says so); one within the limit is not marked.
func TestCodexZstdCapReported(t *testing.T) {
	old := maxZstdBytes
	maxZstdBytes = 4096
	t.Cleanup(func() { maxZstdBytes = old })
	ctx := context.Background()
	root := t.TempDir()
	enc, _ := zstd.NewWriter(nil)
	write := func(name, data string) Source {
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, enc.EncodeAll([]byte(data), nil), 0o644); err != nil {
			t.Fatal(err)
		}
		return Source{Provider: Codex, Format: FormatCodexZstd, Path: p}
	}
	meta := `{"timestamp":"2026-03-01T03:00:00Z","type":"session_meta","payload":{"id":"019fdddd-0000-7000-8000-00000000000%s"}}` + "\n"
	var many strings.Builder
	many.WriteString(strings.Replace(meta, "%s", "1", 1))
	for many.Len() < 3*4096 {
		many.WriteString(codexMsg("2026-03-01T03:00:01Z", "filler words"))
	}
	bomb := strings.Replace(meta, "%s", "2", 1) + codexMsg("2026-03-01T03:00:01Z", strings.Repeat("x", 8192))
	small := strings.Replace(meta, "%s", "3", 1) + codexMsg("2026-03-01T03:00:01Z", "small")
	srcs := []Source{write("rollout-many.jsonl.zst", many.String()), write("rollout-bomb.jsonl.zst", bomb), write("rollout-small.jsonl.zst", small)}
	st, err := openTestIndex(t).Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Truncated != 2 || st.Failed != 0 {
		t.Fatalf("import: %+v", st)
	}
	for i, r := range st.Results {
		cut := i < 2
		if r.Truncated != cut || cut && !strings.Contains(strings.Join(r.Errors, "\n"), "more than the limit") {
			t.Errorf("%s: truncated %v, errors %q; want truncated %v", r.Source.Path, r.Truncated, r.Errors, cut)
		}
	}
	if st.Results[0].Events == 0 || st.Results[2].Events != 1 {
		t.Errorf("what fits the limit is not imported: %+v", st.Results)
	}
}

// TestCodexZstdBombSkipped: a .jsonl.zst that decompresses to more than maxZstdRatio times its size
// (above zstdRatioFloor, lowered here) fails as it is read, with an error naming it and the limit: none of
// its events or its session is written, and the other sources of the import (a rollout within the bound,
// compressed or raw) are imported.
func TestCodexZstdBombSkipped(t *testing.T) {
	old := zstdRatioFloor
	zstdRatioFloor = 64 << 10
	t.Cleanup(func() { zstdRatioFloor = old })
	ctx := context.Background()
	root := t.TempDir()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	meta := func(n string) string {
		return `{"timestamp":"2026-03-03T00:00:00Z","type":"session_meta","payload":{"id":"019feeee-0000-7000-8000-00000000000` + n + `"}}` + "\n"
	}
	var bomb strings.Builder
	bomb.WriteString(meta("1"))
	line := codexMsg("2026-03-03T00:00:01Z", "the same line again")
	for bomb.Len() < 4<<20 {
		bomb.WriteString(line)
	}
	bombPath := write("rollout-2026-03-03T00-00-00-019feeee-0000-7000-8000-000000000001.jsonl.zst", enc.EncodeAll([]byte(bomb.String()), nil))
	if fi, _ := os.Stat(bombPath); fi.Size()*maxZstdRatio >= zstdRatioFloor {
		t.Fatalf("the bomb is %d bytes compressed: not a bomb for this test's bound", fi.Size())
	}
	srcs := []Source{
		{Provider: Codex, Format: FormatCodexZstd, Path: bombPath},
		{Provider: Codex, Format: FormatCodexZstd, Path: write("rollout-2026-03-03T00-00-00-019feeee-0000-7000-8000-000000000002.jsonl.zst",
			enc.EncodeAll([]byte(meta("2")+codexMsg("2026-03-03T00:00:01Z", "compressed and fine")), nil))},
		{Provider: Codex, Format: FormatCodex, Path: write("rollout-2026-03-03T00-00-00-019feeee-0000-7000-8000-000000000003.jsonl",
			[]byte(meta("3")+codexMsg("2026-03-03T00:00:01Z", "raw and fine")))},
	}
	ix := openTestIndex(t)
	st, err := ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	r := st.Results[0]
	if r.Action != "failed" || !strings.Contains(r.Err, bombPath) || !strings.Contains(r.Err, "100×") || !strings.Contains(r.Err, "more than") {
		t.Fatalf("bomb: %+v", r)
	}
	if st.Failed != 1 || st.Imported != 2 || st.Results[1].Events != 1 || st.Results[2].Events != 1 {
		t.Fatalf("the other sources: %+v", st.Results)
	}
	var n int
	if err := ix.db.QueryRow(`SELECT count(*) FROM sessions WHERE native_id='019feeee-0000-7000-8000-000000000001'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the bomb's session is in the index (%d, %v)", n, err)
	}
	if err := ix.db.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d events, want the other sources' 2 (%v)", n, err)
	}
	if err := ix.db.QueryRow(`SELECT count(*) FROM sources WHERE path=?`, bombPath).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the bomb's source is recorded (%d, %v)", n, err)
	}
}

// TestCodexZstdBombRemembered: a .jsonl.zst refused as a decompression bomb is remembered by its stat
// (name, size, mtime): the next import skips it with the same error without reading it (its bytes,
// replaced by others of the same size and mtime, are not looked at), through Import and ImportSource
// alike; once it changes it is read again, and a source that imports is forgotten.
func TestCodexZstdBombRemembered(t *testing.T) {
	old := zstdRatioFloor
	zstdRatioFloor = 64 << 10
	t.Cleanup(func() { zstdRatioFloor = old })
	ctx := context.Background()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	meta := `{"timestamp":"2026-03-03T00:00:00Z","type":"session_meta","payload":{"id":"019feeee-0000-7000-8000-000000000001"}}` + "\n"
	var bomb strings.Builder
	bomb.WriteString(meta)
	for line := codexMsg("2026-03-03T00:00:01Z", "the same line again"); bomb.Len() < 4<<20; {
		bomb.WriteString(line)
	}
	data := enc.EncodeAll([]byte(bomb.String()), nil)
	p := filepath.Join(t.TempDir(), "rollout-2026-03-03T00-00-00-019feeee-0000-7000-8000-000000000001.jsonl.zst")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srcs := []Source{{Provider: Codex, Format: FormatCodexZstd, Path: p}}
	ix := openTestIndex(t)
	st, err := ix.Import(ctx, srcs)
	if err != nil || st.Failed != 1 || !strings.Contains(st.Results[0].Err, "more than") {
		t.Fatalf("first import: %+v, %v", st.Results, err)
	}
	first := st.Results[0].Err

	// Unchanged: not read again (the refusal says so: only a source not read says "not read again"). An
	// edit keeping the size and the mtime is no longer "unchanged" on Linux (its ctime moved,
	// TestSameStatEditSeen).
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"Import", "ImportSource"} {
		var r SourceResult
		if how == "Import" {
			st, err := ix.Import(ctx, srcs)
			if err != nil {
				t.Fatal(err)
			}
			r = st.Results[0]
		} else if r, err = ix.ImportSource(ctx, srcs[0]); err != nil {
			t.Fatal(err)
		}
		if r.Action != "failed" || !strings.HasPrefix(r.Err, first) || !strings.Contains(r.Err, "not read again") {
			t.Errorf("%s of the unchanged bomb: %+v; want its refusal again, unread (%s)", how, r, first)
		}
	}

	// Changed (the bomb again, a new mtime): read again, and refused again from what it holds.
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(time.Minute)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Import(ctx, srcs); err != nil || st.Failed != 1 || st.Results[0].Err != first {
		t.Fatalf("the changed bomb: %+v, %v; want it read and refused (%s)", st.Results, err, first)
	}
	// A rollout within the bound at that path: imported, and the refusal forgotten.
	if err := os.WriteFile(p, enc.EncodeAll([]byte(meta+codexMsg("2026-03-03T00:00:01Z", "fine now")), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Import(ctx, srcs); err != nil || st.Imported != 1 {
		t.Fatalf("the fixed rollout: %+v, %v", st.Results, err)
	}
	if m, err := ix.loadRefused(ctx); err != nil || len(m) != 0 {
		t.Errorf("refusals after the rollout imported: %v, %v", m, err)
	}
}

// TestJSONLSizeBound: a raw transcript (.jsonl) larger than maxJSONLBytes (lowered here; a sparse file of
// 1 GiB) is read only up to the bound: the complete records before it are imported, and the result says
// the rest is not (truncated, with the limit in its errors). A second import finds it unchanged.
func TestJSONLSizeBound(t *testing.T) {
	old := maxJSONLBytes
	maxJSONLBytes = 1 << 20
	t.Cleanup(func() { maxJSONLBytes = old })
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "rollout-2026-03-03T00-00-00-019feeee-0000-7000-8000-000000000009.jsonl")
	head := `{"timestamp":"2026-03-03T00:00:00Z","type":"session_meta","payload":{"id":"019feeee-0000-7000-8000-000000000009"}}` + "\n" +
		codexMsg("2026-03-03T00:00:01Z", "before the bound")
	if err := os.WriteFile(p, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 1<<30); err != nil { // sparse: 1 GiB of holes after the records
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	srcs := []Source{{Provider: Codex, Format: FormatCodex, Path: p}}
	st, err := ix.Import(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	r := st.Results[0]
	if r.Action != "imported" || r.Events != 1 || !r.Truncated || len(r.Errors) == 0 || !strings.Contains(r.Errors[len(r.Errors)-1], "limit of 1 MiB") {
		t.Fatalf("a 1 GiB transcript over a 1 MiB bound: %+v", r)
	}
	if st, err := ix.Import(ctx, srcs); err != nil || st.Unchanged != 1 {
		t.Fatalf("second import: %+v, %v", st.Results, err)
	}
}

// truncatedRollout is a Codex rollout of n message lines, zstd-compressed (small blocks, so that a
// prefix decodes) and cut to the first part of its bytes: what an interrupted copy leaves.
func truncatedRollout(t *testing.T, n int, part float64) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"timestamp":"2026-07-02T00:00:00Z","type":"session_meta","payload":{"id":"codex-cut","cwd":"/w"}}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp":"2026-07-02T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"line %d %x"}]}}`+"\n", i, sha256.Sum256([]byte{byte(i), byte(i >> 8)}))
	}
	enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(1<<10), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	z := enc.EncodeAll([]byte(b.String()), nil)
	return z[:int(float64(len(z))*part)]
}

// TestCodexZstdTruncatedPrefix: a .jsonl.zst cut short imports its readable lines, marked
// truncated with a diagnostic, as one over the output bound does; it failed whole (none of them).
func TestCodexZstdTruncatedPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout-2026-07-02T00-00-00-cut.jsonl.zst")
	if err := os.WriteFile(path, truncatedRollout(t, 400, 0.6), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := openTestIndex(t)
	r := importOne(t, ix, Source{Provider: Codex, Format: FormatCodexZstd, Path: path})
	if r.Action != "imported" || !r.Truncated || r.Events < 100 || r.Events >= 400 || len(r.Errors) == 0 ||
		!strings.Contains(r.Errors[len(r.Errors)-1], "cut short or damaged") {
		t.Fatalf("import: %+v", r)
	}
}
