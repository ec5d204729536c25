package blame

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// benchRepo is a repository whose big.go has 2,000 lines changed by 300 commits (7 lines each after the
// first), the shape of the blame benchmark in docs/blame.md.
func benchRepo(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "repo")
	testenv.Git(b, "", "init", "-q", "-b", "main", dir)
	lines := make([]string, 2000)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tvalue%d := compute(%d) // first version", i, i)
	}
	for c := 0; c < 300; c++ {
		if c > 0 {
			for k := 0; k < 7; k++ {
				n := (c*37 + k*281) % len(lines)
				lines[n] = fmt.Sprintf("\tvalue%d := compute(%d) // changed by commit %d", n, n, c)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "big.go"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		testenv.Git(b, dir, "add", "big.go")
		testenv.Git(b, dir, "commit", "-q", "-m", fmt.Sprintf("commit %d", c))
	}
	return dir
}

// BenchmarkGitBlamePorcelain is the reference: C git's `git blame --porcelain` of the whole file.
func BenchmarkGitBlamePorcelain(b *testing.B) {
	dir := benchRepo(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "blame", "--porcelain", "HEAD", "--", "big.go")
		cmd.Dir = dir
		if _, err := cmd.Output(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBlameFile is ctx's blame of the same file: the git runs (top level, HEAD, status, blame,
// notes) and, for each of the 300 commits, the receipt and edit look-ups in an index holding the corpus's
// sessions (when the corpus is present).
func BenchmarkBlameFile(b *testing.B) {
	dir := benchRepo(b)
	ctx := context.Background()
	ix, err := history.Open(ctx, filepath.Join(b.TempDir(), "index"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if fi, err := os.Stat(c); c != "" && err == nil && fi.IsDir() {
			var srcs []history.Source
			for _, p := range history.Providers {
				s, _ := history.Discover(ctx, p, filepath.Join(c, string(p)), true)
				srcs = append(srcs, s...)
			}
			if _, err := ix.Import(ctx, srcs); err != nil {
				b.Fatal(err)
			}
			break
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bl, err := New(ctx, dir, ix)
		if err != nil {
			b.Fatal(err)
		}
		res, err := bl.File(ctx, "big.go", 1, 0)
		if err != nil || res.Coverage.Lines != 2000 || len(res.Commits) < 250 {
			b.Fatalf("%v: %d lines, %d commits", err, res.Coverage.Lines, len(res.Commits))
		}
	}
}
