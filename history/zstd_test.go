package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
