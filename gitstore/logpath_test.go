package gitstore_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// randomHistory makes refs/heads/ctx with git fast-import: a DAG of commits on three lines of work that
// fork and merge at random, many with the same committer second and some with a committer time older than
// their parent's (clock skew), each changing, adding or deleting a few of knowledge/{a,b,c}.md,
// decisions/d.md and state.json; merges take either side's version of a path, or a new one.
func randomHistory(t *testing.T, seed int64) (string, *gitstore.Repo) {
	t.Helper()
	dir := testenv.NewRepo(t)
	rng := rand.New(rand.NewSource(seed))
	paths := []string{"knowledge/a.md", "knowledge/b.md", "knowledge/c.md", "decisions/d.md", "state.json"}
	var fi bytes.Buffer
	mark := 0
	type line struct {
		mark  int
		files map[string]string
	}
	lines := make([]*line, 3)
	when := int64(1767225600)
	commit := func(parents []*line, files map[string]string) *line {
		mark++
		if rng.Intn(3) == 0 {
			when -= int64(rng.Intn(3)) // same second, or older than the parent
		} else {
			when += int64(rng.Intn(2))
		}
		if len(parents) == 0 {
			fmt.Fprintf(&fi, "reset refs/heads/ctx\n")
		}
		fmt.Fprintf(&fi, "commit refs/heads/ctx\nmark :%d\ncommitter T <t@example.com> %d +0000\n", mark, when)
		msg := fmt.Sprintf("c%d", mark)
		fmt.Fprintf(&fi, "data %d\n%s\n", len(msg), msg)
		for i, p := range parents {
			if i == 0 {
				fmt.Fprintf(&fi, "from :%d\n", p.mark)
			} else {
				fmt.Fprintf(&fi, "merge :%d\n", p.mark)
			}
		}
		fmt.Fprintf(&fi, "deleteall\n")
		for p, v := range files {
			fmt.Fprintf(&fi, "M 100644 inline %s\ndata %d\n%s\n", p, len(v), v)
		}
		return &line{mark: mark, files: files}
	}
	copyFiles := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	lines[0] = commit(nil, map[string]string{"manifest.json": "{}", "knowledge/a.md": "a0"})
	lines[1], lines[2] = lines[0], lines[0]
	for i := 0; i < 120; i++ {
		k := rng.Intn(3)
		if rng.Intn(4) == 0 {
			o := rng.Intn(3)
			if o == k || lines[o] == lines[k] {
				continue
			}
			// A merge: each path from one side at random, sometimes a new version.
			files := map[string]string{"manifest.json": "{}"}
			for _, p := range paths {
				src := lines[k].files
				if rng.Intn(2) == 0 {
					src = lines[o].files
				}
				if v, ok := src[p]; ok {
					files[p] = v
				}
				if rng.Intn(8) == 0 {
					files[p] = fmt.Sprintf("merged %d", i)
				}
			}
			lines[k] = commit([]*line{lines[k], lines[o]}, files)
			continue
		}
		files := copyFiles(lines[k].files)
		for j := 0; j <= rng.Intn(2); j++ {
			p := paths[rng.Intn(len(paths))]
			if rng.Intn(6) == 0 {
				delete(files, p)
			} else {
				files[p] = fmt.Sprintf("v%d.%d", i, j)
			}
		}
		lines[k] = commit([]*line{lines[k]}, files)
	}
	// Bring every line into ctx's tip.
	tip := commit([]*line{lines[0], lines[1], lines[2]}, copyFiles(lines[0].files))
	_ = tip
	testenv.GitIn(t, dir, fi.String(), "fast-import", "--quiet", "--force")
	return dir, open(t, dir)
}

// TestLogAllGitMatchesWalk: LogAll with a path (C git finds the commits that changed it) returns the same
// commits in the same order as the walk that looks the path up in every commit's tree, on random
// histories with merges, octopus merges, equal committer times and clock skew, for files, folders, deleted
// and missing paths, with and without a limit: logSeeds histories (2 in make test, 6 under make stress).
func TestLogAllGitMatchesWalk(t *testing.T) {
	if !gitstore.HasGit() {
		t.Skip("no git")
	}
	mergesDropped := 0
	for seed := int64(1); seed <= logSeeds; seed++ {
		dir, r := randomHistory(t, seed)
		tip, err := r.Resolve(bg, pub)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"knowledge/a.md", "knowledge/b.md", "knowledge/c.md", "knowledge", "decisions",
			"decisions/d.md", "state.json", "manifest.json", "nope.md", "knowledge/nope"} {
			for _, n := range []int{0, 1, 3} {
				got, err := r.LogPathGit(bg, tip, n, path)
				if err != nil {
					t.Fatal(err)
				}
				if all, err := r.LogAll(bg, tip, n, path); err != nil || commitList(all) != commitList(got) {
					t.Fatalf("LogAll(n=%d, %q) differs from its C git way: %v", n, path, err)
				}
				want, err := r.LogAllWalk(bg, tip, n, path)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					// Merges git's --full-history lists that LogAll leaves out (same as one parent).
					full := testenv.Git(t, dir, "rev-list", "--full-history", "ctx", "--", path)
					if full != "" {
						mergesDropped += len(strings.Split(full, "\n")) - len(got)
					}
				}
				if g, w := commitList(got), commitList(want); g != w {
					t.Errorf("seed %d, LogAll(n=%d, %q):\n%s\nwalk:\n%s", seed, n, path, g, w)
				}
			}
		}
	}
	if mergesDropped == 0 {
		t.Error("no history had a merge that git --full-history lists and LogAll drops: the test misses that rule")
	}
}

func commitList(cs []*gitstore.Commit) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.Hash.String()[:10]+" "+c.Message)
	}
	return strings.Join(s, "\n")
}

// TestGitPathOK: only plain relative paths reach git as a pathspec (with --literal-pathspecs); the rest
// are looked up in trees by the walk.
func TestGitPathOK(t *testing.T) {
	for p, want := range map[string]bool{
		"knowledge/a.md": true, "knowledge": true, ":(glob)*": true, "*.md": true, "-n": true,
		"": false, "/etc/passwd": false, "../x": false, "knowledge/../x": false, "./x": false, "a//b": false,
		"a\x00b": false,
	} {
		if got := gitstore.GitPathOK(p); got != want {
			t.Errorf("GitPathOK(%q) = %v, want %v", p, got, want)
		}
	}
}
