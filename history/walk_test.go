//go:build unix

package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// discoverRef is Discover as it was before the cached walk (filepath.WalkDir): the walk must find the
// same sources in the same order, with and without a cache.
func discoverRef(ctx context.Context, p Provider, root string, explicit bool) ([]Source, error) {
	// A root that is itself a symbolic link is resolved once (docs/history.md "Discovery").
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return nil, fmt.Errorf("discover %s: %w", p, err)
		}
	}
	fi, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("discover %s: %w", p, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("discover %s: %s is not a directory", p, root)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", p, err)
	}
	var out []Source
	count := 0
	zst := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // unreadable subdirectory: skip it
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel, _ := filepath.Rel(root, path)
		depth := 0
		if rel != "." {
			depth = strings.Count(rel, string(filepath.Separator)) + 1
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil // never followed
		}
		if d.IsDir() {
			if depth > maxWalkDepth || (depth > 0 && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		count++
		if count > maxDiscoveredFiles {
			return fmt.Errorf("more than %d files under %s", maxDiscoveredFiles, root)
		}
		if s, ok := classify(p, rel, explicit); ok {
			s.Path = path
			// The walk hands each source its lstat (statUnchanged uses it): os.Lstat's answer.
			s.stat.known = true
			if fi, err := os.Lstat(path); err == nil {
				s.stat = statOf(fi)
			}
			if s.Format == FormatCodexZstd {
				zst[path] = true
			}
			out = append(out, s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("discover %s under %s: %w", p, root, err)
	}
	if p == OpenCode { // a database holds many sessions: one source each
		var expanded []Source
		for _, s := range out {
			if s.Format != FormatOpenCodeDB {
				expanded = append(expanded, s)
				continue
			}
			ss, err := openCodeDBSessions(ctx, s.Path)
			if err != nil {
				expanded = append(expanded, s) // imported as a failed source that says why
				continue
			}
			expanded = append(expanded, ss...)
		}
		out = expanded
	}
	if len(zst) > 0 { // a raw rollout and its .zst copy are one session: the raw file wins
		have := map[string]bool{}
		for _, s := range out {
			have[s.Path] = true
		}
		kept := out[:0]
		for _, s := range out {
			if s.Format == FormatCodexZstd && have[strings.TrimSuffix(s.Path, ".zst")] {
				continue
			}
			kept = append(kept, s)
		}
		out = kept
	}
	for i := range out {
		out[i].explicit = explicit
	}
	return out, nil
}

// walkTree makes a tree with what discovery must skip or keep: hidden directories and files, symbolic
// links to a file and to a directory, a FIFO, a directory deeper than maxWalkDepth.
func walkTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "projects")
	write := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("-home-a/s1.jsonl")
	write("-home-a/s2.jsonl")
	write("-home-a/s2/subagents/agent-x.jsonl")
	write("-home-a/.hidden/s3.jsonl")
	write("-home-a/.s4.jsonl")
	write("-home-b/notes.txt")
	write("-home-b/z.jsonl")
	write(strings.Repeat("d/", maxWalkDepth+2) + "deep.jsonl")
	write(strings.Repeat("d/", maxWalkDepth-1) + "edge.jsonl")
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "o.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "-home-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "o.jsonl"), filepath.Join(root, "-home-a", "l.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "-home-b", "f.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// cacheAt is a cache whose walks believe they run an hour from now: every directory is old enough to
// be cached (the racy window is tested apart).
func cacheAt(ix *Index) *DirCache {
	c := ix.LoadDirCache(context.Background())
	c.start = time.Now().Add(time.Hour)
	return c
}

func TestDiscoverSameAsWalkDir(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	type root struct {
		p        Provider
		path     string
		explicit bool
	}
	tree := walkTree(t)
	roots := []root{{ClaudeCode, tree, false}, {ClaudeCode, tree, true}, {Cursor, tree, true}}
	corpus := corpusDir(t)
	for _, p := range Providers {
		roots = append(roots, root{p, filepath.Join(corpus, string(p)), true})
	}
	if h := os.Getenv("CTX_BENCH_HISTORY"); h != "" {
		roots = append(roots, root{ClaudeCode, filepath.Join(h, "claude-code", "projects"), false}, root{Codex, filepath.Join(h, "codex"), false})
	}
	link := filepath.Join(t.TempDir(), "rootlink")
	if err := os.Symlink(tree, link); err != nil {
		t.Fatal(err)
	}
	roots = append(roots, root{ClaudeCode, link, true})
	for _, r := range roots {
		want, werr := discoverRef(ctx, r.p, r.path, r.explicit)
		cold := cacheAt(ix)
		for i, c := range []*DirCache{nil, cold, cold} {
			reads := dirReads.Load()
			got, err := DiscoverCached(ctx, r.p, r.path, r.explicit, c)
			if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s (walk %d): %d sources %v, want %d %v", r.p, r.path, i, len(got), err, len(want), werr)
			}
			if i == 2 && dirReads.Load() != reads {
				t.Fatalf("%s %s: the walk with a warm cache listed %d directories", r.p, r.path, dirReads.Load()-reads)
			}
		}
		if r.path == tree && len(want) == 0 {
			t.Fatal("the tree has no sources")
		}
	}
}

// TestDirCacheChanges: through the index, a second import's walk lists only what changed: a file added
// to a directory, a directory removed (forgotten), a directory replaced by a symbolic link (skipped).
func TestDirCacheChanges(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	tree := walkTree(t)
	discover := func() []Source {
		t.Helper()
		c := cacheAt(ix)
		got, err := DiscoverCached(ctx, ClaudeCode, tree, true, c)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := discoverRef(ctx, ClaudeCode, tree, true)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d sources, want %d", len(got), len(want))
		}
		if err := ix.SaveDirCache(ctx, c); err != nil {
			t.Fatal(err)
		}
		return got
	}
	discover()
	reads := dirReads.Load()
	n := len(discover())
	if dirReads.Load() != reads {
		t.Fatalf("unchanged tree: %d directories listed", dirReads.Load()-reads)
	}

	a := filepath.Join(tree, "-home-a")
	before, _ := os.Lstat(a)
	stampA, _ := dirStamp(before)
	for i := 0; ; i++ { // the directory's stamp must show the change (timestamps move by clock ticks)
		p := filepath.Join(a, fmt.Sprintf("new%d.jsonl", i))
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Lstat(a)
		if s, _ := dirStamp(fi); s != stampA {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	reads = dirReads.Load()
	got := discover()
	if len(got) <= n || dirReads.Load()-reads != 1 {
		t.Fatalf("after an added file: %d sources (was %d), %d directories listed", len(got), n, dirReads.Load()-reads)
	}
	if err := os.RemoveAll(filepath.Join(tree, "-home-b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(a, "s2"), filepath.Join(tree, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tree, "moved"), filepath.Join(a, "s2")); err != nil {
		t.Fatal(err)
	}
	discover()
	var rows int
	if err := ix.db.QueryRow(`SELECT count(*) FROM dirs WHERE path LIKE ?`, filepath.Join(tree, "-home-b")+"%").Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("a removed directory is still cached (%d rows, %v)", rows, err)
	}
}

// A directory changed within racyWindow of the walk is listed again next time, and a damaged cache
// (an entry naming a parent directory) is not followed.
func TestDirCacheRacyAndDamaged(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	tree := walkTree(t)
	c := ix.LoadDirCache(ctx) // the real clock: the tree was made just now
	if _, err := DiscoverCached(ctx, ClaudeCode, tree, true, c); err != nil {
		t.Fatal(err)
	}
	if len(c.put) != 0 {
		t.Fatalf("%d directories changed just now were cached", len(c.put))
	}
	c = cacheAt(ix)
	if _, err := DiscoverCached(ctx, ClaudeCode, tree, true, c); err != nil {
		t.Fatal(err)
	}
	if err := ix.SaveDirCache(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.db.Exec(`UPDATE dirs SET entries = ? WHERE path = ?`, "f../../../etc/passwd\x00d..\x00", tree); err != nil {
		t.Fatal(err)
	}
	want, _ := discoverRef(ctx, ClaudeCode, tree, true)
	reads := dirReads.Load()
	got, err := DiscoverCached(ctx, ClaudeCode, tree, true, cacheAt(ix))
	if err != nil || !reflect.DeepEqual(got, want) || dirReads.Load()-reads != 1 {
		t.Fatalf("damaged cache: %d sources %v (want %d), %d directories listed", len(got), err, len(want), dirReads.Load()-reads)
	}
}

// TestDirCacheForgetsOtherRoots: the listings of a one-off root (an import with --path) stay while only
// other one-off roots are walked, and are forgotten by the next walk of every root (ForgetOtherRoots, a
// full import); the walked root's listings stay. Before, nothing ever removed them.
func TestDirCacheForgetsOtherRoots(t *testing.T) {
	ctx := context.Background()
	ix := openTestIndex(t)
	oneOff, standing := walkTree(t), walkTree(t)
	rows := func(root string) int {
		t.Helper()
		var n int
		if err := ix.db.QueryRow(`SELECT count(*) FROM dirs WHERE path = ? OR path LIKE ?`, root, root+string(filepath.Separator)+"%").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	walkSave := func(root string, all bool) {
		t.Helper()
		c := cacheAt(ix)
		if _, err := DiscoverCached(ctx, ClaudeCode, root, true, c); err != nil {
			t.Fatal(err)
		}
		if all {
			c.ForgetOtherRoots()
		}
		if err := ix.SaveDirCache(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	walkSave(oneOff, false)
	walkSave(standing, false)
	if rows(oneOff) == 0 || rows(standing) == 0 {
		t.Fatalf("nothing cached: %d, %d rows", rows(oneOff), rows(standing))
	}
	walkSave(standing, true)
	if n := rows(oneOff); n != 0 {
		t.Errorf("the one-off root's listings survived a walk of every root: %d rows", n)
	}
	if rows(standing) == 0 {
		t.Errorf("the walked root's listings were dropped")
	}
	var nilCache *DirCache
	nilCache.ForgetOtherRoots() // no cache: nothing to do
}
