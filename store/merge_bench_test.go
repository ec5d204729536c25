package store_test

import (
	"bytes"
	"fmt"
	"github.com/ctx-dev/ctx/gitstore"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// Merge benchmark (docs/merge.md): two sides that each changed 1,000 entries of a 10,000-entry store, merged by
// ctx's merge commit path ((*Store).MergeCommit: read base, ours and theirs, merge.Tree, write the tree,
// commit with two parents) and by C git's `git merge --no-edit` of the same two commits in a scratch
// clone (reset --hard between iterations, outside the timer), in the same run. Both sides edit different
// lines of the body, and 500 entries are changed on both sides (lines 1 and 4), so both merges are clean.
// bench/merge.sh runs it and prints the ratio.
const (
	benchEntries = 10000
	benchChanged = 1000
)

// benchEntry is knowledge/k<i>.md with line 1 and 4 of its body set as given.
func benchEntry(i int, l1, l4 string) string {
	return fmt.Sprintf("---\nauthor: Bench <bench@example.com>\nagent: bench\nupdated_at: 2026-01-01T00:00:00Z\nprovenance: agent_generated\nscope: public\n---\n%s\nEntry %05d explains one part of the system.\nIt has several lines.\n%s\nThe end.\n", l1, i, l4)
}

// benchHistories builds, with git fast-import, a repository whose branch ctx (ours) and theirs both
// descend from base (10,000 entries): ours rewrites line 1 of entries 0-999, theirs line 4 of 500-1499.
func benchHistories(b *testing.B) (dir string, ours, theirs string) {
	b.Helper()
	return histories(b, benchEntries, benchChanged)
}

// histories builds, with git fast-import, a repository whose branch ctx (ours) and theirs both descend
// from base (entries knowledge/k<i>.md, i < entries, keys of five digits): ours rewrites line 1 of
// entries [0, changed), theirs line 4 of [changed/2, changed/2+changed), so both sides change the
// middle ones and every merge is clean. It returns the folder and the commits of ctx and theirs.
func histories(tb testing.TB, entries, changed int) (dir string, ours, theirs string) {
	tb.Helper()
	dir = storetest.Repo(tb)
	var in bytes.Buffer
	file := func(p, content string) {
		fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", p, len(content), content)
	}
	commit := func(ref string, mark int, from int, msg string) {
		fmt.Fprintf(&in, "commit %s\nmark :%d\ncommitter Bench <bench@example.com> 1767225600 +0000\ndata %d\n%s\n", ref, mark, len(msg), msg)
		if from > 0 {
			fmt.Fprintf(&in, "from :%d\n", from)
		}
	}
	commit("refs/heads/base", 1, 0, "base")
	file("manifest.json", "{\n  \"version\": 1\n}\n")
	for i := 0; i < entries; i++ {
		file(fmt.Sprintf("knowledge/k%05d.md", i), benchEntry(i, "Title line.", "Fourth line."))
	}
	commit("refs/heads/ctx", 2, 1, "ours")
	for i := 0; i < changed; i++ {
		file(fmt.Sprintf("knowledge/k%05d.md", i), benchEntry(i, "Title line, edited by ours.", "Fourth line."))
	}
	commit("refs/heads/theirs", 3, 1, "theirs")
	for i := changed / 2; i < changed/2+changed; i++ {
		file(fmt.Sprintf("knowledge/k%05d.md", i), benchEntry(i, "Title line.", "Fourth line, edited by theirs."))
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("fast-import: %v\n%s", err, out)
	}
	return dir, testenv.Git(tb, dir, "rev-parse", "ctx"), testenv.Git(tb, dir, "rev-parse", "theirs")
}

// benchResult keeps the ns/op of the last run of each sub-benchmark, for the ratio.
var benchResult = map[string]float64{}

func BenchmarkMergeVsGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	dir, ours, theirs := benchHistories(b)
	oursH, theirsH := gitstore.NewHash(ours), gitstore.NewHash(theirs)
	s, err := store.Open(bg, dir, store.Actor{Agent: "bench", Machine: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var ctxTree, gitTree string
	b.Run("ctx", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			cur, err := s.GitRepo().Resolve(bg, s.BranchRef())
			if err != nil {
				b.Fatal(err)
			}
			if err := s.GitRepo().UpdateRef(bg, s.BranchRef(), cur, oursH, "bench: reset"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			res, err := s.MergeCommit(bg, theirsH, store.PullOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Conflicts) != 0 {
				b.Fatalf("%d conflicts", len(res.Conflicts))
			}
		}
		b.StopTimer()
		ctxTree = testenv.Git(b, dir, "rev-parse", "ctx^{tree}")
		benchResult["ctx"] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	scratch := filepath.Join(b.TempDir(), "scratch")
	testenv.Git(b, "", "clone", "-q", "--no-checkout", dir, scratch)
	testenv.Git(b, scratch, "config", "user.name", "Bench")
	testenv.Git(b, scratch, "config", "user.email", "bench@example.com")
	testenv.Git(b, scratch, "checkout", "-q", "-B", "ours", ours)
	b.Run("git", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			testenv.Git(b, scratch, "reset", "-q", "--hard", ours)
			b.StartTimer()
			testenv.Git(b, scratch, "merge", "-q", "--no-edit", theirs)
		}
		b.StopTimer()
		gitTree = testenv.Git(b, scratch, "rev-parse", "HEAD^{tree}")
		benchResult["git"] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	if c, g := benchResult["ctx"], benchResult["git"]; c > 0 && g > 0 {
		b.Logf("merge of 2 x %d changed entries in a %d-entry store: ctx %v/op, git merge %v/op, ctx/git = %.2f",
			benchChanged, benchEntries, time.Duration(c).Round(time.Microsecond), time.Duration(g).Round(time.Microsecond), c/g)
		fmt.Fprintf(os.Stderr, "MERGE-RATIO ctx_ns_op=%.0f git_ns_op=%.0f ratio=%.3f same_tree=%v\n", c, g, c/g, ctxTree == gitTree)
	}
	if ctxTree != "" && gitTree != "" && ctxTree != gitTree {
		testenv.Git(b, dir, "fetch", "-q", scratch, "HEAD:refs/bench/git")
		diff := testenv.Git(b, dir, "diff", "--stat", "refs/bench/git", "ctx")
		b.Logf("ctx's merged tree differs from git's:\n%s", diff)
	}
}

// BenchmarkMergeConflicts: 500 entries changed on the same line by both sides of a 2,000-entry store, each
// side in 50 commits of 10 entries: 500 conflict records, each naming the writers of both versions (the
// last commit that changed the path on each side, found by walking that side's first parents).
func BenchmarkMergeConflicts(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	const entries, clashes, perCommit = 2000, 500, 10
	dir := storetest.Repo(b)
	var in bytes.Buffer
	file := func(p, content string) {
		fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", p, len(content), content)
	}
	mark := 0
	commit := func(ref string, from int, msg string) int {
		mark++
		fmt.Fprintf(&in, "commit %s\nmark :%d\ncommitter Bench <bench@example.com> 1767225600 +0000\ndata %d\n%s\n", ref, mark, len(msg), msg)
		if from > 0 {
			fmt.Fprintf(&in, "from :%d\n", from)
		}
		return mark
	}
	base := commit("refs/heads/base", 0, "base")
	file("manifest.json", "{\n  \"version\": 1\n}\n")
	for i := 0; i < entries; i++ {
		file(fmt.Sprintf("knowledge/k%05d.md", i), benchEntry(i, "Title line.", "Fourth line."))
	}
	for _, side := range []string{"ctx", "theirs"} {
		from := base
		for c := 0; c < clashes/perCommit; c++ {
			from = commit("refs/heads/"+side, from, side+" edit\n\nCtx-Op: knowledge.set\nCtx-Machine: "+side+"\n")
			for i := c * perCommit; i < (c+1)*perCommit; i++ {
				file(fmt.Sprintf("knowledge/k%05d.md", i), benchEntry(i, "Title line by "+side+".", "Fourth line."))
			}
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
	oursH := gitstore.NewHash(testenv.Git(b, dir, "rev-parse", "ctx"))
	theirsH := gitstore.NewHash(testenv.Git(b, dir, "rev-parse", "theirs"))
	s, err := store.Open(bg, dir, store.Actor{Agent: "bench", Machine: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cur, err := s.GitRepo().Resolve(bg, s.BranchRef())
		if err != nil {
			b.Fatal(err)
		}
		if err := s.GitRepo().UpdateRef(bg, s.BranchRef(), cur, oursH, "bench: reset"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := s.MergeCommit(bg, theirsH, store.PullOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Conflicts) != clashes || res.Conflicts[0].KeptBy.Machine == "" || res.Conflicts[0].LostBy.Machine == "" {
			b.Fatalf("%d conflicts, first %+v", len(res.Conflicts), res.Conflicts[0].KeptBy)
		}
	}
}
