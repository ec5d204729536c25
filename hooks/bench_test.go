package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchRepo is a repository with branches main and other that differ in a
// file, optionally with ctx's hooks installed.
func benchRepo(b *testing.B, install bool) string {
	b.Helper()
	repo := newRepo(b)
	gitIn(b, repo, "", "checkout", "-q", "-b", "other")
	writeFile(b, filepath.Join(repo, "o.txt"), "o\n", 0o644)
	gitIn(b, repo, "", "add", "o.txt")
	gitIn(b, repo, "", "commit", "-q", "-m", "o")
	gitIn(b, repo, "", "checkout", "-q", "main")
	if install {
		if _, err := Install(bg, repo, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	return repo
}

// checkout switches repo to branch.
func checkout(b *testing.B, env []string, repo, branch string) time.Duration {
	cmd := exec.Command("git", "-C", repo, "checkout", "-q", branch)
	cmd.Env = env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("checkout: %v %s", err, out)
	}
	return time.Since(start)
}

// BenchmarkPostCheckout: `git checkout` between two branches without the
// hook and with it (ctx missing, a ctx that does nothing, one that exits 1).
// Hooked runs also time, interleaved, the same checkouts in a repository
// without hooks (so machine load hits both alike) and report "x-no-hook":
// hooked time over unhooked time.
func BenchmarkPostCheckout(b *testing.B) {
	noop, _ := fakeCtx(b, "exit 0")
	fail, _ := fakeCtx(b, "exit 1")
	cases := []struct {
		name    string
		install bool
		pathEnv string
	}{
		{"no-hook", false, pathWithoutCtx()},
		{"hook/ctx-missing", true, pathWithoutCtx()},
		{"hook/ctx-noop", true, noop},
		{"hook/ctx-exit1", true, fail},
	}
	branches := [2]string{"other", "main"}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			env := append(os.Environ(), "PATH="+c.pathEnv)
			repo := benchRepo(b, c.install)
			base := benchRepo(b, false)
			var hooked, plain time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				hooked += checkout(b, env, repo, branches[i%2])
				if c.install {
					b.StopTimer()
					plain += checkout(b, env, base, branches[i%2])
					b.StartTimer()
				}
			}
			if c.install {
				b.ReportMetric(float64(hooked)/float64(plain), "x-no-hook")
			}
		})
	}
}
