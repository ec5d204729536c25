package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestParentCycleRoots: Codex rollouts whose parents loop (A's parent B, B's parent A, C's
// parent A, D's parent C, S its own parent) get one root, the smallest ctx id of the loop: its root is
// empty and every other member's, and every session below one, is it, whatever the import order. A walk
// of at most 64 hops gave A the root A (a subagent whose root is itself), B the root B and C the root B.
func TestParentCycleRoots(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "sessions", "2026", "01", "02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{"cyc-A": "cyc-B", "cyc-B": "cyc-A", "cyc-C": "cyc-A", "cyc-D": "cyc-C", "cyc-S": "cyc-S"}
	for id, parent := range parents {
		body := fmt.Sprintf(`{"timestamp":"2026-01-02T00:00:00Z","type":"session_meta","payload":{"id":%q,"cwd":"/w/cyc","source":{"subagent":{"thread_spawn":{"parent_thread_id":%q,"depth":1}}}}}
{"timestamp":"2026-01-02T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"zzcycle %s"}]}}
`, id, parent, id)
		if err := os.WriteFile(filepath.Join(dir, "rollout-"+id+".jsonl"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srcs, err := Discover(ctx, Codex, filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(dir)))), true)
	if err != nil || len(srcs) != len(parents) {
		t.Fatalf("discover: %+v %v", srcs, err)
	}
	id := func(n string) string { return SessionID(Codex, n) }
	top := slices.Min([]string{id("cyc-A"), id("cyc-B")})
	want := map[string]string{id("cyc-A"): top, id("cyc-B"): top, id("cyc-C"): top, id("cyc-D"): top, id("cyc-S"): ""}
	want[top] = ""
	check := func(name string, ix *Index) {
		t.Helper()
		for sid, root := range want {
			s, err := ix.Session(ctx, sid)
			if err != nil || s.RootID != root {
				t.Errorf("%s: session %s: root %q, want %q (%v)", name, s.NativeID, s.RootID, root, err)
			}
		}
	}
	all := openTestIndex(t)
	if _, err := all.Import(ctx, srcs); err != nil {
		t.Fatal(err)
	}
	check("at once", all)
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}} {
		ix := openTestIndex(t)
		for _, i := range order {
			if _, err := ix.Import(ctx, srcs[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		check(fmt.Sprint("one at a time ", order), ix)
	}
}

// TestChainTops: the top of a chain is its last id (a parent not imported included); of a loop, its
// smallest id, for the sessions below it too.
func TestChainTops(t *testing.T) {
	got := chainTops(map[string]string{"a": "", "b": "a", "c": "b", "d": "x", "e": "f", "f": "g", "g": "e", "h": "g", "s": "s"})
	want := map[string]string{"a": "a", "b": "a", "c": "a", "d": "x", "x": "x", "e": "e", "f": "e", "g": "e", "h": "e", "s": "s"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("chainTops = %v, want %v", got, want)
	}
}
